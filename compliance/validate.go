package compliance

import (
	"errors"
	"fmt"
	"slices"

	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

// Validate checks that the framework holds together: family and control ids are unique,
// every family's parent and every control's family exist, and each key_match names one of
// its control's policies. With known, it also refuses a policy id for which known
// returns false (pass the ids of the loaded policies: a mapping to a policy that does not
// exist would leave its control silently unchecked); with nil, policy ids are not
// checked. Every problem found is reported, each as an *Error with its line.
func (f *Framework) Validate(known func(policyID string) bool) error {
	var errs []error
	bad := func(line int, field, msg string) {
		errs = append(errs, &Error{File: f.File, Err: &yamlerr.Error{Line: line, Field: field, Msg: msg}})
	}
	families := map[string]int{}
	var familyIDs []string
	for i, fam := range f.Families {
		field := fmt.Sprintf("families[%d]", i)
		if first, dup := families[fam.ID]; dup {
			bad(fam.line, field+".id", fmt.Sprintf("family %q is declared twice (first at line %d)", fam.ID, first))
			continue
		}
		// A parent is declared before its parts, which also rules out cycles.
		if fam.Parent != "" {
			if _, ok := families[fam.Parent]; !ok {
				bad(fam.line, field+".parent", unknownName("family", fam.Parent, familyIDs)+" (a parent is declared before its parts)")
			}
		}
		families[fam.ID] = fam.line
		familyIDs = append(familyIDs, fam.ID)
	}
	controls := map[string]int{}
	for i, c := range f.Controls {
		field := fmt.Sprintf("controls[%d]", i)
		if first, dup := controls[c.ID]; dup {
			bad(c.line, field+".id", fmt.Sprintf("control %q is listed twice (first at line %d)", c.ID, first))
		} else {
			controls[c.ID] = c.line
		}
		if _, ok := families[c.Family]; !ok {
			bad(c.line, field+".family", unknownName("family", c.Family, familyIDs))
		}
		for j, p := range c.Policies {
			if known != nil && !known(p) {
				bad(c.line, fmt.Sprintf("%s.policies[%d]", field, j), fmt.Sprintf("unknown policy %q: no loaded policy has this id", p))
			}
		}
		for p := range c.KeyMatch {
			if !slices.Contains(c.Policies, p) {
				bad(c.line, field+".key_match."+p, fmt.Sprintf("%s is not one of the control's policies", p))
			}
		}
	}
	return errors.Join(errs...)
}

func unknownName(what, name string, known []string) string {
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if s := suggest.Closest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}
