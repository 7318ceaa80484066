package compliance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

var (
	topFields       = []string{"id", "name", "version", "publisher", "source", "families", "controls"}
	familyFields    = []string{"id", "title", "parent"}
	controlFields   = []string{"id", "title", "family", "assessment", "level", "baselines", "policies", "key_match", "requires_config", "note"}
	boundFields     = []string{"min", "max"}
	baselineNames   = []string{"low", "moderate", "high", "privacy"}
	assessmentNames = []string{string(Automated), string(Manual)}
	// frameworkID is the form of a framework id: what the policies' metadata and the
	// command line name it by, and the embedded file's name.
	frameworkID = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
)

// Parse reads a framework from YAML (the layout of the files under frameworks/). name is
// the file's name, for errors. Every error is an *Error: it gives the line and the field,
// e.g.
//
//	parse framework cis-aws-3.0.yaml: line 40: controls[3].assessment: "automatic" is not automated or manual (did you mean "automated"?)
//
// Parse refuses what it would otherwise have to guess at: unknown fields, a key set twice,
// a second YAML document, anchors and aliases. The framework it returns has passed
// Validate(nil): every control's family exists, and no id is used twice.
func Parse(name string, data []byte) (*Framework, error) {
	f, err := parse(name, data)
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	if err := f.Validate(nil); err != nil {
		return nil, err
	}
	return f, nil
}

// Error is a problem in a framework file, located by line and field.
type Error struct {
	File string
	Err  *yamlerr.Error
}

func (e *Error) Error() string {
	where := ""
	if e.Err.Line > 0 {
		where = fmt.Sprintf("line %d: ", e.Err.Line)
	}
	if e.Err.Field != "" {
		where += e.Err.Field + ": "
	}
	return fmt.Sprintf("parse framework %s: %s%s", e.File, where, e.Err.Msg)
}

// Unwrap gives the line and field as a *yamlerr.Error.
func (e *Error) Unwrap() error { return e.Err }

// Line is the line of the file the problem is on.
func (e *Error) Line() int { return e.Err.Line }

func parse(name string, data []byte) (*Framework, *yamlerr.Error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &yamlerr.Error{Line: 1, Msg: "the file is empty: a framework needs an id, a name, families and controls"}
		}
		return nil, syntaxError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &yamlerr.Error{Line: extra.Line, Msg: "a second YAML document: a framework file holds one"}
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if err := noAliases(root); err != nil {
		return nil, err
	}
	top, err := mapping(root, "", topFields)
	if err != nil {
		return nil, err
	}
	f := &Framework{File: name}
	for _, s := range []struct {
		key string
		dst *string
	}{{"id", &f.ID}, {"name", &f.Name}, {"version", &f.Version}, {"publisher", &f.Publisher}, {"source", &f.Source}} {
		if *s.dst, err = top.text(s.key, true); err != nil {
			return nil, err
		}
	}
	if !frameworkID.MatchString(f.ID) {
		return nil, fieldError(top.values["id"], "id", fmt.Sprintf("%q is not a framework id: lower-case letters, digits, dots and dashes (e.g. cis-aws-3.0)", f.ID))
	}
	fams, err := top.list("families", true)
	if err != nil {
		return nil, err
	}
	for i, n := range fams {
		fam, err := parseFamily(n, fmt.Sprintf("families[%d]", i))
		if err != nil {
			return nil, err
		}
		f.Families = append(f.Families, fam)
	}
	ctls, err := top.list("controls", true)
	if err != nil {
		return nil, err
	}
	for i, n := range ctls {
		c, err := parseControl(n, fmt.Sprintf("controls[%d]", i))
		if err != nil {
			return nil, err
		}
		f.Controls = append(f.Controls, c)
	}
	return f, nil
}

func parseFamily(n *yaml.Node, path string) (Family, *yamlerr.Error) {
	m, err := mapping(n, path, familyFields)
	if err != nil {
		return Family{}, err
	}
	fam := Family{line: n.Line}
	if fam.ID, err = m.text("id", true); err != nil {
		return Family{}, err
	}
	if fam.Title, err = m.text("title", true); err != nil {
		return Family{}, err
	}
	if fam.Parent, err = m.text("parent", false); err != nil {
		return Family{}, err
	}
	return fam, nil
}

func parseControl(n *yaml.Node, path string) (Control, *yamlerr.Error) {
	m, err := mapping(n, path, controlFields)
	if err != nil {
		return Control{}, err
	}
	c := Control{line: n.Line}
	if c.ID, err = m.text("id", true); err != nil {
		return Control{}, err
	}
	if c.Title, err = m.text("title", true); err != nil {
		return Control{}, err
	}
	if c.Family, err = m.text("family", true); err != nil {
		return Control{}, err
	}
	a, err := m.text("assessment", true)
	if err != nil {
		return Control{}, err
	}
	if !slices.Contains(assessmentNames, a) {
		return Control{}, fieldError(m.values["assessment"], m.field("assessment"), notOneOf(a, assessmentNames))
	}
	c.Assessment = Assessment(a)
	if v, ok := m.values["level"]; ok {
		lv, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil || lv < 1 || lv > 3 {
			return Control{}, fieldError(v, m.field("level"), fmt.Sprintf("%q is not a profile level (1 or 2)", v.Value))
		}
		c.Level = lv
	}
	if c.Baselines, err = m.texts("baselines"); err != nil {
		return Control{}, err
	}
	for i, b := range c.Baselines {
		if !slices.Contains(baselineNames, b) {
			return Control{}, fieldError(m.values["baselines"].Content[i], fmt.Sprintf("%s[%d]", m.field("baselines"), i), notOneOf(b, baselineNames))
		}
	}
	if c.Policies, err = m.texts("policies"); err != nil {
		return Control{}, err
	}
	if c.Note, err = m.text("note", false); err != nil {
		return Control{}, err
	}
	if v, ok := m.values["key_match"]; ok {
		km, err := mapping(v, m.field("key_match"), nil)
		if err != nil {
			return Control{}, err
		}
		c.KeyMatch = map[string]string{}
		c.keyRe = map[string]*regexp.Regexp{}
		for _, policy := range km.order {
			expr, err := km.text(policy, true)
			if err != nil {
				return Control{}, err
			}
			re, rerr := regexp.Compile(expr)
			if rerr != nil {
				return Control{}, fieldError(km.values[policy], km.field(policy), fmt.Sprintf("not a regular expression: %v", rerr))
			}
			c.KeyMatch[policy], c.keyRe[policy] = expr, re
		}
	}
	if v, ok := m.values["requires_config"]; ok {
		rc, err := mapping(v, m.field("requires_config"), nil)
		if err != nil {
			return Control{}, err
		}
		for _, setting := range rc.order {
			r, err := parseRequirement(rc.values[setting], rc.field(setting), setting)
			if err != nil {
				return Control{}, err
			}
			c.RequiresConfig = append(c.RequiresConfig, r)
		}
	}
	return c, nil
}

func parseRequirement(n *yaml.Node, path, setting string) (Requirement, *yamlerr.Error) {
	m, err := mapping(n, path, boundFields)
	if err != nil {
		return Requirement{}, err
	}
	r := Requirement{Setting: setting, line: n.Line}
	for _, k := range m.order {
		v := m.values[k]
		x, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || err != nil {
			return Requirement{}, fieldError(v, m.field(k), fmt.Sprintf("%q is not a number", v.Value))
		}
		if k == "min" {
			r.AtLeast = &x
		} else {
			r.AtMost = &x
		}
	}
	if r.AtLeast == nil && r.AtMost == nil {
		return Requirement{}, fieldError(n, path, "needs a bound: min or max (e.g. {max: 45})")
	}
	if r.AtLeast != nil && r.AtMost != nil && *r.AtLeast > *r.AtMost {
		return Requirement{}, fieldError(n, path, "min is above max: no value satisfies both")
	}
	return r, nil
}

// fields is a YAML mapping read into its keys, each key once.
type fields struct {
	path   string
	node   *yaml.Node
	order  []string
	keys   map[string]*yaml.Node
	values map[string]*yaml.Node
}

// mapping reads n as a mapping whose keys are among known (any key when known is nil),
// refusing a key set twice.
func mapping(n *yaml.Node, path string, known []string) (*fields, *yamlerr.Error) {
	what := "the file"
	if path != "" {
		what = path
	}
	if n.Kind != yaml.MappingNode {
		msg := what + " must be a mapping"
		if len(known) > 0 {
			msg += " with " + strings.Join(known, ", ")
		}
		return nil, &yamlerr.Error{Line: max(n.Line, 1), Field: path, Msg: msg}
	}
	m := &fields{path: path, node: n, keys: map[string]*yaml.Node{}, values: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fieldError(k, path, "a key must be a plain name")
		}
		if first, dup := m.keys[k.Value]; dup {
			return nil, fieldError(k, m.field(k.Value), fmt.Sprintf("duplicate key %q (first set at line %d): YAML would silently keep only the last value", k.Value, first.Line))
		}
		if known != nil && !slices.Contains(known, k.Value) {
			msg := "unknown field"
			if s := suggest.Closest(k.Value, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, fieldError(k, m.field(k.Value), msg+"; known: "+strings.Join(known, ", "))
		}
		m.keys[k.Value], m.values[k.Value] = k, v
		m.order = append(m.order, k.Value)
	}
	return m, nil
}

func (m *fields) field(key string) string {
	if m.path == "" {
		return key
	}
	return m.path + "." + key
}

// text reads a scalar field. Its literal text is kept: a CIS id 1.10 stays "1.10", where
// a YAML reader that types values would make it the number 1.1.
func (m *fields) text(key string, required bool) (string, *yamlerr.Error) {
	v, ok := m.values[key]
	if !ok {
		if required {
			return "", &yamlerr.Error{Line: max(m.node.Line, 1), Field: m.field(key), Msg: "is required"}
		}
		return "", nil
	}
	if v.Kind != yaml.ScalarNode {
		return "", fieldError(v, m.field(key), "must be a single value")
	}
	if v.ShortTag() == "!!null" {
		return "", fieldError(v, m.field(key), fmt.Sprintf("is empty (YAML null %q)", v.Value))
	}
	s := strings.TrimSpace(v.Value)
	if s == "" {
		return "", fieldError(v, m.field(key), "is empty")
	}
	return s, nil
}

// list reads a sequence field.
func (m *fields) list(key string, required bool) ([]*yaml.Node, *yamlerr.Error) {
	v, ok := m.values[key]
	if !ok {
		if required {
			return nil, &yamlerr.Error{Line: max(m.node.Line, 1), Field: m.field(key), Msg: "is required"}
		}
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, fieldError(v, m.field(key), "must be a list")
	}
	if required && len(v.Content) == 0 {
		return nil, fieldError(v, m.field(key), "must not be empty")
	}
	return v.Content, nil
}

// texts reads a sequence of distinct, non-empty scalars.
func (m *fields) texts(key string) ([]string, *yamlerr.Error) {
	items, err := m.list(key, false)
	if err != nil || items == nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		path := fmt.Sprintf("%s[%d]", m.field(key), i)
		s := strings.TrimSpace(it.Value)
		if it.Kind != yaml.ScalarNode || it.ShortTag() == "!!null" || s == "" {
			return nil, fieldError(it, path, "must be a single, non-empty value")
		}
		if slices.Contains(out, s) {
			return nil, fieldError(it, path, fmt.Sprintf("%q is listed twice", s))
		}
		out = append(out, s)
	}
	return out, nil
}

// noAliases refuses anchors and aliases: a framework file is read by people, and a value
// defined elsewhere under another name is one they would not see.
func noAliases(n *yaml.Node) *yamlerr.Error {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return &yamlerr.Error{Line: max(n.Line, 1), Msg: "anchors and aliases (&, *) are not supported in a framework file: write each value out"}
	}
	for _, c := range n.Content {
		if err := noAliases(c); err != nil {
			return err
		}
	}
	return nil
}

func fieldError(n *yaml.Node, field, msg string) *yamlerr.Error {
	return &yamlerr.Error{Line: max(n.Line, 1), Field: field, Msg: msg}
}

func notOneOf(v string, names []string) string {
	msg := fmt.Sprintf("%q is not %s", v, orList(names))
	if s := suggest.Closest(v, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// parserProblems are the messages of the YAML parser's errors (as opposed to its
// scanner's). go.yaml.in/yaml/v3 numbers their lines from 0, and those of scanner errors
// from 1: the line of a parser error is one more than it says.
var parserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found undefined tag handle", "found duplicate %YAML directive", "found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntaxError places a YAML syntax error on its line.
func syntaxError(err error) *yamlerr.Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if _, serr := fmt.Sscanf(msg, "line %d:", &line); serr == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	if slices.Contains(parserProblems, msg) {
		line++
	}
	return &yamlerr.Error{Line: max(line, 1), Msg: msg}
}
