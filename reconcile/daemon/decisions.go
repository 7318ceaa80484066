package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// Cost proportional to change (issue 30). A scope read again unchanged plans nothing and
// enqueues no fix: its actions already stand where the last plan left them. Three
// things still move an action between the reads that change its scope, and each has its
// own way in here:
//   - a decision on its approval request (approve, deny) or the request's expiry: the
//     action waits without a job (a pending action's job ends), and wakeDecided enqueues
//     exactly the job of each action whose request stopped waiting — every DecisionPoll,
//     or, beside warden serve's Loop, after each of its passes (which apply what reached
//     its quorum themselves, and run at once when a channel records a decision);
//   - a fix that ended while its finding still stands (failed, denied, voided, refused,
//     rolled back, or verified yet still seen: the drift came back): the next sweep marks
//     the scope to plan again (replanScopes), which starts a new generation, as every
//     sweep did before;
//   - an approved action (its dry run lifted, or its job given up) when this replica
//     applies: the same, and warden serve's loop applies it within seconds anyway.
// A scope due in full (full_every), read after a read that was not complete, or read by
// a collection's second attempt (the first may have died between judging and
// enqueueing) plans as before.

// DefaultDecisionPoll is how often a replica looks for approval requests that stopped
// waiting (decided by warden approve, the dashboard or Slack, or expired).
const DefaultDecisionPoll = 5 * time.Second

// unchanged reports whether a collection's read changed nothing its scope's plan
// depends on, so that it need not plan: a complete read after a complete one, nothing
// evaluated, deleted, opened, resolved or unknown, and nothing asking for a plan anyway.
func unchanged(a CollectArgs, attempt int, prevComplete bool, out *reconcile.Outcome) bool {
	return a.Reason == "schedule" && !a.Replan && attempt <= 1 && prevComplete &&
		out.Status == "ok" && !out.Full && out.Evaluated == 0 && out.Deleted == 0 &&
		len(out.Opened) == 0 && len(out.Resolved) == 0 && out.Unknown == 0 && len(out.EvalErrors) == 0
}

// replanStates are the states of an action a new plan of its open finding moves on: a
// new generation of an ended one (asked anew, tried again), or, when this replica
// applies, an approved one.
func (d *Daemon) replanStates() []remediate.State {
	s := []remediate.State{remediate.StateVerified, remediate.StateFailed, remediate.StateVoided,
		remediate.StateRolledBack, remediate.StateDenied, remediate.StateRefused}
	if !d.o.DryRun {
		s = append(s, remediate.StateApproved)
	}
	return s
}

// replanScopes returns the scopes whose open findings have an action in replanStates:
// those a sweep plans even when their read changed nothing. One read of those actions
// and their findings per sweep.
func (d *Daemon) replanScopes(ctx context.Context) (map[string]bool, error) {
	sts, err := d.o.Machine.Standings(ctx, d.replanStates()...)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var fps []string
	for _, s := range sts {
		if s.Finding != "" && !seen[s.Finding] {
			seen[s.Finding] = true
			fps = append(fps, s.Finding)
		}
	}
	if len(fps) == 0 {
		return map[string]bool{}, nil
	}
	var out map[string]bool
	err = d.o.Store.Read(ctx, func(q *store.Reader) error {
		out, err = state.ScopesWithOpen(ctx, q, fps)
		return err
	})
	return out, err
}

// notPending keeps the plan's actions that are not waiting for their approval request
// as planned now (same content): those wait without a job, and the decision wakes them.
func (d *Daemon) notPending(ctx context.Context, p *remediate.Plan) (*remediate.Plan, int, error) {
	ids := make([]string, len(p.Actions))
	for i, pa := range p.Actions {
		ids[i] = pa.ID
	}
	sts, err := d.o.Machine.StandingOf(ctx, ids)
	if err != nil {
		return nil, 0, err
	}
	waiting := 0
	kept := p.Only(func(pa remediate.PlannedAction) bool {
		s, ok := sts[pa.ID]
		if ok && s.State == remediate.StatePending && s.Hash == pa.Hash {
			waiting++
			return false
		}
		return true
	})
	return kept, waiting, nil
}

// decisionWatch is where the looks for decided approval requests stand.
type decisionWatch struct {
	mu    sync.Mutex
	looks gates.Looks
}

// decided lists the actions waiting for approval whose request of their generation
// stopped waiting: decided, voided, expired, or past its expiry (the job's run marks it).
// It reads what the watch's looks say (Machine.Waiting): what was touched since the
// previous look, or, every gates.FullLooks-th look, everything. The caller holds
// d.watch.mu, and calls done once it has enqueued what was found: a look that failed is
// made again.
func (d *Daemon) decided(ctx context.Context) (out []remediate.Standing, done func(), err error) {
	now := d.o.Now()
	since := d.watch.looks.Next()
	sts, waiting, err := d.o.Machine.Waiting(ctx, since, now)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range sts {
		r, ok := waiting[s.ID]
		if ok && r.ContentHash == s.Binding() && now.Before(r.ExpiresAt) {
			continue // still waiting
		}
		out = append(out, s)
	}
	return out, func() { d.watch.looks.Done(now, since) }, nil
}

// wakeDecided enqueues the job of each action whose approval request stopped waiting,
// with the plan it was last planned with: the job applies it (approved), or records
// its end (denied, expired, voided). A job already queued for the action is left as it
// is (unique by action), so every replica may look.
func (d *Daemon) wakeDecided(ctx context.Context) (int, error) {
	d.watch.mu.Lock()
	defer d.watch.mu.Unlock()
	sts, done, err := d.decided(ctx)
	if err != nil {
		return 0, err
	}
	if len(sts) == 0 {
		done()
		return 0, nil
	}
	params := make([]river.InsertManyParams, 0, len(sts))
	for _, s := range sts {
		p, err := d.o.Machine.PlanOf(ctx, s.ID)
		if err != nil {
			return 0, err
		}
		var scope string
		if err := d.o.Store.Read(ctx, func(q *store.Reader) error {
			scope, _, err = state.FindingScope(ctx, q, s.Finding)
			return err
		}); err != nil {
			return 0, err
		}
		params = append(params, river.InsertManyParams{Args: RemediateArgs{Action: s.ID, Plan: p, Scope: scope,
			Correlation: "decision-" + gates.RequestID(s.ID, s.Binding())}, InsertOpts: fixOpts(priorityEvent)})
	}
	res, err := d.q.InsertMany(ctx, params)
	if err != nil {
		return 0, fmt.Errorf("enqueue the fixes whose approval was decided: %w", err)
	}
	n := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			n++
		}
	}
	done()
	return n, nil
}

// watchDecisions runs wakeDecided every DecisionPoll until ctx ends.
func (d *Daemon) watchDecisions(ctx context.Context) {
	tick := time.NewTicker(d.o.DecisionPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := d.wakeDecided(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Warn("look for decided approval requests: tried again at the next poll", "err", err)
		case n > 0:
			d.log.Info("approval decisions arrived: their fixes enqueued", "jobs", n)
		}
	}
}
