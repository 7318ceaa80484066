package remediate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// StepRetry is how long a multi-step fix waits to retry a step that failed half-way.
const StepRetry = 15 * time.Minute

// advance runs the due steps of a multi-step fix whose intent is recorded (state
// applying), recording each step's progress with its audit entry before the next runs.
// It parks the action in progress when the next step is not due yet or a step holds
// it, fails it when a step fails, and verifies it like any fix when the last step is
// done. An interruption (the context ends) leaves it applying: the next run resumes.
func (m *Machine) advance(ctx context.Context, r *Record, st remediators.Stepper, accounts []string) (Item, error) {
	var p remediators.Progress
	if r.Progress != nil {
		p = *r.Progress
	}
	park := func() (Item, error) {
		why := m.waiting(&p)
		err := m.inTx(ctx, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, StateApplying, StateInProgress, "", why, nil)
		})
		return item(r, why), err
	}
	for !p.Done {
		now := m.now().UTC()
		if p.Due.After(now) {
			return park()
		}
		next, err := st.Step(ctx, r.Action, p, now)
		if err != nil {
			if ctx.Err() != nil {
				return Item{}, fmt.Errorf("action %s: step after %s: %w", r.ID, stepName(&p), ctx.Err())
			}
			if p.Step == "" {
				// Nothing was changed yet: the fix cannot start (a user already at two
				// keys), and says why.
				return m.fail(ctx, r, StateApplying, "first step: "+err.Error(), false)
			}
			// Half-way through, giving up would strand what the earlier steps made (a
			// new key): the step is retried later, and rollback stays possible.
			p.Hold = "the step after " + stepName(&p) + " failed: " + err.Error()
			p.Due = now.Add(StepRetry)
			if err := m.inTx(ctx, func(tx *store.Tx) error { return m.saveProgress(ctx, tx, r, p) }); err != nil {
				return Item{}, err
			}
			return park()
		}
		if err := m.inTx(ctx, func(tx *store.Tx) error { return m.saveProgress(ctx, tx, r, next) }); err != nil {
			return Item{}, err
		}
		p = next
		if p.Hold != "" {
			// A hold waits for a person, or for its due time to look again.
			return park()
		}
	}
	return m.verify(ctx, r, st, accounts, true)
}

// saveProgress records a completed step by compare-and-set on the applying action,
// with its history event and its audit entry.
func (m *Machine) saveProgress(ctx context.Context, tx *store.Tx, r *Record, p remediators.Progress) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("action %s: encode progress: %w", r.ID, err)
	}
	now := m.now().UTC()
	detail := "step " + p.Step + " done"
	if p.Hold != "" {
		detail = "held after step " + stepName(&p) + ": " + p.Hold
	}
	res, err := tx.ExecContext(ctx, `UPDATE actions SET progress = ?, detail = ?, updated_at = ? WHERE id = ? AND state = ? AND content_hash = ? AND generation = ?`,
		string(b), detail, store.FormatTime(now), r.ID, string(StateApplying), r.Hash, r.Generation)
	if err != nil {
		return fmt.Errorf("action %s: record step %s: %w", r.ID, p.Step, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("action %s: record step %s: %w", r.ID, p.Step, ErrStateChanged)
	}
	if err := m.event(ctx, tx, r.ID, StateApplying, detail, now); err != nil {
		return err
	}
	data := map[string]any{"step": p.Step, "done": p.Done}
	if !p.Due.IsZero() {
		data["due"] = store.FormatTime(p.Due)
	}
	if p.Hold != "" {
		data["hold"] = p.Hold
	}
	if len(p.Data) > 0 {
		data["data"] = p.Data
	}
	if err := m.audit(ctx, tx, audit.KindActionStep, r, detail, data); err != nil {
		return err
	}
	r.Progress, r.Detail, r.UpdatedAt = &p, detail, now
	return nil
}

// due reports whether the next step of an action in progress may run now (a held one
// is tried again at its due time), and if not, what it waits for.
func (m *Machine) due(r *Record) (bool, string) {
	if r.Progress == nil || !r.Progress.Due.After(m.now()) {
		return true, ""
	}
	return false, m.waiting(r.Progress)
}

// waiting says what a parked multi-step fix waits for.
func (m *Machine) waiting(p *remediators.Progress) string {
	switch {
	case p.Hold != "" && !p.Due.IsZero():
		return fmt.Sprintf("held after step %s: %s; checked again at %s", p.Step, p.Hold, store.FormatTime(p.Due))
	case p.Hold != "":
		return fmt.Sprintf("held after step %s: %s", p.Step, p.Hold)
	}
	return fmt.Sprintf("step %s done; the next step is due at %s", p.Step, store.FormatTime(p.Due))
}

func stepName(p *remediators.Progress) string {
	if p == nil || p.Step == "" {
		return "start"
	}
	return p.Step
}

// ApplyDue runs what is ready without a plan file, as warden serve's worker does: it
// resolves interrupted actions, expires overdue approval requests, and runs the
// actions whose request has reached its quorum and the multi-step fixes whose next step
// is due — within the blast-radius caps, the breaker and the canary waves, as Apply.
func (m *Machine) ApplyDue(ctx context.Context) (*Result, error) {
	pause, err := m.Paused(ctx)
	if err != nil {
		return nil, err
	}
	if pause.Paused {
		return nil, fmt.Errorf("%w by %s: %s (warden resume lifts it)", ErrPaused, pause.Actor, pause.Reason)
	}
	res := &Result{}
	if res.Recovered, err = m.Recover(ctx, nil, res); err != nil {
		return nil, err
	}
	if err := m.inTx(ctx, func(tx *store.Tx) error {
		_, err := m.gate.ExpireDue(ctx, tx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("expire approval requests: %w", err)
	}
	all, err := m.Actions(ctx)
	if err != nil {
		return nil, err
	}
	var runnable []*Record
	for _, r := range all {
		switch r.State {
		case StatePending, StateApproved, StateInProgress:
		default:
			continue
		}
		it, run, err := m.decide(ctx, r)
		if err != nil {
			return nil, err
		}
		if run {
			runnable = append(runnable, r)
		} else if r.State != StatePending {
			res.Items = append(res.Items, it)
		}
	}
	runnable = m.cap(ctx, runnable, res)
	if err := m.run(ctx, runnable, nil, res); err != nil {
		return nil, err
	}
	return res, nil
}

// rollbackSteps undoes a multi-step fix from its progress: before its last step or
// after it, in progress, failed mid-way or verified.
func (m *Machine) rollbackSteps(ctx context.Context, r *Record, st remediators.Stepper) (Item, error) {
	var p remediators.Progress
	if r.Progress != nil {
		p = *r.Progress
	}
	from := r.State
	if err := m.inTx(ctx, func(tx *store.Tx) error {
		return m.audit(ctx, tx, audit.KindActionIntent, r, "rollback", map[string]any{"op": "rollback", "after_step": p.Step})
	}); err != nil {
		return Item{}, err
	}
	if err := st.Undo(ctx, r.Action, p); err != nil {
		auditErr := m.inTx(ctx, func(tx *store.Tx) error {
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
		auditErr := m.inTx(ctx, func(tx *store.Tx) error {
			return m.audit(ctx, tx, audit.KindActionFailed, r, detail, map[string]any{"op": "rollback"})
		})
		return item(r, detail), errors.Join(fmt.Errorf("rollback %s: %s", r.ID, detail), auditErr)
	}
	err = m.inTx(ctx, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, from, StateRolledBack, audit.KindActionRolledBack, "undone after step "+stepName(&p)+" and observed", nil)
	})
	return item(r, "rolled back after step "+stepName(&p)), err
}
