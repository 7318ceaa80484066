// Package attr reads the attributes of snapshot resources and the parameters of actions
// for the remediators, whichever way they were decoded (Go values from a collector, or
// JSON numbers from a snapshot file), and writes the canonical JSON of before-states.
package attr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Canonical encodes v as the canonical JSON of a before-state: object keys sorted (maps
// are; structs keep their field order), no HTML escaping, no trailing newline. The same
// value gives the same bytes at plan time and at apply time, which is what drift checks
// compare.
func Canonical(v any) (json.RawMessage, error) {
	// A round trip through a generic value sorts the keys of structs too, and turns
	// numbers of any Go type into one form.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode before-state: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("encode before-state: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		return nil, fmt.Errorf("encode before-state: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Decode reads a before-state into v, numbers as json.Number where v holds any.
func Decode(b json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("read before-state: %w", err)
	}
	return nil
}

// String returns m[key] when it is a string, else "".
func String(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Bool returns m[key] when it is a bool, and whether it was one.
func Bool(m map[string]any, key string) (val, ok bool) {
	val, ok = m[key].(bool)
	return val, ok
}

// Int returns m[key] when it is a whole number of any numeric representation, and
// whether it was one.
func Int(m map[string]any, key string) (int, bool) {
	return ToInt(m[key])
}

// ToInt converts a whole number of any representation to int.
func ToInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int(n), true
	case json.Number:
		i, err := strconv.ParseInt(n.String(), 10, 64)
		return int(i), err == nil
	}
	return 0, false
}

// Map returns m[key] when it is an object.
func Map(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// Maps returns the objects of the list m[key]; other elements are skipped.
func Maps(m map[string]any, key string) []map[string]any {
	var out []map[string]any
	for _, e := range List(m, key) {
		if o, ok := e.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// List returns m[key] when it is a list ([]any, []string or []map[string]any).
func List(m map[string]any, key string) []any {
	switch l := m[key].(type) {
	case []any:
		return l
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	case []map[string]any:
		out := make([]any, len(l))
		for i, o := range l {
			out[i] = o
		}
		return out
	}
	return nil
}

// Strings returns the strings of the list m[key].
func Strings(m map[string]any, key string) []string {
	var out []string
	for _, e := range List(m, key) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Param returns the string parameter name of an action; required ones must be present
// and non-empty.
func Param(params map[string]any, name string, required bool) (string, error) {
	v, ok := params[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("parameter %s is required", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("parameter %s: want a string, got %T", name, v)
	}
	if required && s == "" {
		return "", fmt.Errorf("parameter %s is empty", name)
	}
	return s, nil
}

// LastSegment is the part of s after its last "/": a name out of an ARN or a resource
// name ("arn:aws:iam::1:user/ops/alice" → "alice").
func LastSegment(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }
