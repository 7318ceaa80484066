package remediate

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// recheck is the drift re-check before the intent: it reads the target again and lets
// the action go on (ok) only while its part is there as planned. A target found
// converged is recorded verified without a write; a drifted one voids the action and its
// approvals; one that cannot be read fails it.
func (m *Machine) recheck(ctx context.Context, r *Record, rem remediators.Remediator, accounts []string) (Item, bool, error) {
	before, err := m.observe(ctx, r, rem, accounts)
	if err != nil {
		it, ferr := m.fail(ctx, r, r.State, "drift re-check: "+err.Error(), false)
		it.Transient = Transient(err)
		return it, false, ferr
	}
	from := r.State
	if before.converged() {
		err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, from, StateVerified, audit.KindActionVerified, "already converged: no write needed", map[string]any{"wrote": false})
		})
		return item(r, "already converged: no write"), false, err
	}
	if before.part == nil || before.drifted(r) {
		why := "the target drifted since the plan: a fresh plan is needed"
		if before.part == nil {
			why = "the part is gone but the policy still finds the problem: a fresh plan is needed"
		}
		err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			if err := m.gate.Void(ctx, tx, r.ID, why); err != nil {
				return fmt.Errorf("action %s: void its approvals: %w", r.ID, err)
			}
			return m.transition(ctx, tx, r, from, StateVoided, audit.KindActionVoided, why, nil)
		})
		return item(r, "voided: "+why), false, err
	}
	return Item{}, true, nil
}
