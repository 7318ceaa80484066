package cloudsim

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// queryHandler answers one AWS Query action (IAM, STS, EC2). It runs under the simulator's
// lock and returns the action's result, marshalled as the children of <ActionResult>
// (IAM, STS) or of <ActionResponse> (EC2); nil means an empty result.
type queryHandler func(c *call, form url.Values) (any, error)

// jsonHandler answers one AWS JSON action (ACM, Organizations): body is the request
// document; the result is marshalled with encoding/json.
type jsonHandler func(c *call, body []byte) (any, error)

// XML namespaces of the Query services, as AWS answers them.
var queryNS = map[string]string{
	"iam": "https://iam.amazonaws.com/doc/2010-05-08/",
	"sts": "https://sts.amazonaws.com/doc/2011-06-15/",
	"ec2": "http://ec2.amazonaws.com/doc/2016-11-15/",
}

// jsonTargets are the X-Amz-Target prefixes of the JSON services.
var jsonTargets = map[string]string{
	"acm":           "CertificateManager.",
	"organizations": "AWSOrganizationsV20161128.",
}

// sigv4 reads the access key id, region and service of a SigV4 Authorization header:
// "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/iam/aws4_request, …". Signatures
// are not checked: any key and secret are accepted.
func sigv4(h string) (akid, region, service string, ok bool) {
	i := strings.Index(h, "Credential=")
	if i < 0 {
		return "", "", "", false
	}
	cred := h[i+len("Credential="):]
	if j := strings.IndexAny(cred, ", "); j >= 0 {
		cred = cred[:j]
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 {
		return "", "", "", false
	}
	return parts[0], parts[2], parts[3], true
}

func (s *Sim) serveAWS(w http.ResponseWriter, r *http.Request) {
	akid, region, service, ok := sigv4(r.Header.Get("Authorization"))
	if !ok {
		http.Error(w, "malformed Authorization header", http.StatusBadRequest)
		return
	}
	c := &call{ctx: r.Context(), Service: service, Region: region}
	body, err := readBody(r)
	if err != nil {
		s.mu.Lock()
		c.ReqID = fmt.Sprintf("%08x-sim0-4000-8000-%012x", s.nextID(), 0)
		s.mu.Unlock()
		var e *apiError // nil: too large, answered with the service's own code
		if !errors.Is(err, errBodyTooLarge) {
			e = errf(kindInvalid, "IncompleteBody", "%v", err)
		}
		s.writeAWSError(w, c, e)
		return
	}
	s.mu.Lock()
	c.ReqID = fmt.Sprintf("%08x-sim0-4000-8000-%012x", s.nextID(), len(body))
	c.Account, c.Principal = s.callerOf(akid)
	s.mu.Unlock()
	if service == "iam" || service == "sts" {
		c.Region = "global"
	}
	if handlers, ok := s.query[service]; ok {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			s.writeQueryError(w, c, errf(kindInvalid, "MalformedQueryString", "%v", err))
			return
		}
		for k, v := range r.URL.Query() {
			form[k] = v
		}
		c.Action = form.Get("Action")
		h := handlers[c.Action]
		if h == nil {
			s.writeQueryError(w, c, errf(kindInvalid, "InvalidAction", "Could not find operation %s for version %s", c.Action, form.Get("Version")))
			return
		}
		if e := s.admit(r.Context(), c); e != nil {
			s.writeQueryError(w, c, e)
			return
		}
		s.mu.Lock()
		res, err := h(c, form)
		s.mu.Unlock()
		if err != nil {
			s.writeQueryError(w, c, asAPIError(err))
			return
		}
		s.writeQueryResult(w, c, res)
		return
	}
	if handlers, ok := s.jsonx[service]; ok {
		c.Action = strings.TrimPrefix(r.Header.Get("X-Amz-Target"), jsonTargets[service])
		h := handlers[c.Action]
		if h == nil {
			s.writeJSONError(w, c, errf(kindInvalid, "UnknownOperationException", "unknown operation %q", r.Header.Get("X-Amz-Target")))
			return
		}
		if e := s.admit(r.Context(), c); e != nil {
			s.writeJSONError(w, c, e)
			return
		}
		s.mu.Lock()
		res, err := h(c, body)
		s.mu.Unlock()
		if err != nil {
			s.writeJSONError(w, c, asAPIError(err))
			return
		}
		if res == nil {
			res = struct{}{}
		}
		b, err := json.Marshal(res)
		if err != nil {
			s.writeJSONError(w, c, errf(kindInternal, "InternalFailure", "encode: %v", err))
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Requestid", c.ReqID)
		_, _ = w.Write(b)
		return
	}
	http.Error(w, fmt.Sprintf("the simulator does not serve AWS service %q", service), http.StatusNotImplemented)
}

// callerOf names the account and principal behind an access key id: a session the
// simulator issued, a world user's key, or else the world's caller account's root.
func (s *Sim) callerOf(akid string) (account, principal string) {
	if se, ok := s.sessions[akid]; ok {
		return se.Account, se.ARN
	}
	for _, a := range s.world.AWS.Accounts {
		for _, u := range a.Users {
			for _, k := range u.AccessKeys {
				if k.ID == akid {
					return a.ID, userARN(a.ID, u)
				}
			}
		}
	}
	acct := s.callerAccount()
	if acct == "" {
		acct = "123456789012"
	}
	return acct, "arn:aws:iam::" + acct + ":root"
}

// callerAccount is the account of credentials the simulator did not issue.
func (s *Sim) callerAccount() string {
	w := s.world.AWS
	switch {
	case w.Caller != "":
		return w.Caller
	case w.Organization != nil:
		return w.Organization.Management
	case len(w.Accounts) > 0:
		return w.Accounts[0].ID
	}
	return ""
}

// account returns the call's account; an empty simulator creates it on first use, so that
// `warden sim` with no world still answers as an empty account.
func (s *Sim) account(c *call) (*Account, error) {
	for _, a := range s.world.AWS.Accounts {
		if a.ID == c.Account {
			return a, nil
		}
	}
	if len(s.world.AWS.Accounts) == 0 {
		a := &Account{ID: c.Account}
		s.world.AWS.Accounts = append(s.world.AWS.Accounts, a)
		if err := s.prepareAccount(a); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, errf(kindDenied, "", "account %s is not in the simulated world", c.Account)
}

func asAPIError(err error) *apiError {
	if e, ok := err.(*apiError); ok {
		return e
	}
	return &apiError{Kind: kindInternal, Message: err.Error()}
}

func (s *Sim) writeQueryResult(w http.ResponseWriter, c *call, res any) {
	var inner []byte
	if res != nil {
		b, err := xml.Marshal(struct {
			XMLName xml.Name
			V       any
		}{XMLName: xml.Name{Local: "x"}, V: res})
		if err != nil {
			s.writeQueryError(w, c, errf(kindInternal, "InternalFailure", "encode: %v", err))
			return
		}
		// Drop the wrapper element and the one named after the result's type.
		inner = innerXML(innerXML(b))
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	fmt.Fprintf(&buf, `<%sResponse xmlns="%s">`, c.Action, queryNS[c.Service])
	if c.Service == "ec2" {
		fmt.Fprintf(&buf, "<requestId>%s</requestId>", c.ReqID)
		buf.Write(inner)
	} else {
		if res != nil {
			fmt.Fprintf(&buf, "<%sResult>", c.Action)
			buf.Write(inner)
			fmt.Fprintf(&buf, "</%sResult>", c.Action)
		}
		fmt.Fprintf(&buf, "<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata>", c.ReqID)
	}
	fmt.Fprintf(&buf, "</%sResponse>", c.Action)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	_, _ = w.Write(buf.Bytes())
}

// innerXML strips the outermost element of b.
func innerXML(b []byte) []byte {
	i := bytes.IndexByte(b, '>')
	j := bytes.LastIndexByte(b, '<')
	if i < 0 || j <= i {
		return nil
	}
	return b[i+1 : j]
}

// awsCode names an error the way the service does.
func awsCode(service string, e *apiError) (code string, status int) {
	switch e.Kind {
	case kindThrottle:
		switch service {
		case "ec2":
			return "RequestLimitExceeded", 503
		case "acm":
			return "ThrottlingException", 400
		case "organizations":
			return "TooManyRequestsException", 400
		}
		return "Throttling", 400
	case kindDenied:
		switch service {
		case "ec2":
			return "UnauthorizedOperation", 403
		case "acm", "organizations":
			return "AccessDeniedException", 400
		}
		return "AccessDenied", 403
	case kindUnavailable:
		switch service {
		case "ec2":
			return "Unavailable", 503
		case "acm", "organizations":
			return "ServiceUnavailableException", 503
		}
		return "ServiceUnavailable", 503
	case kindNotFound:
		return or(e.Code, "NoSuchEntity"), 404
	case kindConflict:
		return or(e.Code, "EntityAlreadyExists"), 409
	case kindLimit:
		return or(e.Code, "LimitExceeded"), 409
	case kindInternal:
		return or(e.Code, "InternalFailure"), 500
	}
	return or(e.Code, "ValidationError"), 400
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Sim) writeQueryError(w http.ResponseWriter, c *call, e *apiError) {
	code, status := awsCode(c.Service, e)
	if e.Code != "" && e.Kind != kindThrottle && e.Kind != kindUnavailable {
		code = e.Code
	}
	if c.Service == "ec2" && status == 404 {
		status = 400 // EC2 answers its NotFound codes with 400
	}
	if e.Status != 0 {
		status = e.Status
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if c.Service == "ec2" {
		fmt.Fprintf(&buf, "<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>%s</RequestID></Response>",
			esc(code), esc(e.Message), c.ReqID)
	} else {
		typ := "Sender"
		if status >= 500 {
			typ = "Receiver"
		}
		fmt.Fprintf(&buf, `<ErrorResponse xmlns="%s"><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>`,
			queryNS[c.Service], typ, esc(code), esc(e.Message), c.ReqID)
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (s *Sim) writeJSONError(w http.ResponseWriter, c *call, e *apiError) {
	code, status := awsCode(c.Service, e)
	if e.Code != "" && e.Kind != kindThrottle && e.Kind != kindUnavailable && e.Kind != kindDenied {
		code = e.Code
	}
	if status == 404 || status == 409 {
		status = 400 // the JSON services answer client errors with 400
	}
	if e.Status != 0 {
		status = e.Status
	}
	b, _ := json.Marshal(map[string]string{"__type": code, "message": e.Message})
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// decodeJSON reads a JSON request body into v, as a validation error if it is malformed.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errf(kindInvalid, "ValidationException", "malformed request: %v", err)
	}
	return nil
}
