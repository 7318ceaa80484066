package cloudsim

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Amazon S3 speaks REST-XML: the operation is the method, the path and the query, the
// answer an XML document or the object's bytes. The simulator serves the path-style
// addressing (/bucket/key) that SDK clients use against a custom endpoint with
// UsePathStyle; a virtual-hosted name (bucket.host) cannot resolve to a loopback port.
// Buckets live in the world (aws.s3.buckets) with their owner and region; a request from
// another account is denied unless the bucket is shared with it, and one signed for another
// region is refused the way S3 refuses it, so that a client configured with the wrong
// region fails here as it would against AWS.

// s3NS is the namespace of S3's XML documents.
const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// S3 is the simulated Amazon S3.
type S3 struct {
	Buckets []*Bucket `yaml:"buckets,omitempty"`
}

// Bucket is an S3 bucket. Its name is global; it belongs to one account, in one region.
type Bucket struct {
	Name    string `yaml:"name"`
	Account string `yaml:"account"`
	// Region defaults to us-east-1.
	Region string `yaml:"region,omitempty"`
	// SharedWith are the other accounts allowed to use the bucket, as a bucket policy
	// granting them s3:* would; every other account is denied (AccessDenied).
	SharedWith []string  `yaml:"shared_with,omitempty"`
	Created    time.Time `yaml:"created,omitempty"`
	// Objects are the bucket's objects by key.
	Objects map[string]*Object `yaml:"objects,omitempty"`
}

// Object is an object's bytes and what S3 keeps with them.
type Object struct {
	Body        string            `yaml:"body"`
	ContentType string            `yaml:"content_type,omitempty"`
	ETag        string            `yaml:"etag,omitempty"` // the MD5 of the body, hex, quoted
	Modified    time.Time         `yaml:"modified,omitempty"`
	Metadata    map[string]string `yaml:"metadata,omitempty"` // x-amz-meta-*, lower-case names
	// Checksums are the ones the writer sent or asked for, by algorithm (CRC32, CRC32C,
	// CRC64NVME, SHA1, SHA256), base64.
	Checksums map[string]string `yaml:"checksums,omitempty"`
}

// region is the bucket's region, us-east-1 when the world leaves it out.
func (b *Bucket) region() string { return or(b.Region, "us-east-1") }

// s3Error is an error answered in S3's shape: <Error><Code/><Message/>…</Error>, with the
// elements the code carries (BucketName, Key, Region).
type s3Error struct {
	Status  int
	Code    string
	Message string
	Fields  []s3Field
	// Header is set on the answer too (x-amz-bucket-region on a wrong-region request).
	Header map[string]string
}

// s3Field is one extra element of an error document.
type s3Field struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

func (e *s3Error) Error() string { return e.Code + ": " + e.Message }

func s3Err(status int, code, msg string, fields ...string) *s3Error {
	e := &s3Error{Status: status, Code: code, Message: msg}
	for i := 0; i+1 < len(fields); i += 2 {
		e.Fields = append(e.Fields, s3Field{XMLName: xml.Name{Local: fields[i]}, Value: fields[i+1]})
	}
	return e
}

func noSuchBucket(name string) *s3Error {
	return s3Err(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", "BucketName", name)
}

func s3Denied() *s3Error { return s3Err(http.StatusForbidden, "AccessDenied", "Access Denied") }

func s3NotImplemented(what string) *s3Error {
	return s3Err(http.StatusNotImplemented, "NotImplemented",
		"A header or query you provided implies functionality that is not implemented: "+what+" (the simulator serves CreateBucket, HeadBucket, ListBuckets, ListObjectsV2, PutObject, GetObject, HeadObject and DeleteObject)")
}

// s3FromAPI renders an answer of the shared machinery (faults, authentication, the account
// lookup) in S3's words.
func s3FromAPI(e *apiError) *s3Error {
	switch e.Kind {
	case kindThrottle:
		return s3Err(http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
	case kindDenied:
		return s3Err(http.StatusForbidden, "AccessDenied", or(e.Message, "Access Denied"))
	case kindUnavailable:
		return s3Err(http.StatusServiceUnavailable, "ServiceUnavailable", e.Message)
	case kindInternal:
		return s3Err(http.StatusInternalServerError, "InternalError", e.Message)
	}
	switch e.Code {
	case "InvalidClientTokenId":
		return s3Err(http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
	case "SignatureDoesNotMatch":
		return s3Err(http.StatusForbidden, e.Code, e.Message)
	}
	return s3Err(cmp.Or(e.Status, http.StatusBadRequest), or(e.Code, "InvalidRequest"), e.Message)
}

// s3Op is what a request asks: an operation, on a bucket, on a key.
type s3Op struct {
	Action      string
	Bucket, Key string
}

// listParams are the query parameters of ListObjectsV2.
var listParams = []string{"list-type", "prefix", "delimiter", "max-keys", "continuation-token", "start-after", "encoding-type", "fetch-owner", "x-id"}

// s3Route names the operation of a path-style request.
func s3Route(r *http.Request) (s3Op, *s3Error) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	op := s3Op{Bucket: bucket, Key: key}
	q := r.URL.Query()
	for p := range q {
		if p == "x-id" || (key == "" && r.Method == http.MethodGet && slices.Contains(listParams, p)) {
			continue
		}
		return op, s3NotImplemented("?" + p)
	}
	m := r.Method
	switch {
	case bucket == "" && m == http.MethodGet:
		op.Action = "ListBuckets"
	case bucket == "":
		return op, s3Err(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
	case key == "" && m == http.MethodPut:
		op.Action = "CreateBucket"
	case key == "" && m == http.MethodHead:
		op.Action = "HeadBucket"
	case key == "" && m == http.MethodGet && q.Get("list-type") == "2":
		op.Action = "ListObjectsV2"
	case key == "" && m == http.MethodGet:
		return op, s3NotImplemented("ListObjects (version 1; send list-type=2)")
	case key == "":
		return op, s3NotImplemented(m + " on a bucket")
	case m == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		return op, s3NotImplemented("x-amz-copy-source (CopyObject)")
	case m == http.MethodPut:
		op.Action = "PutObject"
	case m == http.MethodGet:
		op.Action = "GetObject"
	case m == http.MethodHead:
		op.Action = "HeadObject"
	case m == http.MethodDelete:
		op.Action = "DeleteObject"
	default:
		return op, s3Err(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
	}
	return op, nil
}

// isS3Request tells an S3 call by the service its signature is scoped to.
func isS3Request(r *http.Request) bool {
	_, _, service, ok := sigv4(r.Header.Get("Authorization"))
	return ok && service == "s3"
}

// s3Answer is a successful answer: a status (default 200), headers, and a body (an XML
// document when Doc is set).
type s3Answer struct {
	Status int
	Header map[string]string
	Body   []byte
	Doc    any
}

func (s *Sim) serveS3(w http.ResponseWriter, r *http.Request) {
	auth, _ := parseSigV4(r.Header.Get("Authorization"))
	c := &call{ctx: r.Context(), Service: "s3", Region: auth.Region}
	s.mu.Lock()
	c.ReqID = fmt.Sprintf("%016X", 0x5100000000000000|uint64(s.nextID()))
	s.mu.Unlock()
	op, e := s3Route(r)
	if e != nil {
		writeS3Error(w, r, c, e)
		return
	}
	c.Action = op.Action
	if r.ContentLength > maxRequestBody {
		w.Header().Set("Connection", "close") // the body is not read: do not drain it
		writeS3Error(w, r, c, s3Err(http.StatusBadRequest, "EntityTooLarge",
			fmt.Sprintf("Your proposed upload exceeds the maximum allowed size (the simulator holds objects of up to %d bytes)", maxRequestBody)))
		return
	}
	raw, err := readBody(r)
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			e = s3Err(http.StatusBadRequest, "EntityTooLarge", err.Error())
		} else {
			e = s3Err(http.StatusBadRequest, "IncompleteBody", "The request body terminated unexpectedly")
		}
		writeS3Error(w, r, c, e)
		return
	}
	s.mu.Lock()
	s.identify(c, r, raw, auth)
	s.mu.Unlock()
	if ae := s.admit(r.Context(), c); ae != nil {
		writeS3Error(w, r, c, s3FromAPI(ae))
		return
	}
	var p payload
	if op.Action == "PutObject" || op.Action == "CreateBucket" {
		if p, e = readPayload(r, raw); e != nil {
			writeS3Error(w, r, c, e)
			return
		}
	}
	s.mu.Lock()
	var ans *s3Answer
	if ae := s.authorize(c, func(*Account) string { return s3Resource(op) }); ae != nil {
		e = s3FromAPI(ae)
	} else if ans, e = s.s3Do(c, op, r, p); e == nil {
		s.recordAccess(c)
	}
	s.mu.Unlock()
	s.delayAnswer(r.Context(), c)
	if e != nil {
		writeS3Error(w, r, c, e)
		return
	}
	writeS3Answer(w, r, c, ans)
}

// s3Do runs one operation. s.mu is held.
func (s *Sim) s3Do(c *call, op s3Op, r *http.Request, p payload) (*s3Answer, *s3Error) {
	switch op.Action {
	case "ListBuckets":
		return s.s3ListBuckets(c), nil
	case "CreateBucket":
		return s.s3CreateBucket(c, op.Bucket, p.Body)
	}
	b, e := s.s3Bucket(c, op.Bucket, r)
	if e != nil {
		return nil, e
	}
	switch op.Action {
	case "HeadBucket":
		return &s3Answer{Header: map[string]string{"X-Amz-Bucket-Region": b.region()}}, nil
	case "ListObjectsV2":
		return s.s3List(b, r.URL.Query())
	case "PutObject":
		return s.s3Put(b, op.Key, r, p)
	case "GetObject", "HeadObject":
		return s.s3Get(b, op.Key, r)
	case "DeleteObject":
		delete(b.Objects, op.Key) // deleting a key that is not there succeeds, as in S3
		return &s3Answer{Status: http.StatusNoContent}, nil
	}
	return nil, s3NotImplemented(op.Action)
}

// s3Bucket finds the bucket a call names and checks that the call may use it: signed for
// the bucket's region, by its owner or an account it is shared with, and, when the caller
// says whose bucket it expects (x-amz-expected-bucket-owner), owned by that account.
func (s *Sim) s3Bucket(c *call, name string, r *http.Request) (*Bucket, *s3Error) {
	b := s.findBucket(name)
	if b == nil {
		return nil, noSuchBucket(name)
	}
	if c.Region != b.region() {
		e := s3Err(http.StatusBadRequest, "AuthorizationHeaderMalformed",
			fmt.Sprintf("The authorization header is malformed; the region '%s' is wrong; expecting '%s'", c.Region, b.region()), "Region", b.region())
		e.Header = map[string]string{"X-Amz-Bucket-Region": b.region()}
		return nil, e
	}
	if c.Account != b.Account && !slices.Contains(b.SharedWith, c.Account) {
		return nil, s3Denied()
	}
	if want := r.Header.Get("X-Amz-Expected-Bucket-Owner"); want != "" && want != b.Account {
		return nil, s3Denied()
	}
	return b, nil
}

func (s *Sim) findBucket(name string) *Bucket {
	for _, b := range s.world.AWS.S3.Buckets {
		if b.Name == name {
			return b
		}
	}
	return nil
}

func (s *Sim) s3CreateBucket(c *call, name string, body []byte) (*s3Answer, *s3Error) {
	if !ValidBucketName(name) {
		return nil, s3Err(http.StatusBadRequest, "InvalidBucketName", "The specified bucket is not valid.", "BucketName", name)
	}
	var conf struct {
		LocationConstraint string
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := xml.Unmarshal(body, &conf); err != nil {
			return nil, s3Err(http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema")
		}
	}
	region := or(conf.LocationConstraint, "us-east-1")
	if region != c.Region {
		what := "unspecified"
		if conf.LocationConstraint != "" {
			what = "'" + conf.LocationConstraint + "'"
		}
		return nil, s3Err(http.StatusBadRequest, "IllegalLocationConstraintException",
			fmt.Sprintf("The %s location constraint is incompatible for the region specific endpoint this request was sent to.", what))
	}
	acct, err := s.account(c)
	if err != nil {
		return nil, s3FromAPI(asAPIError(err))
	}
	if b := s.findBucket(name); b != nil {
		if b.Account != acct.ID {
			return nil, s3Err(http.StatusConflict, "BucketAlreadyExists",
				"The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.", "BucketName", name)
		}
		if b.region() != "us-east-1" || region != "us-east-1" {
			return nil, s3Err(http.StatusConflict, "BucketAlreadyOwnedByYou",
				"Your previous request to create the named bucket succeeded and you already own it.", "BucketName", name)
		}
		// us-east-1 answers a repeated creation by the owner with success.
	} else {
		s.world.AWS.S3.Buckets = append(s.world.AWS.S3.Buckets, &Bucket{Name: name, Account: acct.ID, Region: conf.LocationConstraint, Created: s.stamp()})
	}
	return &s3Answer{Header: map[string]string{"Location": "/" + name}}, nil
}

func (s *Sim) s3Put(b *Bucket, key string, r *http.Request, p payload) (*s3Answer, *s3Error) {
	if len(key) > 1024 {
		return nil, s3Err(http.StatusBadRequest, "KeyTooLongError", "Your key is too long", "Key", key)
	}
	o := &Object{Body: string(p.Body), ContentType: or(r.Header.Get("Content-Type"), "binary/octet-stream"),
		ETag: `"` + hexMD5(p.Body) + `"`, Modified: s.stamp(), Checksums: p.Checksums}
	for name, vals := range r.Header {
		if meta, ok := strings.CutPrefix(strings.ToLower(name), "x-amz-meta-"); ok {
			if o.Metadata == nil {
				o.Metadata = map[string]string{}
			}
			o.Metadata[meta] = strings.Join(vals, ",")
		}
	}
	if b.Objects == nil {
		b.Objects = map[string]*Object{}
	}
	b.Objects[key] = o
	h := map[string]string{"ETag": o.ETag}
	for alg, v := range o.Checksums {
		h["X-Amz-Checksum-"+alg] = v
		h["X-Amz-Checksum-Type"] = "FULL_OBJECT"
	}
	return &s3Answer{Header: h}, nil
}

func (s *Sim) s3Get(b *Bucket, key string, r *http.Request) (*s3Answer, *s3Error) {
	o := b.Objects[key]
	if o == nil {
		return nil, s3Err(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", "Key", key)
	}
	s.fillObject(b, o)
	h := map[string]string{"Content-Type": o.ContentType, "ETag": o.ETag, "Last-Modified": o.Modified.UTC().Format(http.TimeFormat),
		"Accept-Ranges": "bytes", "Content-Length": fmt.Sprint(len(o.Body))}
	for k, v := range o.Metadata {
		h["X-Amz-Meta-"+k] = v
	}
	// The checksums are only sent to a reader who asks for them; the SDK then verifies
	// the body against them.
	if strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		for alg, v := range o.Checksums {
			h["X-Amz-Checksum-"+alg] = v
			h["X-Amz-Checksum-Type"] = "FULL_OBJECT"
		}
	}
	return &s3Answer{Header: h, Body: []byte(o.Body)}, nil
}

// fillObject gives an object of a world file what S3 would have recorded on its upload.
func (s *Sim) fillObject(b *Bucket, o *Object) {
	if o.ETag == "" {
		o.ETag = `"` + hexMD5([]byte(o.Body)) + `"`
	}
	if o.ContentType == "" {
		o.ContentType = "binary/octet-stream"
	}
	if o.Modified.IsZero() {
		o.Modified = b.Created
		if o.Modified.IsZero() {
			o.Modified = s.stamp()
		}
	}
}

// s3Owner is the canonical user of an account, as S3 names owners.
type s3Owner struct {
	ID string `xml:"ID"`
}

func ownerOf(account string) s3Owner {
	sum := sha256.Sum256([]byte("cloudsim canonical user " + account))
	return s3Owner{ID: hex.EncodeToString(sum[:])}
}

type s3BucketEntry struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion"`
}

type listBucketsResult struct {
	XMLName xml.Name        `xml:"ListAllMyBucketsResult"`
	NS      string          `xml:"xmlns,attr"`
	Owner   s3Owner         `xml:"Owner"`
	Buckets []s3BucketEntry `xml:"Buckets>Bucket"`
}

// s3ListBuckets lists the caller's own buckets, by name.
func (s *Sim) s3ListBuckets(c *call) *s3Answer {
	res := listBucketsResult{NS: s3NS, Owner: ownerOf(c.Account), Buckets: []s3BucketEntry{}}
	for _, b := range s.world.AWS.S3.Buckets {
		if b.Account == c.Account {
			created := b.Created
			if created.IsZero() {
				created = s.stamp()
			}
			res.Buckets = append(res.Buckets, s3BucketEntry{Name: b.Name, CreationDate: s3Time(created), BucketRegion: b.region()})
		}
	}
	slices.SortFunc(res.Buckets, func(a, b s3BucketEntry) int { return strings.Compare(a.Name, b.Name) })
	return &s3Answer{Doc: res}
}

// s3Time is a time as S3's XML documents write it.
func s3Time(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func writeS3Answer(w http.ResponseWriter, r *http.Request, c *call, a *s3Answer) {
	body := a.Body
	if a.Doc != nil {
		b, err := xml.Marshal(a.Doc)
		if err != nil {
			writeS3Error(w, r, c, s3Err(http.StatusInternalServerError, "InternalError", "encode: "+err.Error()))
			return
		}
		body = append([]byte(xml.Header), b...)
		w.Header().Set("Content-Type", "application/xml")
	}
	for k, v := range a.Header {
		w.Header().Set(k, v)
	}
	s3Headers(w, c)
	if _, ok := a.Header["Content-Length"]; !ok && a.Status != http.StatusNoContent {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	}
	w.WriteHeader(cmp.Or(a.Status, http.StatusOK))
	if r.Method != http.MethodHead && a.Status != http.StatusNoContent {
		_, _ = w.Write(body)
	}
}

// writeS3Error answers e as S3 does: an <Error> document, or for HEAD the status alone
// (the SDK names the error after it: NotFound, Forbidden).
func writeS3Error(w http.ResponseWriter, r *http.Request, c *call, e *s3Error) {
	for k, v := range e.Header {
		w.Header().Set(k, v)
	}
	s3Headers(w, c)
	if r.Method == http.MethodHead {
		w.WriteHeader(e.Status)
		return
	}
	doc := struct {
		XMLName   xml.Name  `xml:"Error"`
		Code      string    `xml:"Code"`
		Message   string    `xml:"Message"`
		Fields    []s3Field `xml:",any"`
		RequestID string    `xml:"RequestId"`
		HostID    string    `xml:"HostId"`
	}{Code: e.Code, Message: e.Message, Fields: e.Fields, RequestID: c.ReqID, HostID: hostID(c.ReqID)}
	b, _ := xml.Marshal(doc)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append([]byte(xml.Header), b...))
}

func s3Headers(w http.ResponseWriter, c *call) {
	w.Header().Set("X-Amz-Request-Id", c.ReqID)
	w.Header().Set("X-Amz-Id-2", hostID(c.ReqID))
	w.Header().Set("Server", "AmazonS3")
}

// hostID is the x-amz-id-2 of a request: opaque in S3, derived from the request id here.
func hostID(reqID string) string {
	sum := sha256.Sum256([]byte(reqID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// ValidBucketName reports whether name follows S3's rules for new bucket names: 3 to 63
// lower-case letters, digits, dots and hyphens, beginning and ending with a letter or a
// digit, no two dots in a row, not shaped like an IP address.
func ValidBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 || strings.Contains(name, "..") {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return false
	}
	digitsAndDots := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !alnum(c) && c != '.' && c != '-' {
			return false
		}
		digitsAndDots = digitsAndDots && (c == '.' || c >= '0' && c <= '9')
	}
	return !(digitsAndDots && strings.Count(name, ".") == 3)
}

// validateS3 checks the world's buckets: valid, unique names, owned by accounts of the
// world, shared with well-formed account ids.
func validateS3(s S3, accounts map[string]bool) error {
	seen := map[string]bool{}
	for i, b := range s.Buckets {
		if !ValidBucketName(b.Name) {
			return fmt.Errorf("aws.s3.buckets[%d].name: %q is not a valid bucket name (3-63 lower-case letters, digits, dots and hyphens)", i, b.Name)
		}
		if seen[b.Name] {
			return fmt.Errorf("aws.s3.buckets[%d].name: bucket %s appears twice (bucket names are global)", i, b.Name)
		}
		seen[b.Name] = true
		if !accounts[b.Account] {
			return fmt.Errorf("aws.s3.buckets[%d] (%s).account: %q is not one of aws.accounts", i, b.Name, b.Account)
		}
		for j, a := range b.SharedWith {
			if len(a) != 12 || strings.Trim(a, "0123456789") != "" {
				return fmt.Errorf("aws.s3.buckets[%d] (%s).shared_with[%d]: %q is not a 12-digit account id", i, b.Name, j, a)
			}
		}
	}
	return nil
}
