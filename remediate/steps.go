package remediate

import (
	"context"
	"fmt"
	"time"

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
		err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
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
			if err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error { return m.saveProgress(ctx, tx, r, p) }); err != nil {
				return Item{}, err
			}
			return park()
		}
		if err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error { return m.saveProgress(ctx, tx, r, next) }); err != nil {
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
