package cloudsim

import (
	"fmt"
	"strings"
	"unicode"

	sccpb "cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// Security Command Center's ListFindings filter and order_by (scc.go): restrictions
// `FIELD = "value"` (equal) or `FIELD : "value"` (contains), each optionally negated by a
// leading `-` or NOT, joined by AND (or mere juxtaposition) and OR, which binds tighter, with
// parentheses. A field the simulator does not serve is an error, not a filter that
// matches everything.

// sccField reads a finding's value of a filter or order field; ok is false for a field
// the simulator does not serve.
func sccField(f *sccpb.Finding, field string) (v string, ok bool) {
	switch field {
	case "name":
		return f.GetName(), true
	case "parent":
		return f.GetParent(), true
	case "resource_name":
		return f.GetResourceName(), true
	case "state":
		return f.GetState().String(), true
	case "category":
		return f.GetCategory(), true
	case "external_uri":
		return f.GetExternalUri(), true
	case "severity":
		return f.GetSeverity().String(), true
	case "mute":
		return f.GetMute().String(), true
	case "finding_class":
		return f.GetFindingClass().String(), true
	case "event_time":
		return f.GetEventTime().AsTime().UTC().Format("2006-01-02T15:04:05.000000000Z"), true
	}
	if key, isProp := strings.CutPrefix(field, "source_properties."); isProp {
		pv, present := f.GetSourceProperties()[key]
		if !present {
			return "", true
		}
		if s, isString := pv.GetKind().(*structpb.Value_StringValue); isString {
			return s.StringValue, true
		}
		b, _ := pv.MarshalJSON()
		return string(b), true
	}
	return "", false
}

// sccExpr is a parsed filter.
type sccExpr interface{ matches(f *sccpb.Finding) bool }

type sccAnd []sccExpr
type sccOr []sccExpr
type sccNot struct{ e sccExpr }
type sccRestriction struct {
	field, op, value string
}

func (a sccAnd) matches(f *sccpb.Finding) bool {
	for _, e := range a {
		if !e.matches(f) {
			return false
		}
	}
	return true
}

func (o sccOr) matches(f *sccpb.Finding) bool {
	for _, e := range o {
		if e.matches(f) {
			return true
		}
	}
	return len(o) == 0
}

func (n sccNot) matches(f *sccpb.Finding) bool { return !n.e.matches(f) }

func (r sccRestriction) matches(f *sccpb.Finding) bool {
	v, _ := sccField(f, r.field)
	if r.op == ":" {
		return strings.Contains(v, r.value)
	}
	return v == r.value
}

// parseSCCFilter parses a ListFindings filter; empty matches every finding.
func parseSCCFilter(filter string) (sccExpr, error) {
	toks, err := sccTokens(filter)
	if err != nil {
		return nil, err
	}
	p := &sccParser{toks: toks}
	if len(toks) == 0 {
		return sccAnd{}, nil
	}
	e, err := p.and()
	if err == nil && p.pos < len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	if err != nil {
		return nil, errf(kindInvalid, "", "Invalid filter %q: %v.", filter, err)
	}
	return e, nil
}

// sccTokens splits a filter into parentheses, operators, quoted strings and words.
func sccTokens(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '(' || c == ')' || c == '=' || c == ':' || c == '-':
			out = append(out, string(c))
			i++
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, errf(kindInvalid, "", "Invalid filter %q: unterminated string.", s)
			}
			out = append(out, s[i:i+j+2])
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n()=:\"'", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, nil
}

type sccParser struct {
	toks []string
	pos  int
}

func (p *sccParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

// and parses restrictions joined by AND or juxtaposition.
func (p *sccParser) and() (sccExpr, error) {
	var out sccAnd
	for {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if p.peek() == "AND" {
			p.pos++
			continue
		}
		if t := p.peek(); t == "" || t == ")" {
			return out, nil
		}
	}
}

// or parses terms joined by OR.
func (p *sccParser) or() (sccExpr, error) {
	var out sccOr
	for {
		e, err := p.term()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if p.peek() != "OR" {
			return out, nil
		}
		p.pos++
	}
}

// term parses a negation, a parenthesised filter or a restriction.
func (p *sccParser) term() (sccExpr, error) {
	switch p.peek() {
	case "-", "NOT":
		p.pos++
		e, err := p.term()
		return sccNot{e}, err
	case "(":
		p.pos++
		e, err := p.and()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.pos++
		return e, nil
	case "":
		return nil, fmt.Errorf("unexpected end")
	}
	field := p.toks[p.pos]
	p.pos++
	if _, ok := sccField(&sccpb.Finding{}, field); !ok {
		return nil, fmt.Errorf("the simulator does not filter on %q", field)
	}
	op := p.peek()
	if op != "=" && op != ":" {
		return nil, fmt.Errorf("want = or : after %s", field)
	}
	p.pos++
	v := p.peek()
	if v == "" || v == "(" || v == ")" {
		return nil, fmt.Errorf("want a value after %s %s", field, op)
	}
	p.pos++
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		v = v[1 : len(v)-1]
	}
	return sccRestriction{field: field, op: op, value: v}, nil
}

// sccOrder is a parsed order_by: fields, each ascending or descending; by default by name.
type sccOrder []struct {
	field string
	desc  bool
}

func parseSCCOrder(s string) (sccOrder, error) {
	var out sccOrder
	for _, part := range strings.Split(s, ",") {
		words := strings.Fields(part)
		if len(words) == 0 {
			continue
		}
		if _, ok := sccField(&sccpb.Finding{}, words[0]); !ok || len(words) > 2 || (len(words) == 2 && words[1] != "desc" && words[1] != "asc") {
			return nil, errf(kindInvalid, "", "Invalid order_by %q: want fields such as \"category, event_time desc\".", s)
		}
		out = append(out, struct {
			field string
			desc  bool
		}{words[0], len(words) == 2 && words[1] == "desc"})
	}
	return out, nil
}

func (o sccOrder) less(a, b *sccpb.Finding) bool {
	for _, k := range o {
		va, _ := sccField(a, k.field)
		vb, _ := sccField(b, k.field)
		if va != vb {
			return (va < vb) != k.desc
		}
	}
	return a.GetName() < b.GetName()
}
