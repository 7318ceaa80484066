package events

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// node is one JSON object of an event with the path that names it in errors. A field
// that is absent or null reads as absent: CloudTrail writes "responseElements": null for
// calls that answer nothing.
type node struct {
	m    map[string]any
	path string
}

// at is the path of key in n.
func (n node) at(key string) string {
	if n.path == "" {
		return key
	}
	return n.path + "." + key
}

// self is n's own path, "body" for the top.
func (n node) self() string {
	if n.path == "" {
		return "body"
	}
	return n.path
}

func (n node) has(key string) bool {
	v, ok := n.m[key]
	return ok && v != nil
}

// str is the string at key, "" when absent; any other type is malformed.
func (n node) str(key string) (string, error) {
	v, ok := n.m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", malformed(n.at(key), "want a string, got "+kindOf(v))
	}
	return s, nil
}

// need is the string at key, which must be there and not empty.
func (n node) need(key string) (string, error) {
	s, err := n.str(key)
	if err == nil && s == "" {
		err = malformed(n.at(key), "missing")
	}
	return s, err
}

// match is the string at key, which must be there and match re; what names the kind
// of value in the error ("an AWS region").
func (n node) match(key string, re *regexp.Regexp, what string) (string, error) {
	s, err := n.need(key)
	if err == nil && !re.MatchString(s) {
		err = malformed(n.at(key), fmt.Sprintf("%q is not %s", s, what))
	}
	return s, err
}

// obj is the object at key, an empty node when absent.
func (n node) obj(key string) (node, error) {
	c := node{path: n.at(key)}
	v, ok := n.m[key]
	if !ok || v == nil {
		return c, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c, malformed(n.at(key), "want an object, got "+kindOf(v))
	}
	c.m = m
	return c, nil
}

// list is the array at key, nil when absent.
func (n node) list(key string) ([]any, error) {
	v, ok := n.m[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, malformed(n.at(key), "want an array, got "+kindOf(v))
	}
	return l, nil
}

// objects is the array of objects at key, none when absent; an element of another type
// is malformed.
func (n node) objects(key string) ([]node, error) {
	l, err := n.list(key)
	if err != nil {
		return nil, err
	}
	out := make([]node, 0, len(l))
	for i, v := range l {
		field := n.at(key) + fmt.Sprintf("[%d]", i)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, malformed(field, "want an object, got "+kindOf(v))
		}
		out = append(out, node{m: m, path: field})
	}
	return out, nil
}

// integer is the integer at key, 0 when absent.
func (n node) integer(key string) (int64, error) {
	v, ok := n.m[key]
	if !ok || v == nil {
		return 0, nil
	}
	num, ok := v.(json.Number)
	if !ok {
		return 0, malformed(n.at(key), "want a number, got "+kindOf(v))
	}
	i, err := num.Int64()
	if err != nil {
		return 0, malformed(n.at(key), fmt.Sprintf("want an integer, got %s", num))
	}
	return i, nil
}

// boolean is the boolean at key, false when absent.
func (n node) boolean(key string) (bool, error) {
	v, ok := n.m[key]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, malformed(n.at(key), "want true or false, got "+kindOf(v))
	}
	return b, nil
}

// timestamp is the RFC 3339 time at key, which must be there.
func (n node) timestamp(key string) (time.Time, error) {
	s, err := n.need(key)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, malformed(n.at(key), fmt.Sprintf("%q is not an RFC 3339 time", s))
	}
	return t.UTC(), nil
}

// kindOf names a decoded JSON value's type for errors.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
