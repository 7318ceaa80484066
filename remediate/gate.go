package remediate

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
)

// decide passes one registered action through the gates: it reports whether it runs now,
// or what it waits for.
func (m *Machine) decide(ctx context.Context, r *Record) (Item, bool, error) {
	switch r.State {
	case StateVerified, StateFailed, StateVoided, StateRolledBack, StateDenied, StateRefused:
		return item(r, "already "+string(r.State)+" ("+r.Detail+")"), false, nil
	case StateApplying:
		return item(r, "still applying: its outcome could not be observed; the next run resolves it"), false, nil
	case StateApproved:
		return Item{}, true, nil
	case StateInProgress:
		if due, why := m.due(r); !due {
			return item(r, why), false, nil
		}
		return Item{}, true, nil
	}
	v := m.gcfg.Verdict(r.Risk)
	if v.Refused {
		reason := fmt.Sprintf("the gates refuse %s-risk actions", r.Risk)
		if v.Reason != "" {
			reason = v.Reason
		}
		err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, r.State, StateRefused, audit.KindActionVoided, reason, nil)
		})
		return item(r, "refused: "+reason), false, err
	}
	if v.Auto {
		return Item{}, true, nil
	}
	var it Item
	run := false
	var forged []gates.Forgery
	err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		forged = nil
		req, err := m.gate.Request(ctx, tx, r.Action, r.Binding(), m.actor)
		if err != nil {
			return fmt.Errorf("action %s: request approval: %w", r.ID, err)
		}
		// Before any write, every decision the action relies on is verified against
		// gates.signers (checked mode): one without a valid signature counts as none.
		req, forged, err = m.gate.Check(ctx, tx, req)
		if err != nil {
			return fmt.Errorf("action %s: verify the decisions of request %s: %w", r.ID, req.ID, err)
		}
		switch req.State {
		case "approved":
			if err := m.transition(ctx, tx, r, r.State, StateApproved, "", "approved ("+req.ID+")", nil); err != nil {
				return err
			}
			run = true
		case "denied":
			if err := m.transition(ctx, tx, r, r.State, StateDenied, "", "denied ("+req.ID+")", nil); err != nil {
				return err
			}
			it = item(r, "denied")
		case "expired", "voided":
			if err := m.transition(ctx, tx, r, r.State, StateVoided, audit.KindActionVoided, "approval request "+req.ID+" "+string(req.State), nil); err != nil {
				return err
			}
			it = item(r, "approval request "+string(req.State)+": plan again to ask anew")
		default:
			if r.State == StatePlanned {
				if err := m.transition(ctx, tx, r, StatePlanned, StatePending, "", "approval requested ("+req.ID+")", nil); err != nil {
					return err
				}
			}
			it = item(r, fmt.Sprintf("waits for approval: %d of %d", len(req.Approvals()), req.Quorum))
			it.Request = req.ID
		}
		return nil
	})
	if err == nil {
		for _, f := range forged {
			m.logger.Warn("forged decision counted as none (audited as approval.forged)", "action", r.ID,
				"request", f.Request, "actor", f.Actor, "channel", string(f.Channel), "why", f.Why)
		}
		if m.forged != nil && len(forged) > 0 {
			m.forged(len(forged))
		}
	}
	return it, run, err
}
