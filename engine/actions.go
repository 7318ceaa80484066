package engine

import (
	"fmt"
	"slices"
	"sort"

	"github.com/warden-sec/warden/internal/suggest"
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
