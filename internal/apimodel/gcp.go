package apimodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Discovery is one Google API discovery document (compute-api.json, iam-api.json, …).
type Discovery struct {
	Name      string             `json:"name"`
	Version   string             `json:"version"`
	Schemas   map[string]*Schema `json:"schemas"`
	Resources map[string]*dres   `json:"resources"`
	methods   map[string]*Method
}

type dres struct {
	Methods   map[string]*Method `json:"methods"`
	Resources map[string]*dres   `json:"resources"`
}

// Method is one method of a discovery document ("compute.firewalls.list").
type Method struct {
	ID         string  `json:"id"`
	HTTPMethod string  `json:"httpMethod"`
	Path       string  `json:"path"`
	FlatPath   string  `json:"flatPath"`
	Response   *Schema `json:"response"`
}

// Schema is a JSON schema of a discovery document.
type Schema struct {
	ID                   string             `json:"id"`
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Properties           map[string]*Schema `json:"properties"`
	AdditionalProperties *Schema            `json:"additionalProperties"`
	Items                *Schema            `json:"items"`
	Enum                 []string           `json:"enum"`
	Required             bool               `json:"required"`
}

// LoadDiscovery reads a discovery document.
func LoadDiscovery(path string) (*Discovery, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load discovery document: %w", err)
	}
	var d Discovery
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("load discovery document %s: %w", path, err)
	}
	d.methods = map[string]*Method{}
	var walk func(rs map[string]*dres)
	walk = func(rs map[string]*dres) {
		for _, r := range rs {
			for _, m := range r.Methods {
				d.methods[m.ID] = m
			}
			walk(r.Resources)
		}
	}
	walk(d.Resources)
	return &d, nil
}

// Method returns a method by its id ("cloudresourcemanager.projects.get").
func (d *Discovery) Method(id string) (*Method, bool) {
	m, ok := d.methods[id]
	return m, ok
}

// ValidateResponse checks a JSON response body of method id against the method's
// response schema: every property is one the schema names, of its type and format, and
// enum values are the schema's.
func (d *Discovery) ValidateResponse(id string, body []byte) []Problem {
	m, ok := d.methods[id]
	if !ok {
		return []Problem{{Path: id, What: "no such method in the " + d.Name + " " + d.Version + " discovery document"}}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []Problem{{Path: id, What: "not JSON: " + err.Error()}}
	}
	c := &checker{}
	if m.Response == nil {
		if obj, ok := v.(map[string]any); !ok || len(obj) > 0 {
			c.add(id, "the method has no response body, the answer is %s", trim(string(body)))
		}
		return c.probs
	}
	d.check(c, id, m.Response, v)
	return c.probs
}

// ValidateSchema checks a JSON value against a named schema of the document.
func (d *Discovery) ValidateSchema(schema string, body []byte) []Problem {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []Problem{{Path: schema, What: "not JSON: " + err.Error()}}
	}
	c := &checker{}
	d.check(c, schema, &Schema{Ref: schema}, v)
	return c.probs
}

func (d *Discovery) check(c *checker, path string, s *Schema, v any) {
	name := ""
	for s.Ref != "" {
		name = s.Ref
		r, ok := d.Schemas[s.Ref]
		if !ok {
			c.add(path, "schema %s is not in the document", s.Ref)
			return
		}
		s = r
	}
	if name == "" {
		name = s.ID
	}
	if v == nil {
		return
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			c.add(path, "%s is an object, the answer has %T", or(name, "object"), v)
			return
		}
		for k, val := range obj {
			p, ok := s.Properties[k]
			if !ok {
				p = s.AdditionalProperties
			}
			if p == nil {
				c.add(path+"."+k, "no property %s in %s", k, or(name, "the object"))
				continue
			}
			d.check(c, path+"."+k, p, val)
		}
		for k, p := range s.Properties {
			if _, ok := obj[k]; p.Required && !ok {
				c.add(path, "required property %s of %s is missing", k, name)
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			c.add(path, "an array, the answer has %T", v)
			return
		}
		for i, e := range arr {
			d.check(c, fmt.Sprintf("%s[%d]", path, i), s.Items, e)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			c.add(path, "a string (%s), the answer has %T %v", or(s.Format, "string"), v, v)
			return
		}
		if len(s.Enum) > 0 && !contains(s.Enum, str) {
			c.add(path, "%q is not one of %s", str, strings.Join(s.Enum, ", "))
		}
		switch s.Format {
		case "int64", "uint64":
			if _, err := strconv.ParseInt(str, 10, 64); err != nil {
				if _, err := strconv.ParseUint(str, 10, 64); err != nil {
					c.add(path, "%q is not a %s", str, s.Format)
				}
			}
		case "google-datetime", "date-time":
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				c.add(path, "%q is not an RFC 3339 time", str)
			}
		case "byte":
			if !isBase64(str) {
				c.add(path, "%q is not base64", trim(str))
			}
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, "a %s, the answer has %T %v", s.Type, v, v)
			return
		}
		if s.Type == "integer" {
			if _, err := strconv.ParseInt(n.String(), 10, 64); err != nil {
				c.add(path, "%s is not an integer", n)
			}
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			c.add(path, "a boolean, the answer has %T %v", v, v)
		}
	case "any", "":
	default:
		c.add(path, "schema type %s is not handled", s.Type)
	}
}

func isBase64(s string) bool {
	for _, enc := range []func(string) ([]byte, error){b64std, b64url} {
		if _, err := enc(s); err == nil {
			return true
		}
	}
	return false
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// gcpErrorSchema is the shape of Google's JSON error answers, which discovery documents
// do not describe.
var gcpStatuses = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// ValidateGCPError checks a Google JSON error answer: {"error": {"code": HTTP status,
// "message": …, "status": a google.rpc.Code name, "errors": [{"reason", "message",
// "domain"}…]}}, with code equal to the answer's HTTP status.
func ValidateGCPError(httpStatus int, body []byte) []Problem {
	var e struct {
		Error *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		return []Problem{{Path: "error", What: fmt.Sprintf("not a Google error answer: %s", trim(string(body)))}}
	}
	var out []Problem
	if e.Error.Code == nil || *e.Error.Code != httpStatus {
		out = append(out, Problem{Path: "error.code", What: fmt.Sprintf("is not the HTTP status %d", httpStatus)})
	}
	if e.Error.Message == "" {
		out = append(out, Problem{Path: "error.message", What: "is empty"})
	}
	if e.Error.Status != "" && !contains(gcpStatuses, e.Error.Status) {
		out = append(out, Problem{Path: "error.status", What: fmt.Sprintf("%q is not a google.rpc.Code", e.Error.Status)})
	}
	return out
}

func b64std(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
func b64url(s string) ([]byte, error) { return base64.URLEncoding.DecodeString(s) }
