package cloudsim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func (s *Sim) serveGCP(w http.ResponseWriter, r *http.Request) {
	s.rest.ServeHTTP(w, r)
}

// serveREST runs one GCP REST call: faults and counting, then h under the simulator's
// lock, then the JSON answer (protojson for proto messages, as Google's servers write it).
func (s *Sim) serveREST(w http.ResponseWriter, r *http.Request, service, action, project string, h func(c *call) (any, error)) {
	c := &call{ctx: r.Context(), Service: service, Action: action, Account: project, Region: "global", Principal: "user:sim@example.com"}
	// A "Bearer sim:MEMBER" token names the member calling (gcp_enforce.go); none: the operator.
	member := gcpCaller(r.Header.Get("Authorization"))
	if member != "" {
		c.Principal = member
	}
	// The body is read before the call is admitted, so that an oversized one is refused
	// without being counted, rate-limited or run (the handler reads the buffered copy).
	if r.Body != nil && r.Body != http.NoBody {
		b, err := readBody(r)
		if err != nil {
			writeGCPError(w, bodyError(err, "requestTooLarge", "invalid"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	if e := s.admit(r.Context(), c); e != nil {
		writeGCPError(w, e)
		return
	}
	s.mu.Lock()
	var res any
	detail := r.PathValue("type") // the Policy Analyzer's activity type: its permission
	err := s.authorizeGCP(member, c, detail)
	if err == nil {
		if res, err = h(c); err == nil {
			s.recordGCPUse(member, c, detail)
		}
	}
	s.mu.Unlock()
	s.delayAnswer(r.Context(), c)
	if err != nil {
		writeGCPError(w, asAPIError(err))
		return
	}
	var b []byte
	if m, ok := res.(proto.Message); ok {
		b, err = protojson.MarshalOptions{UseProtoNames: false}.Marshal(m)
	} else {
		b, err = json.Marshal(res)
	}
	if err != nil {
		writeGCPError(w, errf(kindInternal, "", "encode: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

// gcpStatus maps an error kind to Google's HTTP status and canonical code.
func gcpStatus(k errKind) (int, string, codes.Code) {
	switch k {
	case kindNotFound:
		return 404, "NOT_FOUND", codes.NotFound
	case kindConflict:
		return 409, "ALREADY_EXISTS", codes.AlreadyExists
	case kindLimit, kindThrottle:
		return 429, "RESOURCE_EXHAUSTED", codes.ResourceExhausted
	case kindDenied:
		return 403, "PERMISSION_DENIED", codes.PermissionDenied
	case kindUnavailable:
		return 503, "UNAVAILABLE", codes.Unavailable
	case kindInternal:
		return 500, "INTERNAL", codes.Internal
	}
	return 400, "INVALID_ARGUMENT", codes.InvalidArgument
}

// gcpReasons are the errors[].reason Google's REST APIs give for each status.
var gcpReasons = map[string]string{
	"NOT_FOUND": "notFound", "ALREADY_EXISTS": "alreadyExists", "RESOURCE_EXHAUSTED": "rateLimitExceeded",
	"PERMISSION_DENIED": "forbidden", "UNAVAILABLE": "backendError", "INTERNAL": "backendError",
	"INVALID_ARGUMENT": "invalid", "ABORTED": "conditionNotMet",
}

func writeGCPError(w http.ResponseWriter, e *apiError) {
	code, st, _ := gcpStatus(e.Kind)
	if e.Code == "conditionNotMet" || e.Code == "ABORTED" {
		code, st = 409, "ABORTED"
	}
	if e.Status != 0 {
		code = e.Status
	}
	reason := e.Code
	if reason == "" {
		reason = gcpReasons[st]
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "message": e.Message, "status": st,
		"errors": []map[string]string{{"message": e.Message, "domain": "global", "reason": reason}},
	}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// grpcInterceptor applies faults and counting to gRPC calls and runs them under the
// simulator's lock.
func (s *Sim) grpcInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	method := info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:]
	service := "iamadmin"
	switch {
	case strings.HasPrefix(info.FullMethod, "/google.cloud.recommender."):
		service = "recommender"
	case strings.HasPrefix(info.FullMethod, "/google.cloud.securitycenter."):
		service = "securitycenter"
	}
	c := &call{ctx: ctx, Service: service, Action: method, Region: "global", Principal: "user:sim@example.com"}
	var member string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for _, v := range md.Get("authorization") {
			if member = gcpCaller(v); member != "" {
				c.Principal = member
				break
			}
		}
	}
	name := ""
	if n, ok := req.(interface{ GetName() string }); ok {
		name = n.GetName()
		c.Account = projectOf(n.GetName())
	} else if n, ok := req.(interface{ GetResource() string }); ok {
		c.Account = projectOf(n.GetResource())
	} else if n, ok := req.(interface{ GetParent() string }); ok {
		c.Account = projectOf(n.GetParent())
	}
	if service == "securitycenter" {
		// The organisation or project the call acts in: its IAM policy and faults apply.
		if c.Account = sccScope(req); c.Account != "" && !strings.HasPrefix(c.Account, "organizations/") {
			c.Account = s.projectKey(c.Account)
		}
	}
	if service == "recommender" {
		// Recommender names carry the project number: faults and counts go by project id.
		c.Account = s.projectKey(c.Account)
	}
	if e := s.admit(ctx, c); e != nil {
		return nil, grpcError(e)
	}
	s.mu.Lock()
	if c.Account == "-" && service == "iamadmin" {
		c.Account = s.gcpServiceAccountProject(name) // projects/-: the account's own project
	}
	var res any
	err := s.authorizeGCP(member, c, "")
	if err == nil {
		if res, err = handler(context.WithValue(ctx, callKey{}, c), req); err == nil {
			s.recordGCPUse(member, c, "")
		}
	}
	s.mu.Unlock()
	s.delayAnswer(ctx, c)
	if err != nil {
		if _, ok := status.FromError(err); ok && !isAPIError(err) {
			return nil, err
		}
		return nil, grpcError(asAPIError(err))
	}
	return res, nil
}

type callKey struct{}

func isAPIError(err error) bool { _, ok := err.(*apiError); return ok }

func grpcError(e *apiError) error {
	_, _, code := gcpStatus(e.Kind)
	return status.Error(code, e.Message)
}

// projectOf reads the project id out of a resource name: "projects/P/…" → P.
func projectOf(name string) string {
	rest, ok := strings.CutPrefix(name, "projects/")
	if !ok {
		return ""
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
