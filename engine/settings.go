package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/warden-sec/warden/snapshot"
)

// Setting is one name policies read from data.warden.config, with the type of the
// default they declare for it. The schema of settings is derived from the policies
// themselves: a policy reads a setting as
//
//	max_days := n if {
//		n := data.warden.config.access_key_max_age_days
//	} else := 90
//
// or as data.warden.lib.config.setting("known_accounts", []), and a user policy that does
// the same declares a setting of its own.
type Setting struct {
	Name string `json:"name"`
	// Types are the JSON types of the declared defaults: number, string, boolean, null,
	// array, "array of T", object. Empty when no default's type could be told: any
	// value is accepted then.
	Types []string `json:"types,omitempty"`
	// Default is the first declared default (a JSON value), nil when none is known.
	Default any `json:"default,omitempty"`
	// Where are the file:line of the policies reading the setting.
	Where []string `json:"where"`
}

// SettingError is one setting refused: Name is the setting's name (a key of the
// settings map); Path locates the bad value below it ("database_ports[1]").
type SettingError struct {
	Name string
	Path string
	Msg  string
}

func (e SettingError) Error() string { return fmt.Sprintf("settings.%s: %s", e.Path, e.Msg) }

// SettingsError lists every setting refused by New.
type SettingsError struct {
	Errors []SettingError
}

func (e *SettingsError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, se := range e.Errors {
		msgs[i] = se.Error()
	}
	return strings.Join(msgs, "\n")
}

// SettingsSchema returns the schema of settings: every name a loaded module reads, sorted.
func (e *Engine) SettingsSchema() []Setting { return e.settings }

// CheckSettings checks settings (the future data.warden.config) against the schema:
// unknown names (with a suggestion) and values whose JSON type differs from every
// declared default are refused, in name order.
func (e *Engine) CheckSettings(settings map[string]any) []SettingError {
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	slices.Sort(names)
	known := make([]string, len(e.settings))
	for i, s := range e.settings {
		known[i] = s.Name
	}
	var errs []SettingError
	for _, name := range names {
		i, ok := slices.BinarySearch(known, name)
		if !ok {
			msg := "unknown setting"
			if sg := snapshot.Suggest(name, known); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			} else {
				msg += fmt.Sprintf(": no policy reads it (known: %s)", strings.Join(known, ", "))
			}
			errs = append(errs, SettingError{Name: name, Path: name, Msg: msg})
			continue
		}
		s := e.settings[i]
		if len(s.Types) == 0 {
			continue
		}
		var first *SettingError
		for _, typ := range s.Types {
			path, msg := typeMismatch(name, typ, settings[name])
			if msg == "" {
				first = nil
				break
			}
			if first == nil {
				first = &SettingError{Name: name, Path: path, Msg: msg + fmt.Sprintf(" like its default %s", jsonText(s.Default))}
				if len(s.Where) > 0 {
					first.Msg += fmt.Sprintf(" (%s)", s.Where[0])
				}
			}
		}
		if first != nil {
			errs = append(errs, *first)
		}
	}
	return errs
}

// typeMismatch checks v against a type of the schema and returns where and how it
// differs, or an empty msg.
func typeMismatch(path, typ string, v any) (string, string) {
	got := typeOfGo(v)
	elem, isArray := strings.CutPrefix(typ, "array of ")
	switch {
	case typ == "integer" && got == "integer" && negative(v):
		// Every integral setting of the pack counts something (days, ports, lengths,
		// prefix bits): a negative one would switch its policies off.
		return path, fmt.Sprintf("is %s, want a count of zero or more", describeGo(v))
	case typ == got, typ == "number" && got == "integer":
		return path, ""
	case isArray && got == "array":
		for i, x := range v.([]any) {
			if p, msg := typeMismatch(fmt.Sprintf("%s[%d]", path, i), elem, x); msg != "" {
				return p, msg
			}
		}
		return path, ""
	}
	return path, fmt.Sprintf("is %s, want %s %s", describeGo(v), article(typ), typ)
}

// negative reports whether an integral settings value is below zero.
func negative(v any) bool {
	switch x := v.(type) {
	case int:
		return x < 0
	case int64:
		return x < 0
	case float64:
		return x < 0
	case json.Number:
		n, err := x.Int64()
		return err == nil && n < 0
	}
	return false
}

func article(typ string) string {
	if strings.IndexByte("aeiou", typ[0]) >= 0 {
		return "an"
	}
	return "a"
}

// describeGo says what a settings value is: `a string ("ninety")`.
func describeGo(v any) string {
	t := typeOfGo(v)
	switch t {
	case "null":
		return "null"
	case "array", "object":
		return article(t) + " " + t
	}
	return fmt.Sprintf("%s %s (%s)", article(t), t, jsonText(v))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

// typeOfGo is the JSON type of a value decoded from YAML or JSON.
func typeOfGo(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case float32:
		if float64(x) == math.Trunc(float64(x)) && !math.IsInf(float64(x), 0) {
			return "integer"
		}
		return "number"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// typeOfTerm is the JSON type of a default written in Rego, "" when it is not a
// constant (a call, a comprehension, a ref that does not lead to one).
func typeOfTerm(c *ast.Compiler, t *ast.Term, depth int) (string, any) {
	switch v := t.Value.(type) {
	case ast.Null:
		return "null", nil
	case ast.Boolean:
		return "boolean", bool(v)
	case ast.String:
		return "string", string(v)
	case ast.Number:
		// An integral default (days, ports, lengths) asks for an integer: 60.5 days would
		// only fail inside the policy, at run time.
		if _, err := json.Number(v).Int64(); err == nil {
			return "integer", json.Number(v)
		}
		return "number", json.Number(v)
	case ast.Object:
		if !v.IsGround() {
			return "object", nil
		}
		x, _ := ast.JSON(v)
		return "object", x
	case *ast.Array, ast.Set:
		// A set default reads like an array setting: YAML has no sets.
		var elems []*ast.Term
		if a, ok := v.(*ast.Array); ok {
			for i := range a.Len() {
				elems = append(elems, a.Elem(i))
			}
		} else {
			elems = v.(ast.Set).Slice()
		}
		elem := ""
		for i, e := range elems {
			et, _ := typeOfTerm(c, e, depth+1)
			if i > 0 && et != elem {
				elem = ""
				break
			}
			elem = et
		}
		var x any
		if t.IsGround() {
			x, _ = ast.JSON(t.Value)
			if s, ok := x.([]any); ok {
				slices.SortFunc(s, func(a, b any) int { return strings.Compare(jsonText(a), jsonText(b)) })
			}
		}
		if elem == "" || strings.HasPrefix(elem, "array") {
			return "array", x
		}
		return "array of " + elem, x
	case ast.Ref:
		// A default kept in the library (net.default_database_ports): a constant rule.
		if depth > 3 {
			return "", nil
		}
		rules := c.GetRulesExact(v)
		if len(rules) != 1 || len(rules[0].Head.Args) > 0 || rules[0].Head.Value == nil || !rules[0].Head.Value.IsGround() {
			return "", nil
		}
		return typeOfTerm(c, rules[0].Head.Value, depth+1)
	}
	return "", nil
}

var (
	configRef  = ast.MustParseRef("data.warden.config")
	settingRef = ast.MustParseRef("data.warden.lib.config.setting")
)

// settingsSchema walks the compiled modules for the settings they read, with the type of
// the default each declares.
func settingsSchema(c *ast.Compiler) []Setting {
	byName := map[string]*Setting{}
	add := func(name string, loc *ast.Location, def *ast.Term) {
		s := byName[name]
		if s == nil {
			s = &Setting{Name: name}
			byName[name] = s
		}
		if loc != nil {
			s.Where = append(s.Where, fmt.Sprintf("%s:%d", loc.File, loc.Row))
		}
		if def == nil {
			return
		}
		typ, v := typeOfTerm(c, def, 0)
		if typ == "" {
			return
		}
		if len(s.Types) == 0 {
			s.Default = v
		}
		if !slices.Contains(s.Types, typ) {
			s.Types = append(s.Types, typ)
		}
	}
	for _, m := range c.Modules {
		defaults := map[string]*ast.Term{}
		for _, r := range m.Rules {
			if r.Default && r.Head.Value != nil {
				defaults[r.Head.Ref().String()] = r.Head.Value
			}
		}
		for _, top := range m.Rules {
			for r := top; r != nil; r = r.Else {
				var def *ast.Term
				if r.Else != nil {
					def = boundValue(r.Else.Head.Value, r.Else.Body)
				} else if r == top {
					def = defaults[top.Head.Ref().String()]
				}
				visit := func(x any) {
					ast.WalkRefs(x, func(ref ast.Ref) bool {
						if len(ref) > len(configRef) && ref.HasPrefix(configRef) {
							if name, ok := ref[len(configRef)].Value.(ast.String); ok {
								add(string(name), ref[0].Location, def)
							}
						}
						return false
					})
					ast.WalkExprs(x, func(e *ast.Expr) bool {
						if !e.IsCall() || !e.Operator().Equal(settingRef) || len(e.Operands()) < 2 {
							return false
						}
						if name, ok := e.Operand(0).Value.(ast.String); ok {
							add(string(name), e.Location, e.Operand(1))
						}
						return false
					})
				}
				visit(r.Head)
				visit(r.Body)
			}
		}
	}
	out := make([]Setting, 0, len(byName))
	for _, s := range byName {
		slices.Sort(s.Where)
		s.Where = slices.Compact(s.Where)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Setting) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// boundValue is what a compiled rule's head value stands for: the compiler rewrites a
// head "else := net.default_database_ports" to a variable bound in the rule's body.
func boundValue(t *ast.Term, body ast.Body) *ast.Term {
	v, ok := t.Value.(ast.Var)
	if !ok {
		return t
	}
	for _, e := range body {
		if !e.IsEquality() && !e.IsAssignment() {
			continue
		}
		if lhs, rhs := e.Operand(0), e.Operand(1); lhs != nil && rhs != nil {
			if lhs.Value.Compare(v) == 0 {
				return rhs
			}
			if rhs.Value.Compare(v) == 0 {
				return lhs
			}
		}
	}
	return t
}
