// Package waivers reads waiver files — accepted risks with an owner, a reason and an
// expiry — and matches findings against them.
package waivers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/glob"
	"github.com/warden-sec/warden/internal/suggest"
)

// Waiver suppresses the findings of a policy on matching resources until it expires.
type Waiver struct {
	// Policy is a policy id, or a glob over ids ("WARDEN-AWS-NET-*").
	Policy string `json:"policy"`
	// Resource is a resource uid, or a glob over uids; * matches any run of characters,
	// ? one character.
	Resource string    `json:"resource"`
	Reason   string    `json:"reason"`
	Owner    string    `json:"owner"`
	Expires  time.Time `json:"expires"`
	File     string    `json:"file"`
	Line     int       `json:"line"`
}

// Active reports whether the waiver still suppresses at time now.
func (w *Waiver) Active(now time.Time) bool { return now.Before(w.Expires) }

// Matches reports whether the waiver covers the policy and resource.
func (w *Waiver) Matches(policy, resource string) bool {
	return Glob(w.Policy, policy) && Glob(w.Resource, resource)
}

// Set is the waivers of one file.
type Set struct {
	File    string
	Waivers []*Waiver
}

// Error is a problem in a waiver file, located by file, line and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("read waivers %s: line %d: ", e.File, e.Line)
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Load reads a waiver file.
func Load(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read waivers: %w", err)
	}
	return Parse(b, path)
}

var waiverFields = []string{"policy", "resource", "reason", "owner", "expires"}

// Parse reads waivers from YAML:
//
//	waivers:
//	  - policy: WARDEN-AWS-NET-001
//	    resource: "arn:aws:ec2:*:111111111111:security-group/sg-0bastion*"
//	    reason: Bastion; SSH is limited by a network ACL
//	    owner: alice@acme.example
//	    expires: 2027-03-31
//
// A waiver hides findings, so Parse refuses anything it would otherwise have to guess at:
// a duplicate key (YAML lets the last one win, so a reviewer could read one value while
// another applies), a second YAML document (which a plain YAML reader drops), a value
// that is not a string, and a waiver matching every policy on every resource.
func Parse(data []byte, file string) (*Set, error) {
	set := &Set{File: file}
	if len(bytes.TrimSpace(data)) == 0 {
		return set, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return set, nil // comments only
		}
		return nil, yamlErr(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{File: file, Line: extra.Line, Msg: "a second YAML document: a waivers file holds one document, with one \"waivers\" list (its other documents would be ignored)"}
	case !errors.Is(err, io.EOF):
		return nil, yamlErr(file, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: root.Line, Msg: "expected a mapping with a \"waivers\" list"}
	}
	if err := checkDuplicateKeys(file, "", root); err != nil {
		return nil, err
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "waivers":
			list = v
		case "version":
			if v.Kind != yaml.ScalarNode || v.Value != "1" {
				return nil, &Error{File: file, Line: v.Line, Field: "version", Msg: fmt.Sprintf("unsupported version %q (want 1)", v.Value)}
			}
		default:
			return nil, &Error{File: file, Line: k.Line, Field: k.Value, Msg: "unknown field (want \"waivers\")"}
		}
	}
	if list == nil {
		return nil, &Error{File: file, Line: root.Line, Field: "waivers", Msg: "is required"}
	}
	if list.Kind != yaml.SequenceNode {
		if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
			return set, nil
		}
		return nil, &Error{File: file, Line: list.Line, Field: "waivers", Msg: "must be a list"}
	}
	for i, item := range list.Content {
		w, err := parseWaiver(file, i, item)
		if err != nil {
			return nil, err
		}
		set.Waivers = append(set.Waivers, w)
	}
	return set, nil
}

// checkDuplicateKeys refuses a mapping that sets one key twice, naming the second
// occurrence and where the first one is.
func checkDuplicateKeys(file, path string, n *yaml.Node) error {
	first := make(map[string]int, len(n.Content)/2)
	for j := 0; j+1 < len(n.Content); j += 2 {
		k := n.Content[j]
		if line, dup := first[k.Value]; dup {
			field := k.Value
			if path != "" {
				field = path + "." + k.Value
			}
			return &Error{File: file, Line: k.Line, Field: field, Msg: fmt.Sprintf("duplicate key %q (first set at line %d): YAML would silently keep only the last value", k.Value, line)}
		}
		first[k.Value] = k.Line
	}
	return nil
}

func parseWaiver(file string, i int, n *yaml.Node) (*Waiver, error) {
	path := fmt.Sprintf("waivers[%d]", i)
	if n.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: n.Line, Field: path, Msg: "must be a mapping with policy, resource, reason, owner and expires"}
	}
	if err := checkDuplicateKeys(file, path, n); err != nil {
		return nil, err
	}
	w := &Waiver{File: file, Line: n.Line}
	seen := map[string]bool{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		field := path + "." + k.Value
		if v.Kind != yaml.ScalarNode {
			return nil, &Error{File: file, Line: v.Line, Field: field, Msg: "must be a single value"}
		}
		if slices.Contains(waiverFields, k.Value) {
			if err := checkTag(k.Value, v); err != nil {
				return nil, &Error{File: file, Line: v.Line, Field: field, Msg: err.Error()}
			}
		}
		seen[k.Value] = true
		switch k.Value {
		case "policy":
			w.Policy = strings.TrimSpace(v.Value)
		case "resource":
			w.Resource = strings.TrimSpace(v.Value)
		case "reason":
			w.Reason = strings.TrimSpace(v.Value)
		case "owner":
			w.Owner = strings.TrimSpace(v.Value)
		case "expires":
			t, err := parseDate(v.Value)
			if err != nil {
				return nil, &Error{File: file, Line: v.Line, Field: field, Msg: err.Error()}
			}
			w.Expires = t
		default:
			msg := "unknown field"
			if s := suggest.Closest(k.Value, waiverFields); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, &Error{File: file, Line: k.Line, Field: field, Msg: msg}
		}
	}
	for _, f := range waiverFields {
		if !seen[f] || (f != "expires" && fieldValue(w, f) == "") {
			why := "is required"
			switch f {
			case "expires":
				why = "is required: every waiver ends (YYYY-MM-DD)"
			case "owner":
				why = "is required: who answers for this risk"
			case "reason":
				why = "is required: why the risk is accepted"
			}
			return nil, &Error{File: file, Line: n.Line, Field: path + "." + f, Msg: why}
		}
	}
	if wildcardsOnly(w.Policy) && wildcardsOnly(w.Resource) {
		return nil, &Error{File: file, Line: n.Line, Field: path, Msg: fmt.Sprintf("policy %q on resource %q waives every finding: name the policies or the resources the risk is accepted for", w.Policy, w.Resource)}
	}
	return w, nil
}

// checkTag refuses a value YAML reads as something other than text: "owner: ~" would
// otherwise be the owner "~", "reason: true" the reason "true", and "policy: 1" a policy
// id nobody wrote on purpose. An expiry may also be a YAML timestamp.
func checkTag(field string, v *yaml.Node) error {
	switch tag := v.ShortTag(); {
	case tag == "!!str":
		return nil
	case field == "expires" && tag == "!!timestamp":
		return nil
	case tag == "!!null":
		return fmt.Errorf("is empty (YAML null %q)", v.Value)
	default:
		return fmt.Errorf("must be a string, not %s %q (quote it if it is meant as text)", strings.TrimPrefix(tag, "!!"), v.Value)
	}
}

// wildcardsOnly reports whether a glob is made of wildcards only: with a star it
// matches every policy id or uid, and without one it names nothing in particular.
func wildcardsOnly(pattern string) bool {
	return pattern != "" && strings.Trim(pattern, "*?") == ""
}

func fieldValue(w *Waiver, f string) string {
	switch f {
	case "policy":
		return w.Policy
	case "resource":
		return w.Resource
	case "reason":
		return w.Reason
	case "owner":
		return w.Owner
	}
	return ""
}

// parseDate accepts a date (the waiver ends at the start of the next day, UTC) or an
// RFC 3339 time.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.AddDate(0, 0, 1), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD) or an RFC 3339 time", s)
}

func yamlErr(file string, err error) error {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	return &Error{File: file, Line: line, Msg: msg}
}

// CheckPolicies refuses waivers whose policy names no loaded policy, so that a typo does
// not silently waive nothing: an exact id that does not exist, or a glob that matches
// none of ids. The error suggests the closest id, or the closest glob that matches.
func (s *Set) CheckPolicies(ids []string) error {
	for i, w := range s.Waivers {
		if len(ids) > 1 && wildcardsOnly(w.Resource) && !slices.ContainsFunc(ids, func(id string) bool { return !Glob(w.Policy, id) }) {
			// "W*" on "*" waives every finding as surely as "*" on "*" does.
			return &Error{File: s.File, Line: w.Line, Field: fmt.Sprintf("waivers[%d]", i),
				Msg: fmt.Sprintf("policy %q matches every one of the %d loaded policies and resource %q every resource: this waiver would suppress every finding; name the policies or the resources it is for", w.Policy, len(ids), w.Resource)}
		}
		if slices.ContainsFunc(ids, func(id string) bool { return Glob(w.Policy, id) }) {
			continue
		}
		var msg, sg string
		if strings.ContainsAny(w.Policy, "*?") {
			msg = fmt.Sprintf("policy glob %q matches none of the %d loaded policies", w.Policy, len(ids))
			sg = closestGlob(w.Policy, ids)
		} else {
			msg = fmt.Sprintf("unknown policy %q", w.Policy)
			sg = closestID(w.Policy, ids)
		}
		if sg != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sg)
		}
		return &Error{File: s.File, Line: w.Line, Field: fmt.Sprintf("waivers[%d].policy", i), Msg: msg}
	}
	return nil
}

// closestID suggests the id a misspelt one meant, ignoring case first.
func closestID(id string, ids []string) string {
	for _, c := range ids {
		if strings.EqualFold(c, id) {
			return c
		}
	}
	return suggest.Closest(id, ids)
}

// closestGlob suggests a glob for one that matches nothing: its literal prefix (up to
// the first wildcard) is replaced by the closest prefix of a loaded id of the same
// length, and the suggestion is kept only if it matches some id.
// "WARDEN-AWS-IMA-*" becomes "WARDEN-AWS-IAM-*".
func closestGlob(pattern string, ids []string) string {
	n := strings.IndexAny(pattern, "*?")
	prefix, rest := pattern[:n], pattern[n:]
	var prefixes []string
	for _, id := range ids {
		if len(id) >= n && !slices.Contains(prefixes, id[:n]) {
			prefixes = append(prefixes, id[:n])
		}
	}
	p := closestID(prefix, prefixes)
	if p == "" {
		return ""
	}
	cand := p + rest
	if !slices.ContainsFunc(ids, func(id string) bool { return Glob(cand, id) }) {
		return ""
	}
	return cand
}

// Match returns the first active waiver covering the finding, and the first expired one
// that would have covered it.
func (s *Set) Match(policy, resource string, now time.Time) (active, expired *Waiver) {
	if s == nil {
		return nil, nil
	}
	for _, w := range s.Waivers {
		if !w.Matches(policy, resource) {
			continue
		}
		if w.Active(now) {
			if active == nil {
				active = w
			}
		} else if expired == nil {
			expired = w
		}
	}
	return active, expired
}

// Glob matches s against a pattern where * matches any run of characters (slashes
// included) and ? matches one character (internal/glob).
func Glob(pattern, s string) bool { return glob.Match(pattern, s) }
