package engine

import (
	"fmt"
	"slices"
	"sort"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/snapshot"
)

// ActionParam is one parameter a remediation action takes from a violation.
type ActionParam struct {
	Name     string
	Required bool
}

// Notices are the remediation actions that change nothing: their findings are reported,
// never planned.
var notices = []string{"notify", "manual"}

// checkActions checks each policy's remediation against the catalog of actions warden
// can apply (or will: the catalog knows planned ones): an unknown action, a required
// param the policy does not declare, or a declared name the action does not take, is an
// error naming the policy's file and line.
func checkActions(ps []*Policy, catalog map[string][]ActionParam) []error {
	var names []string
	for n := range catalog {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, p := range ps {
		fail := func(msg string) {
			errs = append(errs, &PolicyError{File: p.File, Line: p.line, Col: p.col, Msg: "METADATA custom.remediation: " + msg})
		}
		action := p.Remediation.Action
		if slices.Contains(notices, action) {
			if len(p.Params) > 0 {
				fail(fmt.Sprintf("%s takes no params", action))
			}
			continue
		}
		params, ok := catalog[action]
		if !ok {
			msg := fmt.Sprintf("unknown action %q", action)
			if sg := suggest.Closest(action, names); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			fail(msg + "; use notify or manual when no fix is automated")
			continue
		}
		for _, ap := range params {
			if ap.Required && !slices.Contains(p.Params, ap.Name) {
				fail(fmt.Sprintf("action %s needs param %q: declare it in params and set it in each violation", action, ap.Name))
			}
		}
		for _, name := range p.Params {
			if !slices.ContainsFunc(params, func(ap ActionParam) bool { return ap.Name == name }) {
				fail(fmt.Sprintf("action %s takes no param %q", action, name))
			}
		}
	}
	return errs
}

// required reports whether the action requires the param. Without a catalog nothing is
// known to be required: declared params are passed on when present.
func (e *Engine) required(action, name string) bool {
	for _, ap := range e.actions[action] {
		if ap.Name == name {
			return ap.Required
		}
	}
	return false
}

// ownAction completes a finding whose violation names an action of its own, other than its
// policy's: a policy that only notifies may offer a fix where the resource allows one (a
// grant the principal's usage shows unused). Such a violation must say the fix's risk
// ("risk": "high"), as the policy's risk is its own action's (none, for a notice): a fix
// without one would pass the gates as if it changed nothing. Its params are those the
// action takes, read from the violation's fields.
func (e *Engine) ownAction(p *Policy, res *snapshot.Resource, f findings.Finding, v any) (findings.Finding, *findings.EvalError) {
	fields, _ := v.(map[string]any)
	fail := func(msg string) (findings.Finding, *findings.EvalError) {
		return f, &findings.EvalError{Policy: p.ID, Resource: res.UID, Error: fmt.Sprintf("violation %q %s", f.Message, msg)}
	}
	if slices.Contains(notices, f.Remediation.Action) {
		f.Remediation.Risk = findings.RiskNone
		f.Remediation.Params = nil
		return f, nil
	}
	name, _ := fields["risk"].(string)
	risk, err := findings.ParseRisk(name)
	if err != nil || risk == findings.RiskNone {
		return fail(fmt.Sprintf("names the action %s without its risk: set \"risk\" to low, medium, high or critical", f.Remediation.Action))
	}
	f.Remediation.Risk = risk
	f.Remediation.Params = nil
	for _, ap := range e.actions[f.Remediation.Action] {
		val, ok := fields[ap.Name]
		if !ok || val == nil {
			if ap.Required {
				return fail(fmt.Sprintf("lacks %q, a param its action %s requires", ap.Name, f.Remediation.Action))
			}
			continue
		}
		if f.Remediation.Params == nil {
			f.Remediation.Params = map[string]any{}
		}
		f.Remediation.Params[ap.Name] = val
		delete(f.Details, ap.Name)
	}
	return f, nil
}
