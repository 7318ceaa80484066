package cloudsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
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
	"acm":            "CertificateManager.",
	"organizations":  "AWSOrganizationsV20161128.",
	"secretsmanager": "secretsmanager.",
}

// sigv4 reads the access key id, region and service of a SigV4 Authorization header:
// "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/iam/aws4_request, …".
func sigv4(h string) (akid, region, service string, ok bool) {
	a, ok := parseSigV4(h)
	return a.AKID, a.Region, a.Service, ok
}

func (s *Sim) serveAWS(w http.ResponseWriter, r *http.Request) {
	auth, ok := parseSigV4(r.Header.Get("Authorization"))
	if !ok {
		http.Error(w, "malformed Authorization header", http.StatusBadRequest)
		return
	}
	region, service := auth.Region, auth.Service
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
	s.identify(c, r, body, auth)
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
		var res any
		var inner []byte
		var key string
		var global, version uint64
		cacheable := s.cacheable(c)
		if e := s.authorize(c, s.queryResource(c, form)); e != nil {
			err = e
		} else {
			if cacheable {
				key = answerKey(c, form)
				inner, _ = s.answers.get(c.Account, key)
				global, version = s.answers.global, s.answers.versions[c.Account]
			}
			if inner == nil {
				res, err = h(c, form)
			}
			if err == nil {
				s.recordAccess(c)
			}
			if !cacheable {
				s.afterCall(c, form)
			}
		}
		s.mu.Unlock()
		s.delayAnswer(r.Context(), c)
		if err != nil {
			s.writeQueryError(w, c, asAPIError(err))
			return
		}
		if inner == nil {
			if inner, err = queryInner(res); err != nil {
				s.writeQueryError(w, c, errf(kindInternal, "InternalFailure", "encode: %v", err))
				return
			}
			if cacheable && inner != nil {
				s.mu.Lock()
				s.answers.put(c.Account, key, global, version, inner)
				s.mu.Unlock()
			}
		}
		s.writeQueryAnswer(w, c, inner, res != nil || inner != nil)
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
		var res any
		var err error
		if e := s.authorize(c, s.jsonResource(c, body)); e != nil {
			err = e
		} else if res, err = h(c, body); err == nil {
			s.recordAccess(c)
		}
		s.mu.Unlock()
		s.delayAnswer(r.Context(), c)
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
	if service == "access-analyzer" { // REST-JSON: routed by method and path
		s.serveAccessAnalyzer(w, r, c, body)
		return
	}
	if service == "securityhub" { // REST-JSON (securityhub.go)
		s.serveSecurityHub(w, r, c, body)
		return
	}
	http.Error(w, fmt.Sprintf("the simulator does not serve AWS service %q", service), http.StatusNotImplemented)
}

// identify names the account and principal behind a request's access key id — a session
// the simulator issued, a world user's key, or else the world's caller account's root —
// and authenticates it (see authenticate), filling in c's Account, Principal, authErr,
// and usedBy and signRegion for recordAccess. s.mu is held.
func (s *Sim) identify(c *call, r *http.Request, body []byte, auth sigv4Auth) {
	c.signRegion, c.akid = auth.Region, auth.AKID
	if se, ok := s.sessions[auth.AKID]; ok {
		if se.role != nil && s.gen.owns(se.Account) {
			// A generated account may have been dropped and built again since the session
			// began: act as the role the account holds now.
			if a := s.lookupAccount(se.Account); a != nil {
				se.role = findRole(a, se.role.Name)
				s.sessions[auth.AKID] = se
			}
		}
		c.Account, c.Principal, c.authErr = se.Account, se.ARN, s.authenticate(r, body, auth, se.Secret, nil)
		if se.role != nil {
			c.usedBy = &se.role.LastAccessed
		}
		return
	}
	if a, u, k := s.keyOf(auth.AKID); k != nil {
		c.Account, c.Principal, c.authErr = a.ID, userARN(a.ID, u), s.authenticate(r, body, auth, k.Secret, k)
		c.usedBy = &u.LastAccessed
		return
	}
	c.Account, c.Principal = s.unknownCaller()
	if s.deletedKeys[auth.AKID] {
		c.authErr = s.authError(auth.Service, false)
	}
}

// unknownCaller is who credentials the simulator does not know act as: the root user of
// the world's caller account.
func (s *Sim) unknownCaller() (account, principal string) {
	acct := s.callerAccount()
	if acct == "" {
		acct = "123456789012"
	}
	return acct, "arn:aws:iam::" + acct + ":root"
}

// keyOf finds a world user's access key by id.
func (s *Sim) keyOf(akid string) (*Account, *User, *AccessKey) {
	for _, a := range s.world.AWS.Accounts {
		for _, u := range a.Users {
			for _, k := range u.AccessKeys {
				if k.ID == akid {
					return a, u, k
				}
			}
		}
	}
	return nil, nil, nil
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

// account returns the call's account, building a generated one if need be; an empty
// simulator creates it on first use, so that `warden sim` with no world still answers as
// an empty account.
func (s *Sim) account(c *call) (*Account, error) {
	if a := s.lookupAccount(c.Account); a != nil {
		return a, nil
	}
	if len(s.world.AWS.Accounts) == 0 && s.gen == nil {
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

// queryInner encodes a query action's result as the children of its result element; nil
// for no result.
func queryInner(res any) ([]byte, error) {
	if res == nil {
		return nil, nil
	}
	b, err := xml.Marshal(struct {
		XMLName xml.Name
		V       any
	}{XMLName: xml.Name{Local: "x"}, V: res})
	if err != nil {
		return nil, err
	}
	// Drop the wrapper element and the one named after the result's type.
	return innerXML(innerXML(b)), nil
}

// writeQueryAnswer writes a query action's answer around inner, its result encoded
// (hasResult: even if empty).
func (s *Sim) writeQueryAnswer(w http.ResponseWriter, c *call, inner []byte, hasResult bool) {
	// The answer is written in three parts around inner, which is often a cached answer
	// of megabytes: copying it into one buffer first cleared and copied every byte of it
	// once more (a fifth of the simulator's CPU in an unchanged sweep). Content-Length is
	// set, as AWS does, so that the answer is not chunked either.
	var head, tail []byte
	head = append(head, xml.Header...)
	head = fmt.Appendf(head, `<%sResponse xmlns="%s">`, c.Action, queryNS[c.Service])
	if c.Service == "ec2" {
		head = fmt.Appendf(head, "<requestId>%s</requestId>", c.ReqID)
	} else {
		if hasResult {
			head = fmt.Appendf(head, "<%sResult>", c.Action)
			tail = fmt.Appendf(tail, "</%sResult>", c.Action)
		}
		tail = fmt.Appendf(tail, "<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata>", c.ReqID)
	}
	tail = fmt.Appendf(tail, "</%sResponse>", c.Action)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("X-Amzn-Requestid", c.ReqID)
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(inner)+len(tail)))
	for _, part := range [][]byte{head, inner, tail} {
		if _, err := w.Write(part); err != nil {
			return // the client went away
		}
	}
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
		case "acm", "secretsmanager":
			return "ThrottlingException", 400
		case "access-analyzer":
			return "ThrottlingException", 429
		case "organizations":
			return "TooManyRequestsException", 400
		}
		return "Throttling", 400
	case kindDenied:
		switch service {
		case "ec2":
			return "UnauthorizedOperation", 403
		case "acm", "organizations", "secretsmanager":
			return "AccessDeniedException", 400
		case "access-analyzer":
			return "AccessDeniedException", 403
		}
		return "AccessDenied", 403
	case kindUnavailable:
		switch service {
		case "ec2":
			return "Unavailable", 503
		case "acm", "organizations":
			return "ServiceUnavailableException", 503
		case "secretsmanager":
			return "InternalServiceError", 500
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

// Authentication. The simulator cannot know the secret of a key it never saw, so any
// unknown access key id is accepted with any secret (tests and demos rely on it). A key it
// does know is held to AWS's rules: a world user's key that is Inactive, or one deleted
// through DeleteAccessKey, is refused; a key whose secret it knows (CreateAccessKey and
// AssumeRole issue them, a world file may give them) must sign with that secret.

// sigv4Auth is a parsed SigV4 Authorization header.
type sigv4Auth struct {
	AKID, Date, Region, Service string
	SignedHeaders               []string
	Signature                   string
}

// parseSigV4 reads "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/iam/aws4_request,
// SignedHeaders=host;x-amz-date, Signature=…"; ok needs at least the credential scope.
func parseSigV4(h string) (a sigv4Auth, ok bool) {
	rest, found := strings.CutPrefix(h, "AWS4-HMAC-SHA256")
	if !found {
		return a, false
	}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			p := strings.Split(v, "/")
			if len(p) != 5 {
				return a, false
			}
			a.AKID, a.Date, a.Region, a.Service = p[0], p[1], p[2], p[3]
			ok = true
		case "SignedHeaders":
			a.SignedHeaders = strings.Split(v, ";")
		case "Signature":
			a.Signature = v
		}
	}
	return a, ok
}

// authenticate checks a known key (see above): a world user's key k must be Active, and
// the request must be signed with secret when it is known. A user's key that passes
// records its last use, as IAM does. A non-nil answer refuses the call. s.mu is held.
func (s *Sim) authenticate(r *http.Request, body []byte, auth sigv4Auth, secret string, k *AccessKey) *apiError {
	if k != nil && k.Status == "Inactive" {
		return s.authError(auth.Service, false)
	}
	if secret != "" && !signatureOK(r, body, auth, s.signingKey(secret, auth)) {
		return s.authError(auth.Service, true)
	}
	if k != nil {
		now := s.stamp()
		k.LastUsed, k.LastUsedService, k.LastUsedRegion = &now, auth.Service, auth.Region
	}
	return nil
}

// authError is the service's answer to an invalid access key id, or (badSignature) to a
// signature made with another secret.
func (s *Sim) authError(service string, badSignature bool) *apiError {
	const (
		invalid  = "The security token included in the request is invalid."
		mismatch = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
	)
	e := &apiError{Kind: kindInvalid, Code: "InvalidClientTokenId", Status: http.StatusForbidden, Message: invalid}
	_, json := s.jsonx[service]
	switch {
	case service == "ec2":
		e.Code, e.Status, e.Message = "AuthFailure", http.StatusUnauthorized, "AWS was not able to validate the provided access credentials"
	case json && badSignature:
		e.Code, e.Status, e.Message = "InvalidSignatureException", http.StatusBadRequest, mismatch
	case json:
		e.Code, e.Status = "UnrecognizedClientException", http.StatusBadRequest
	case badSignature:
		e.Code, e.Message = "SignatureDoesNotMatch", mismatch
	}
	return e
}

// signingKey is SigV4's key derived from secret for the request's day, region and
// service. AWS derives it once a day; the simulator kept deriving it at every call, four
// HMACs each. s.mu is held.
func (s *Sim) signingKey(secret string, auth sigv4Auth) []byte {
	id := secret + "\x00" + auth.Date + "/" + auth.Region + "/" + auth.Service
	if k, ok := s.signingKeys[id]; ok {
		return k
	}
	key := []byte("AWS4" + secret)
	for _, p := range []string{auth.Date, auth.Region, auth.Service, "aws4_request"} {
		key = hmacSHA256(key, p)
	}
	if s.signingKeys == nil || len(s.signingKeys) >= 4096 {
		s.signingKeys = map[string][]byte{} // one-off keys do not accumulate
	}
	s.signingKeys[id] = key
	return key
}

// signatureOK recomputes the request's SigV4 signature with the signing key derived from
// the secret (signingKey), over the headers the client says it signed, and compares it in
// constant time.
func signatureOK(r *http.Request, body []byte, auth sigv4Auth, key []byte) bool {
	amzDate := r.Header.Get("X-Amz-Date")
	if auth.Signature == "" || len(auth.SignedHeaders) == 0 || !strings.HasPrefix(amzDate, auth.Date) {
		return false
	}
	payload := sha256Hex(body)
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" {
		// A streamed (aws-chunked) body is signed by the literal that names its framing.
		if h != payload && h != "UNSIGNED-PAYLOAD" && !strings.HasPrefix(h, "STREAMING-") {
			return false
		}
		payload = h
	}
	var cr strings.Builder
	cr.WriteString(r.Method + "\n")
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	if auth.Service != "s3" {
		path = sigv4Escape(path, false) // S3 alone signs its path as sent, not encoded twice
	}
	cr.WriteString(path + "\n")
	cr.WriteString(sigv4Query(r.URL.Query()) + "\n")
	for _, name := range auth.SignedHeaders {
		var v string
		switch name {
		case "host":
			v = r.Host
		case "content-length":
			v = r.Header.Get("Content-Length")
			if v == "" && r.ContentLength >= 0 {
				v = strconv.FormatInt(r.ContentLength, 10)
			}
		default:
			vals := r.Header.Values(name)
			for i, x := range vals {
				vals[i] = strings.Join(strings.Fields(x), " ")
			}
			v = strings.Join(vals, ",")
		}
		cr.WriteString(name + ":" + v + "\n")
	}
	cr.WriteString("\n" + strings.Join(auth.SignedHeaders, ";") + "\n" + payload)
	scope := auth.Date + "/" + auth.Region + "/" + auth.Service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + sha256Hex([]byte(cr.String()))
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	return hmac.Equal([]byte(want), []byte(auth.Signature))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// sigv4Escape is SigV4's URI encoding: every byte but the unreserved characters (and '/'
// when slash is false) percent-encoded in upper case.
func sigv4Escape(s string, slash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !slash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sigv4Query is the canonical query string: keys and values encoded, sorted.
func sigv4Query(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, sigv4Escape(k, true)+"="+sigv4Escape(v, true))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}
