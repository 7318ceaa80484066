package remediate

import (
	"context"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// ErrNoSuchAction is returned for an action id the store does not know.
var ErrNoSuchAction = errors.New("no such action")

// Rollback restores the before-state of a verified action where the cloud allows it,
// verified by observing again, and audited. It is refused, with the reason, where no
// rollback exists or the action was not applied.
func (m *Machine) Rollback(ctx context.Context, id string) (Item, error) {
	pause, err := m.Paused(ctx)
	if err != nil {
		return Item{}, err
	}
	if pause.Paused {
		return Item{}, fmt.Errorf("%w by %s: %s (warden resume lifts it)", ErrPaused, pause.Actor, pause.Reason)
	}
	r, err := m.Action(ctx, id)
	if err != nil {
		return Item{}, err
	}
	if r == nil {
		return Item{}, fmt.Errorf("rollback %s: %w (warden actions list shows them)", id, ErrNoSuchAction)
	}
	if !r.Rollback.Possible {
		return Item{}, fmt.Errorf("rollback %s: %w: %s", id, remediators.ErrNoRollback, r.Rollback.Reason)
	}
	rem, err := m.remediator(r)
	if err != nil {
		return Item{}, err
	}
	if st, ok := rem.(remediators.Stepper); ok {
		// A multi-step fix can be undone between its steps too, and after a failed one.
		if r.State != StateVerified && r.State != StateInProgress && !(r.State == StateFailed && r.Progress != nil) {
			return Item{}, fmt.Errorf("rollback %s: the action is %s; a multi-step fix is rolled back in progress, verified, or after a failed step", id, r.State)
		}
		return m.rollbackSteps(ctx, r, st)
	}
	if r.State != StateVerified {
		return Item{}, fmt.Errorf("rollback %s: the action is %s; only an applied and verified action can be rolled back", id, r.State)
	}
	if err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		return m.audit(ctx, tx, audit.KindActionIntent, r, "rollback", map[string]any{"op": "rollback", "before": r.Before})
	}); err != nil {
		return Item{}, err
	}
	if err := rem.Rollback(ctx, r.Action); err != nil {
		auditErr := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.audit(ctx, tx, audit.KindActionFailed, r, "rollback: "+err.Error(), map[string]any{"op": "rollback"})
		})
		return item(r, "rollback failed: "+err.Error()), errors.Join(fmt.Errorf("rollback %s: %w", id, err), auditErr)
	}
	accts, err := m.planAccounts(ctx, r.PlanHash, nil)
	if err != nil {
		return Item{}, err
	}
	o, err := m.observe(ctx, r, rem, accts)
	if err != nil {
		return item(r, "rolled back, but the target could not be observed: "+err.Error()), fmt.Errorf("rollback %s: verify: %w", id, err)
	}
	if o.part == nil || o.drifted(r) {
		detail := "rollback call succeeded but the before-state is not back"
		auditErr := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.audit(ctx, tx, audit.KindActionFailed, r, detail, map[string]any{"op": "rollback"})
		})
		return item(r, detail), errors.Join(fmt.Errorf("rollback %s: %s", id, detail), auditErr)
	}
	err = m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, StateVerified, StateRolledBack, audit.KindActionRolledBack, "before-state restored and observed", nil)
	})
	return item(r, "rolled back: the before-state is restored"), err
}

// rollbackSteps undoes a multi-step fix from its progress: before its last step or
// after it, in progress, failed mid-way or verified.
func (m *Machine) rollbackSteps(ctx context.Context, r *Record, st remediators.Stepper) (Item, error) {
	var p remediators.Progress
	if r.Progress != nil {
		p = *r.Progress
	}
	from := r.State
	if err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		return m.audit(ctx, tx, audit.KindActionIntent, r, "rollback", map[string]any{"op": "rollback", "after_step": p.Step})
	}); err != nil {
		return Item{}, err
	}
	if err := st.Undo(ctx, r.Action, p); err != nil {
		auditErr := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.audit(ctx, tx, audit.KindActionFailed, r, "rollback: "+err.Error(), map[string]any{"op": "rollback"})
		})
		if errors.Is(err, remediators.ErrNoRollback) {
			return item(r, "rollback refused: "+err.Error()), errors.Join(fmt.Errorf("rollback %s: %w", r.ID, err), auditErr)
		}
		return item(r, "rollback failed: "+err.Error()), errors.Join(fmt.Errorf("rollback %s: %w", r.ID, err), auditErr)
	}
	accts, err := m.planAccounts(ctx, r.PlanHash, nil)
	if err != nil {
		return Item{}, err
	}
	o, err := m.observe(ctx, r, st, accts)
	if err != nil {
		return item(r, "rolled back, but the target could not be observed: "+err.Error()), fmt.Errorf("rollback %s: verify: %w", r.ID, err)
	}
	// The steps change the target by design (a key deactivated, then reactivated): what
	// must be back is the part itself, in use again, not its bytes as planned.
	if o.part == nil {
		detail := "rollback calls succeeded but the target's part is not back"
		auditErr := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.audit(ctx, tx, audit.KindActionFailed, r, detail, map[string]any{"op": "rollback"})
		})
		return item(r, detail), errors.Join(fmt.Errorf("rollback %s: %s", r.ID, detail), auditErr)
	}
	err = m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, from, StateRolledBack, audit.KindActionRolledBack, "undone after step "+stepName(&p)+" and observed", nil)
	})
	return item(r, "rolled back after step "+stepName(&p)), err
}
