package remediate

import (
	"context"
	"errors"

	"github.com/warden-sec/warden/remediators"
)

// call makes the call of an action whose intent is recorded, then verifies it. A
// multi-step fix runs its due steps instead (advance).
func (m *Machine) call(ctx context.Context, r *Record, rem remediators.Remediator, accounts []string) (Item, error) {
	if st, ok := rem.(remediators.Stepper); ok {
		return m.advance(ctx, r, st, accounts)
	}
	err := rem.Apply(ctx, r.Action)
	wrote := true
	switch {
	case errors.Is(err, remediators.ErrConverged):
		wrote = false
	case err != nil && Transient(err):
		// A server error or a timeout does not say that the call changed nothing: the
		// cloud may have applied it and failed to answer. A fix found in place is
		// verified, not recorded failed while the cloud has it.
		if o, oerr := m.observe(ctx, r, rem, accounts); oerr == nil && o.converged() {
			return m.verify(ctx, r, rem, accounts, true)
		}
		it, ferr := m.fail(ctx, r, StateApplying, "apply: "+err.Error(), true)
		it.Transient = true
		return it, ferr
	case err != nil:
		return m.fail(ctx, r, StateApplying, "apply: "+err.Error(), true)
	}
	return m.verify(ctx, r, rem, accounts, wrote)
}
