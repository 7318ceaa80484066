package remediate

import (
	"context"
	"fmt"
)

// dryRun says what Apply would do, reading only.
func (m *Machine) dryRun(ctx context.Context, p *Plan) (*Result, error) {
	res := &Result{DryRun: true, Plan: p.Hash}
	pause, err := m.Paused(ctx)
	if err != nil {
		return nil, err
	}
	if pause.Paused {
		res.Stopped = fmt.Sprintf("paused by %s: %s", pause.Actor, pause.Reason)
	}
	// The caps as the confirmed run applies them, in the plan's order: what would run
	// now, and what would wait for the next run.
	runs, perAccount, deferred := 0, map[string]int{}, 0
	for _, a := range p.Actions {
		r := &Record{PlannedAction: a, State: StatePlanned}
		if cur, err := m.Action(ctx, a.ID); err != nil {
			return nil, err
		} else if cur != nil && cur.Hash == a.Hash {
			r = cur
		}
		var outcome string
		switch {
		case r.State != StatePlanned && r.State != StatePending && r.State != StateApproved:
			outcome = "already " + string(r.State)
		case a.Approvals.Verdict == "refused":
			outcome = "would be refused by the gates"
		case (a.Approvals.Verdict == "auto" || r.State == StateApproved) &&
			(runs >= m.limits.MaxActions || perAccount[a.Account] >= m.limits.MaxPerAccount):
			outcome = fmt.Sprintf("would wait for the next run: over the blast-radius cap (%d per run, %d per account)", m.limits.MaxActions, m.limits.MaxPerAccount)
			deferred++
		case a.Approvals.Verdict == "auto" || r.State == StateApproved:
			runs++
			perAccount[a.Account]++
			outcome = "would apply: " + describe(a)
		default:
			outcome = fmt.Sprintf("would request approval (%d needed): %s", a.Approvals.Needed, describe(a))
		}
		res.Items = append(res.Items, item(r, outcome))
	}
	if deferred > 0 {
		res.Deferred = fmt.Sprintf("blast-radius cap: %d actions would be deferred (at most %d per run, %d per account)", deferred, m.limits.MaxActions, m.limits.MaxPerAccount)
	}
	return res, nil
}

func describe(a PlannedAction) string {
	return fmt.Sprintf("%s on %s (%s)", a.Remediator, a.Part, a.Target)
}
