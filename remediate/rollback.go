package remediate

import (
	"context"
	"encoding/json"
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
	if err := m.inTx(ctx, func(tx *store.Tx) error {
		return m.audit(ctx, tx, audit.KindActionIntent, r, "rollback", map[string]any{"op": "rollback", "before": r.Before})
	}); err != nil {
		return Item{}, err
	}
	if err := rem.Rollback(ctx, r.Action); err != nil {
		auditErr := m.inTx(ctx, func(tx *store.Tx) error {
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
		auditErr := m.inTx(ctx, func(tx *store.Tx) error {
			return m.audit(ctx, tx, audit.KindActionFailed, r, detail, map[string]any{"op": "rollback"})
		})
		return item(r, detail), errors.Join(fmt.Errorf("rollback %s: %s", id, detail), auditErr)
	}
	err = m.inTx(ctx, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, StateVerified, StateRolledBack, audit.KindActionRolledBack, "before-state restored and observed", nil)
	})
	return item(r, "rolled back: the before-state is restored"), err
}

// planAccounts returns the accounts of the snapshot a plan was made from, or def.
func (m *Machine) planAccounts(ctx context.Context, hash string, def []string) ([]string, error) {
	if len(def) > 0 {
		return def, nil
	}
	var data string
	err := m.st.Read(ctx, func(q *store.Reader) error {
		return q.QueryRowContext(ctx, `SELECT data FROM plans WHERE hash = ?`, hash).Scan(&data)
	})
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %w", short(hash), err)
	}
	var p Plan
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return nil, fmt.Errorf("read plan %s: %w", short(hash), err)
	}
	return p.Accounts, nil
}
