package remediate

import (
	"context"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// Recover resolves the actions an interrupted run left applying (an intent without an
// outcome): it observes each target; a fix in place is recorded verified without a
// second call, an untouched target gets its call now, a drifted one fails.
func (m *Machine) Recover(ctx context.Context, accounts []string, res *Result) (int, error) {
	// Only the actions left applying are read: every fix job of warden serve recovers
	// first, and must not read every action the store holds to find none.
	all, err := m.actionsWhere(ctx, "state = ?", string(StateApplying))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range all {
		if m.lease > 0 && m.now().Sub(r.UpdatedAt) < m.lease {
			continue // maybe in flight in another process: not interrupted yet
		}
		// Claimed here, so that no run of this process executes it meanwhile; read again,
		// since the run that held it may have finished it since the list was read.
		if _, busy := m.inflight.LoadOrStore(r.ID, true); busy {
			continue // in flight here: not interrupted
		}
		cur, err := m.Action(ctx, r.ID)
		if err != nil || cur == nil || cur.State != StateApplying {
			m.inflight.Delete(r.ID)
			if err != nil {
				return n, err
			}
			continue
		}
		r = cur
		release, err := m.st.Hold(ctx, "target/"+r.Target)
		if err != nil {
			m.inflight.Delete(r.ID)
			return n, fmt.Errorf("action %s: wait for other fixes of %s: %w", r.ID, r.Target, err)
		}
		done, err := m.recoverOne(ctx, r, accounts, res)
		release()
		m.inflight.Delete(r.ID)
		if errors.Is(err, ErrStateChanged) {
			continue // another process resolved it meanwhile
		}
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// recoverOne resolves one action an interrupted run left applying; done is false when it
// could not be resolved yet (its target could not be read).
func (m *Machine) recoverOne(ctx context.Context, r *Record, accounts []string, res *Result) (done bool, err error) {
	rem, err := m.remediator(r)
	if err != nil {
		return false, err
	}
	accts, err := m.planAccounts(ctx, r.PlanHash, accounts)
	if err != nil {
		return false, err
	}
	o, err := m.observe(ctx, r, rem, accts)
	if err != nil {
		res.Items = append(res.Items, item(r, "interrupted earlier; still unresolved: "+err.Error()))
		return true, nil
	}
	if st, ok := rem.(remediators.Stepper); ok && !o.converged() {
		// Each step finds what its interrupted attempt did: resume at it.
		after := stepName(r.Progress)
		it, err := m.advance(ctx, r, st, accts)
		if err != nil {
			return false, err
		}
		it.Outcome = "interrupted earlier after step " + after + ": " + it.Outcome
		res.Items = append(res.Items, it)
		return true, nil
	}
	switch {
	case o.converged():
		err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, StateApplying, StateVerified, audit.KindActionVerified, "resolved after an interruption: the fix was in place", map[string]any{"wrote": false, "recovered": true})
		})
		if err != nil {
			return false, err
		}
		res.Items = append(res.Items, item(r, "interrupted earlier: found applied, verified"))
	case o.part != nil && !o.drifted(r):
		it, err := m.call(ctx, r, rem, accts)
		if err != nil {
			return false, err
		}
		it.Outcome = "interrupted earlier before its call: " + it.Outcome
		res.Items = append(res.Items, it)
	default:
		it, err := m.fail(ctx, r, StateApplying, "interrupted earlier, and the target changed meanwhile", false)
		if err != nil {
			return false, err
		}
		res.Items = append(res.Items, it)
	}
	return true, nil
}
