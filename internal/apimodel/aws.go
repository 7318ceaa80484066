// Package apimodel validates API responses against the providers' own published models:
// botocore's service models for AWS (service-2.json, the files the AWS CLI ships) and
// Google's discovery documents for GCP (the *-api.json files google.golang.org/api
// ships). It is a test helper: the simulator's model tests walk every operation it serves
// through it, so that the simulator's answers cannot drift from the real APIs' shapes.
package apimodel

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWSModel is one botocore service model (service-2.json).
type AWSModel struct {
	Metadata struct {
		Protocol    string `json:"protocol"`
		ServiceID   string `json:"serviceId"`
		EndpointPfx string `json:"endpointPrefix"`
		APIVersion  string `json:"apiVersion"`
	} `json:"metadata"`
	Operations map[string]Operation `json:"operations"`
	Shapes     map[string]Shape     `json:"shapes"`
}

// Operation is one operation of an AWS model.
type Operation struct {
	Name   string     `json:"name"`
	Output *MemberRef `json:"output"`
	Errors []struct {
		Shape string `json:"shape"`
	} `json:"errors"`
}

// MemberRef refers to a shape, with the serialisation traits of where it is used.
type MemberRef struct {
	Shape         string `json:"shape"`
	LocationName  string `json:"locationName"`
	Location      string `json:"location"` // header, headers, statusCode, uri, querystring; "" for the body
	Flattened     bool   `json:"flattened"`
	ResultWrapper string `json:"resultWrapper"`
}

// Shape is one shape of an AWS model.
type Shape struct {
	Type         string               `json:"type"`
	Members      map[string]MemberRef `json:"members"`
	Required     []string             `json:"required"`
	Member       *MemberRef           `json:"member"`
	Key          *MemberRef           `json:"key"`
	Value        *MemberRef           `json:"value"`
	Enum         []string             `json:"enum"`
	Flattened    bool                 `json:"flattened"`
	LocationName string               `json:"locationName"`
	Payload      string               `json:"payload"`
	Error        *struct {
		Code           string `json:"code"`
		HTTPStatusCode int    `json:"httpStatusCode"`
	} `json:"error"`
	Exception bool `json:"exception"`
}

// LoadAWS reads a botocore service model: path is a service-2.json file, plain or gzipped.
func LoadAWS(path string) (*AWSModel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load AWS model: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("load AWS model %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	var m AWSModel
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return nil, fmt.Errorf("load AWS model %s: %w", path, err)
	}
	for name, op := range m.Operations {
		op.Name = name
		m.Operations[name] = op
	}
	return &m, nil
}

// BotocoreModelPath finds a service's newest model under botocore's data directory
// (…/botocore/data/<service>/<api-version>/service-2.json[.gz]).
func BotocoreModelPath(dataDir, service string) (string, error) {
	versions, err := filepath.Glob(filepath.Join(dataDir, service, "*", "service-2.json*"))
	if err != nil || len(versions) == 0 {
		return "", fmt.Errorf("find the botocore model of %s under %s: none", service, dataDir)
	}
	sort.Strings(versions) // API versions are dates: the last is the newest
	return versions[len(versions)-1], nil
}

// Problem is one way a response departs from its model: where (a path into the
// response) and what.
type Problem struct {
	Path string
	What string
}

func (p Problem) String() string { return p.Path + ": " + p.What }

type checker struct {
	m     *AWSModel
	probs []Problem
}

func (c *checker) add(path, format string, args ...any) {
	c.probs = append(c.probs, Problem{Path: path, What: fmt.Sprintf(format, args...)})
}

// commonErrors are the codes every AWS service may answer with although no operation's
// model lists them (AWS documents them once, as the common errors).
var commonErrors = map[string]bool{
	"AccessDenied": true, "AccessDeniedException": true, "IncompleteSignature": true,
	"InternalFailure": true, "InternalError": true, "InvalidAction": true, "InvalidClientTokenId": true,
	"InvalidParameterCombination": true, "InvalidParameterValue": true, "InvalidQueryParameter": true,
	"MalformedQueryString": true, "MissingAction": true, "MissingAuthenticationToken": true,
	"MissingParameter": true, "NotAuthorized": true, "OptInRequired": true, "RequestExpired": true,
	"ServiceUnavailable": true, "ServiceUnavailableException": true, "SignatureDoesNotMatch": true,
	"Throttling": true, "ThrottlingException": true, "ValidationError": true, "ValidationException": true,
	"UnrecognizedClientException": true, "ExpiredToken": true, "ExpiredTokenException": true,
	"IncompleteBody": true, "RequestEntityTooLarge": true, "UnknownOperationException": true,
}

// serviceErrors are codes a service documents in its own error list rather than in its
// model: S3's model names a handful of errors, its documentation some hundred.
var serviceErrors = map[string]map[string]bool{
	"S3": {"SlowDown": true, "NoSuchBucket": true, "InvalidBucketName": true, "BucketAlreadyOwnedByYou": true,
		"BucketAlreadyExists": true, "EntityTooLarge": true, "InvalidArgument": true, "NotImplemented": true,
		"MethodNotAllowed": true, "AuthorizationHeaderMalformed": true, "PermanentRedirect": true,
		"InvalidAccessKeyId": true, "InvalidRequest": true, "BadDigest": true, "InvalidDigest": true,
		"XAmzContentSHA256Mismatch": true, "PreconditionFailed": true, "InvalidRange": true, "MalformedXML": true},
}

// ErrorCodes lists the error codes an operation's model names: for the Query protocol
// the code of each error shape's error trait, else the shape's name.
func (m *AWSModel) ErrorCodes(op string) []string {
	var out []string
	for _, e := range m.Operations[op].Errors {
		code := e.Shape
		if s, ok := m.Shapes[e.Shape]; ok && s.Error != nil && s.Error.Code != "" && m.Metadata.Protocol != "json" {
			code = s.Error.Code
		}
		out = append(out, code)
	}
	return out
}

// CheckError says whether an error answer fits op: its code is one the model lists for
// op, one of AWS's common errors or one the service documents outside its model, and, for a listed error whose shape gives an HTTP
// status, the answer has that status (status 0 skips that check). A service whose model
// lists no errors at all (EC2 documents its codes outside the model) accepts any code.
func (m *AWSModel) CheckError(op, code string, status int) []Problem {
	if _, ok := m.Operations[op]; !ok {
		return []Problem{{Path: op, What: "no such operation in the " + m.Metadata.ServiceID + " model"}}
	}
	if commonErrors[code] || serviceErrors[m.Metadata.ServiceID][code] {
		return nil
	}
	listed := m.ErrorCodes(op)
	for i, c := range listed {
		if c != code {
			continue
		}
		shape := m.Shapes[m.Operations[op].Errors[i].Shape]
		if shape.Error != nil && shape.Error.HTTPStatusCode != 0 && status != 0 && status != shape.Error.HTTPStatusCode {
			return []Problem{{Path: op, What: fmt.Sprintf("error %s is answered with HTTP %d, the model says %d", code, status, shape.Error.HTTPStatusCode)}}
		}
		return nil
	}
	if !m.listsErrors() {
		return nil
	}
	return []Problem{{Path: op, What: fmt.Sprintf("error code %q is neither one the model lists (%s) nor a common error", code, strings.Join(listed, ", "))}}
}

func (m *AWSModel) listsErrors() bool {
	for _, op := range m.Operations {
		if len(op.Errors) > 0 {
			return true
		}
	}
	return false
}

// ValidateJSON checks an AWS JSON protocol response body (ACM, Organizations, Secrets
// Manager) against op's output shape.
func (m *AWSModel) ValidateJSON(op string, body []byte) []Problem {
	o, ok := m.Operations[op]
	if !ok {
		return []Problem{{Path: op, What: "no such operation in the " + m.Metadata.ServiceID + " model"}}
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return []Problem{{Path: op, What: "not JSON: " + err.Error()}}
	}
	c := &checker{m: m}
	if o.Output == nil {
		if obj, ok := v.(map[string]any); !ok || len(obj) > 0 {
			c.add(op, "the operation has no output, the answer is %s", trim(string(body)))
		}
		return c.probs
	}
	c.json(op, o.Output.Shape, v)
	return c.probs
}

func (c *checker) json(path, shape string, v any) {
	s, ok := c.m.Shapes[shape]
	if !ok {
		c.add(path, "shape %s is not in the model", shape)
		return
	}
	if v == nil {
		return // null is how JSON leaves a member out
	}
	switch s.Type {
	case "structure":
		obj, ok := v.(map[string]any)
		if !ok {
			c.add(path, "%s is a structure, the answer has %T", shape, v)
			return
		}
		for k, val := range obj {
			ref, ok := s.Members[k]
			if !ok {
				c.add(path+"."+k, "no member %s in %s (members: %s)", k, shape, memberNames(s))
				continue
			}
			if ref.Location != "" {
				c.add(path+"."+k, "member %s of %s travels in the %s, not the body", k, shape, ref.Location)
				continue
			}
			c.json(path+"."+k, ref.Shape, val)
		}
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				c.add(path, "required member %s of %s is missing", r, shape)
			}
		}
	case "list":
		arr, ok := v.([]any)
		if !ok {
			c.add(path, "%s is a list, the answer has %T", shape, v)
			return
		}
		for i, e := range arr {
			c.json(fmt.Sprintf("%s[%d]", path, i), s.Member.Shape, e)
		}
	case "map":
		obj, ok := v.(map[string]any)
		if !ok {
			c.add(path, "%s is a map, the answer has %T", shape, v)
			return
		}
		for k, val := range obj {
			c.scalar(path+"{key}", s.Key.Shape, k)
			c.json(path+"."+k, s.Value.Shape, val)
		}
	case "timestamp":
		switch t := v.(type) {
		case json.Number:
			if _, err := t.Float64(); err != nil {
				c.add(path, "timestamp %s is not epoch seconds", t)
			}
		case string:
			c.scalar(path, shape, t)
		default:
			c.add(path, "timestamp is a %T", v)
		}
	case "integer", "long", "double", "float":
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, "%s is a number, the answer has %T %v", shape, v, v)
			return
		}
		c.scalar(path, shape, n.String())
	case "boolean":
		if _, ok := v.(bool); !ok {
			c.add(path, "%s is a boolean, the answer has %T %v", shape, v, v)
		}
	case "string", "blob":
		str, ok := v.(string)
		if !ok {
			c.add(path, "%s is a %s, the answer has %T %v", shape, s.Type, v, v)
			return
		}
		c.scalar(path, shape, str)
	default:
		c.add(path, "shape type %s is not handled", s.Type)
	}
}

// scalar checks the text of a scalar value against its shape: its type and enum.
func (c *checker) scalar(path, shape, text string) {
	s := c.m.Shapes[shape]
	switch s.Type {
	case "string":
		if len(s.Enum) > 0 && !contains(s.Enum, text) {
			c.add(path, "%q is not a value of enum %s (%s)", text, shape, strings.Join(s.Enum, ", "))
		}
	case "integer", "long":
		if _, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64); err != nil {
			c.add(path, "%q is not an integer (%s)", text, shape)
		}
	case "double", "float":
		if _, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err != nil {
			c.add(path, "%q is not a number (%s)", text, shape)
		}
	case "boolean":
		if text != "true" && text != "false" {
			c.add(path, "%q is not a boolean (%s)", text, shape)
		}
	case "timestamp":
		if !isTimestamp(text) {
			c.add(path, "%q is not a timestamp (%s)", text, shape)
		}
	case "blob":
		if _, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text)); err != nil {
			c.add(path, "%q is not base64 (%s)", trim(text), shape)
		}
	default:
		c.add(path, "%s is a %s, the answer has text %q", shape, s.Type, trim(text))
	}
}

func isTimestamp(t string) bool {
	t = strings.TrimSpace(t)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", time.RFC1123, time.RFC1123Z} {
		if _, err := time.Parse(layout, t); err == nil {
			return true
		}
	}
	_, err := strconv.ParseFloat(t, 64)
	return err == nil
}

// ValidateXML checks an AWS XML response body against op's output shape: the Query
// protocol (IAM, STS: <OpResponse><OpResult>…; EC2: <OpResponse>…) and REST-XML (S3:
// the root element holds the output's body members).
func (m *AWSModel) ValidateXML(op string, body []byte) []Problem {
	o, ok := m.Operations[op]
	if !ok {
		return []Problem{{Path: op, What: "no such operation in the " + m.Metadata.ServiceID + " model"}}
	}
	root, err := parseXML(body)
	if err != nil {
		return []Problem{{Path: op, What: "not XML: " + err.Error()}}
	}
	c := &checker{m: m}
	switch m.Metadata.Protocol {
	case "query":
		if root.name != op+"Response" {
			c.add(op, "root element is <%s>, not <%sResponse>", root.name, op)
		}
		var result *node
		for _, ch := range root.children {
			switch {
			case ch.name == "ResponseMetadata":
			case ch.name == o.outputWrapper() && o.Output != nil:
				result = ch
			default:
				c.add(op+"/"+ch.name, "unexpected element <%s> in <%s>", ch.name, root.name)
			}
		}
		if o.Output != nil {
			if result == nil {
				result = &node{name: o.outputWrapper()}
			}
			c.xmlValue(op, o.Output.Shape, result)
		}
	case "ec2":
		if root.name != op+"Response" {
			c.add(op, "root element is <%s>, not <%sResponse>", root.name, op)
		}
		kept := &node{name: root.name}
		for _, ch := range root.children {
			if ch.name != "requestId" {
				kept.children = append(kept.children, ch)
			}
		}
		if o.Output == nil {
			for _, ch := range kept.children {
				c.add(op+"/"+ch.name, "the operation has no output")
			}
			return c.probs
		}
		c.xmlValue(op, o.Output.Shape, kept)
	case "rest-xml":
		if o.Output == nil {
			return nil
		}
		out := m.Shapes[o.Output.Shape]
		if out.Payload != "" {
			ref := out.Members[out.Payload]
			if m.Shapes[ref.Shape].Type != "structure" {
				return nil // a blob or string payload: the body is the value itself
			}
			c.xmlValue(op, ref.Shape, root)
			return c.probs
		}
		c.xmlValue(op, o.Output.Shape, root)
	default:
		c.add(op, "protocol %s is not XML", m.Metadata.Protocol)
	}
	return c.probs
}

func (o Operation) outputWrapper() string {
	if o.Output != nil && o.Output.ResultWrapper != "" {
		return o.Output.ResultWrapper
	}
	return o.Name + "Result"
}

// xmlValue checks element n against shape.
func (c *checker) xmlValue(path, shape string, n *node) {
	s, ok := c.m.Shapes[shape]
	if !ok {
		c.add(path, "shape %s is not in the model", shape)
		return
	}
	switch s.Type {
	case "structure":
		c.xmlStruct(path, shape, s, n)
	case "list":
		name := "member"
		if s.Member.LocationName != "" {
			name = s.Member.LocationName
		}
		for i, ch := range n.children {
			if ch.name != name {
				c.add(path+"/"+ch.name, "list %s holds <%s> elements, not <%s>", shape, name, ch.name)
				continue
			}
			c.xmlValue(fmt.Sprintf("%s[%d]", path, i), s.Member.Shape, ch)
		}
	case "map":
		for i, e := range n.children {
			if e.name != "entry" && !s.Flattened {
				c.add(path+"/"+e.name, "map %s holds <entry> elements", shape)
				continue
			}
			c.xmlMapEntry(fmt.Sprintf("%s[%d]", path, i), s, e)
		}
	default:
		if len(n.children) > 0 {
			c.add(path, "%s is a %s, the answer has elements", shape, s.Type)
			return
		}
		c.scalar(path, shape, n.text)
	}
}

func (c *checker) xmlMapEntry(path string, s Shape, e *node) {
	kn, vn := "key", "value"
	if s.Key.LocationName != "" {
		kn = s.Key.LocationName
	}
	if s.Value.LocationName != "" {
		vn = s.Value.LocationName
	}
	for _, ch := range e.children {
		switch ch.name {
		case kn:
			c.xmlValue(path+"/"+kn, s.Key.Shape, ch)
		case vn:
			c.xmlValue(path+"/"+vn, s.Value.Shape, ch)
		default:
			c.add(path+"/"+ch.name, "unexpected element in a map entry")
		}
	}
}

func (c *checker) xmlStruct(path, shape string, s Shape, n *node) {
	seen := map[string]bool{}
	for _, ch := range n.children {
		name, ref, ok := memberByXMLName(s, ch.name)
		if !ok {
			c.add(path+"/"+ch.name, "no member <%s> in %s (members: %s)", ch.name, shape, memberNames(s))
			continue
		}
		if ref.Location != "" {
			c.add(path+"/"+ch.name, "member %s of %s travels in the %s, not the body", name, shape, ref.Location)
			continue
		}
		seen[name] = true
		ms := c.m.Shapes[ref.Shape]
		if ms.Type == "list" && (ref.Flattened || ms.Flattened) {
			c.xmlValue(path+"/"+ch.name, ms.Member.Shape, ch)
			continue
		}
		if ms.Type == "map" && (ref.Flattened || ms.Flattened) {
			c.xmlMapEntry(path+"/"+ch.name, ms, ch)
			continue
		}
		c.xmlValue(path+"/"+ch.name, ref.Shape, ch)
	}
	for _, r := range s.Required {
		if !seen[r] && s.Members[r].Location == "" {
			c.add(path, "required member %s of %s is missing", r, shape)
		}
	}
}

// memberByXMLName finds the member an element stands for: by its locationName (a
// flattened list's elements are named after the list member's locationName, if any), else
// by the member's name.
func memberByXMLName(s Shape, el string) (string, MemberRef, bool) {
	for name, ref := range s.Members {
		if ref.LocationName == el || (ref.LocationName == "" && name == el) {
			return name, ref, true
		}
	}
	return "", MemberRef{}, false
}

func memberNames(s Shape) string {
	var out []string
	for name, ref := range s.Members {
		if ref.Location == "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func contains(list []string, v string) bool {
	for _, e := range list {
		if e == v {
			return true
		}
	}
	return false
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// node is a parsed XML element: its local name, child elements and text.
type node struct {
	name     string
	children []*node
	text     string
}

func parseXML(body []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name.Local}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

// XMLErrorCode reads the code of an AWS XML error answer: <ErrorResponse><Error><Code>
// (Query), <Response><Errors><Error><Code> (EC2) or <Error><Code> (S3).
func XMLErrorCode(body []byte) (string, bool) {
	root, err := parseXML(body)
	if err != nil {
		return "", false
	}
	var find func(n *node) (string, bool)
	find = func(n *node) (string, bool) {
		if n.name == "Error" {
			for _, ch := range n.children {
				if ch.name == "Code" {
					return strings.TrimSpace(ch.text), true
				}
			}
		}
		for _, ch := range n.children {
			if code, ok := find(ch); ok {
				return code, true
			}
		}
		return "", false
	}
	return find(root)
}

// JSONErrorCode reads the code of an AWS JSON error answer: its __type, without the
// namespace some services put before a '#'.
func JSONErrorCode(body []byte) (string, bool) {
	var e struct {
		Type string `json:"__type"`
	}
	if json.Unmarshal(body, &e) != nil || e.Type == "" {
		return "", false
	}
	if i := strings.LastIndexByte(e.Type, '#'); i >= 0 {
		e.Type = e.Type[i+1:]
	}
	return e.Type, true
}
