package cloudsim

import (
	"net/http"
	"strconv"
	"strings"

	sccpb "cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// sccRoutes serves Security Command Center's REST surface (v1), for clients made with
// securitycenter.NewRESTClient: the same methods as over gRPC (scc.go), counted, faulted
// and authorized alike.
func (s *Sim) sccRoutes(mux *http.ServeMux) {
	s.sccRoutesUnder(mux, "organizations")
	s.sccRoutesUnder(mux, "projects") // a project's view (scc_project.go)
}

// sccRoutesUnder serves the SCC methods under /v1/KIND/{org}/sources, where KIND is
// organizations or projects; {org} is the organisation or project id.
func (s *Sim) sccRoutesUnder(mux *http.ServeMux, kind string) {
	src := "/v1/" + kind + "/{org}/sources"
	g := &securityCenter{s: s}
	mux.HandleFunc("POST "+src, func(w http.ResponseWriter, r *http.Request) {
		parent := kind + "/" + r.PathValue("org")
		s.serveREST(w, r, "securitycenter", "CreateSource", s.sccRESTScope(parent), func(*call) (any, error) {
			in := &sccpb.Source{}
			if err := readProto(r, in); err != nil {
				return nil, err
			}
			return g.CreateSource(r.Context(), &sccpb.CreateSourceRequest{Parent: parent, Source: in})
		})
	})
	mux.HandleFunc("GET "+src, func(w http.ResponseWriter, r *http.Request) {
		parent, q := kind+"/"+r.PathValue("org"), r.URL.Query()
		s.serveREST(w, r, "securitycenter", "ListSources", s.sccRESTScope(parent), func(*call) (any, error) {
			size, err := sccPageSize(q.Get("pageSize"))
			if err != nil {
				return nil, err
			}
			return g.ListSources(r.Context(), &sccpb.ListSourcesRequest{Parent: parent, PageSize: size, PageToken: q.Get("pageToken")})
		})
	})
	mux.HandleFunc("GET "+src+"/{src}", func(w http.ResponseWriter, r *http.Request) {
		org := kind + "/" + r.PathValue("org")
		s.serveREST(w, r, "securitycenter", "GetSource", s.sccRESTScope(org), func(*call) (any, error) {
			return g.GetSource(r.Context(), &sccpb.GetSourceRequest{Name: org + "/sources/" + r.PathValue("src")})
		})
	})
	mux.HandleFunc("POST "+src+"/{src}/findings", func(w http.ResponseWriter, r *http.Request) {
		org := kind + "/" + r.PathValue("org")
		s.serveREST(w, r, "securitycenter", "CreateFinding", s.sccRESTScope(org), func(*call) (any, error) {
			in := &sccpb.Finding{}
			if err := readProto(r, in); err != nil {
				return nil, err
			}
			return g.CreateFinding(r.Context(), &sccpb.CreateFindingRequest{Parent: org + "/sources/" + r.PathValue("src"),
				FindingId: r.URL.Query().Get("findingId"), Finding: in})
		})
	})
	mux.HandleFunc("GET "+src+"/{src}/findings", func(w http.ResponseWriter, r *http.Request) {
		org, q := kind+"/"+r.PathValue("org"), r.URL.Query()
		s.serveREST(w, r, "securitycenter", "ListFindings", s.sccRESTScope(org), func(*call) (any, error) {
			size, err := sccPageSize(q.Get("pageSize"))
			if err != nil {
				return nil, err
			}
			return g.ListFindings(r.Context(), &sccpb.ListFindingsRequest{Parent: org + "/sources/" + r.PathValue("src"),
				Filter: q.Get("filter"), OrderBy: q.Get("orderBy"), PageSize: size, PageToken: q.Get("pageToken")})
		})
	})
	mux.HandleFunc("PATCH "+src+"/{src}/findings/{id}", func(w http.ResponseWriter, r *http.Request) {
		org := kind + "/" + r.PathValue("org")
		s.serveREST(w, r, "securitycenter", "UpdateFinding", s.sccRESTScope(org), func(*call) (any, error) {
			in := &sccpb.Finding{}
			if err := readProto(r, in); err != nil {
				return nil, err
			}
			in.Name = org + "/sources/" + r.PathValue("src") + "/findings/" + r.PathValue("id")
			req := &sccpb.UpdateFindingRequest{Finding: in}
			if m := r.URL.Query().Get("updateMask"); m != "" {
				req.UpdateMask = &fieldmaskpb.FieldMask{}
				if err := protojson.Unmarshal([]byte(strconv.Quote(m)), req.UpdateMask); err != nil {
					return nil, errf(kindInvalid, "", "Invalid updateMask %q: %v.", m, err)
				}
			}
			return g.UpdateFinding(r.Context(), req)
		})
	})
	mux.HandleFunc("POST "+src+"/{src}/findings/{rest}", func(w http.ResponseWriter, r *http.Request) {
		org := kind + "/" + r.PathValue("org")
		id, verb, _ := strings.Cut(r.PathValue("rest"), ":")
		name := org + "/sources/" + r.PathValue("src") + "/findings/" + id
		switch verb {
		case "setState":
			s.serveREST(w, r, "securitycenter", "SetFindingState", s.sccRESTScope(org), func(*call) (any, error) {
				req := &sccpb.SetFindingStateRequest{}
				if err := readProto(r, req); err != nil {
					return nil, err
				}
				req.Name = name
				return g.SetFindingState(r.Context(), req)
			})
		case "setMute":
			s.serveREST(w, r, "securitycenter", "SetMute", s.sccRESTScope(org), func(*call) (any, error) {
				req := &sccpb.SetMuteRequest{}
				if err := readProto(r, req); err != nil {
					return nil, err
				}
				req.Name = name
				return g.SetMute(r.Context(), req)
			})
		default:
			writeGCPError(w, errf(kindNotFound, "notFound", "The requested URL %s was not found on this server.", r.URL.Path))
		}
	})
}

// sccPageSize reads a pageSize query parameter (empty: the default).
func sccPageSize(v string) (int32, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, errf(kindInvalid, "", "Invalid pageSize %q.", v)
	}
	return int32(n), nil
}

// sccRESTScope is the account a REST call is counted and authorized on: the organisation,
// or the project (by id).
func (s *Sim) sccRESTScope(parent string) string {
	if p := projectOf(parent); p != "" {
		return s.projectKey(p)
	}
	return parent
}
