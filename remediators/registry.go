package remediators

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Registry finds a remediator by the action name policies give in
// custom.remediation.action. It is built once and only read afterwards, so it is safe
// for concurrent use.
type Registry struct {
	byName map[string]Remediator
	names  []string
}

// IsAction reports whether a policy's remediation name asks for a fix at all, as
// opposed to "notify" (a notice only) and "manual" (a person fixes it), which produce
// notices only. A policy may name those; a remediator may not be called so.
func IsAction(name string) bool { return name != "" && name != "notify" && name != "manual" }

// Planned declares the actions the policy pack names whose remediators have not arrived
// yet: their parameters are known, so that the engine can check the policies naming
// them at load, and a plan turns their findings into notices ("no remediator yet")
// rather than pretending to fix them. None today: every action the pack names has its
// remediator. A fresh map on every call.
func Planned() map[string][]Param {
	return map[string][]Param{}
}

// NewRegistry registers rs. It refuses a nil remediator, one without a name, one named
// like a non-action ("notify", "manual"), two with the same name, and parameter
// declarations that are empty or repeat a name.
func NewRegistry(rs ...Remediator) (*Registry, error) {
	reg := &Registry{byName: make(map[string]Remediator, len(rs))}
	var errs []error
	for i, r := range rs {
		if r == nil {
			errs = append(errs, fmt.Errorf("register remediator %d: nil", i))
			continue
		}
		spec := r.Spec()
		name := spec.Action
		if err := checkSpec(spec); err != nil {
			errs = append(errs, fmt.Errorf("register remediator %q: %w", name, err))
			continue
		}
		if _, dup := reg.byName[name]; dup {
			errs = append(errs, fmt.Errorf("register remediator %q: registered twice", name))
			continue
		}
		reg.byName[name] = r
		reg.names = append(reg.names, name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.Sort(reg.names)
	return reg, nil
}

// checkSpec validates what a remediator declares about itself.
func checkSpec(s Spec) error {
	name := s.Action
	switch {
	case name == "":
		return errors.New("no action name")
	case !IsAction(name):
		return fmt.Errorf("%q is not an action: policies use it for notices only", name)
	case strings.TrimSpace(name) != name || strings.ContainsAny(name, " \t\n"):
		return errors.New("the action name contains spaces")
	case len(s.ResourceTypes) == 0:
		return errors.New("no resource types")
	}
	seen := map[string]bool{}
	for _, p := range s.Params {
		if p.Name == "" {
			return errors.New("a parameter without a name")
		}
		if seen[p.Name] {
			return fmt.Errorf("parameter %q declared twice", p.Name)
		}
		seen[p.Name] = true
	}
	if !s.Rollback.Possible && s.Rollback.Reason == "" {
		return errors.New("no rollback, and no reason given why")
	}
	return nil
}

// Get returns the remediator of an action.
func (r *Registry) Get(action string) (Remediator, bool) {
	rem, ok := r.byName[action]
	return rem, ok
}

// Names lists the registered actions, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Catalog is every action a policy may name, with the parameters each needs: the
// registered remediators', and the Planned ones not registered yet. The engine checks
// the policy pack against it at load: an unknown action, or a required parameter a
// policy's violations do not carry, is an error. "notify" and "manual" are not in it.
func (r *Registry) Catalog() map[string][]Param {
	out := Planned()
	for name, rem := range r.byName {
		out[name] = slices.Clone(rem.Spec().Params)
	}
	return out
}

// Pending reports whether an action is one the catalog knows but no remediator of this
// registry implements yet (Planned).
func (r *Registry) Pending(action string) bool {
	_, registered := r.byName[action]
	_, planned := Planned()[action]
	return planned && !registered
}

// Actions lists the catalog's action names, sorted.
func (r *Registry) Actions() []string {
	return slices.Sorted(maps.Keys(r.Catalog()))
}
