package remediate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// Result is what one apply run did or, in a dry run, would do.
type Result struct {
	DryRun bool   `json:"dry_run"`
	Plan   string `json:"plan"`
	Items  []Item `json:"items"`
	// Stopped says why the run stopped before its end, when it did: a safety stop (the
	// breaker, a canary, a spent budget, a pause).
	Stopped string `json:"stopped,omitempty"`
	// Deferred says why some actions wait for the next run, when they do: the
	// blast-radius caps let only so many run at once. A deferral is not a failure.
	Deferred string `json:"deferred,omitempty"`
	// Recovered counts actions an earlier, interrupted run left without an outcome.
	Recovered int `json:"recovered,omitempty"`
}

// Item is one action's fate in a run.
type Item struct {
	Action     string `json:"action"`
	Remediator string `json:"remediator"`
	Target     string `json:"target"`
	Part       string `json:"part"`
	Risk       string `json:"risk"`
	State      State  `json:"state"`
	// Outcome says, in words, what happened (or would).
	Outcome string `json:"outcome"`
	// Transient says a failed action failed on an error that may pass (throttling, a
	// server error, a timeout): the daemon reads its target again soon.
	Transient bool `json:"transient,omitempty"`
	// Request is the approval request id, when the action waits for one.
	Request string `json:"request,omitempty"`
	// Unreachable says why this process left a ready action alone: it has no target or
	// credentials for its cloud (Options.Reach).
	Unreachable string `json:"unreachable,omitempty"`
	// Wrote reports whether a write call was made.
	Wrote bool `json:"wrote"`
}

// Failed counts the items that failed.
func (r *Result) Failed() int {
	n := 0
	for _, it := range r.Items {
		if it.State == StateFailed {
			n++
		}
	}
	return n
}

// Err is the run's failure, for a command's exit: nil unless an action failed or a run
// that was not a dry run stopped before its end. Actions deferred by a blast-radius cap
// are no failure: the next run takes them up.
func (r *Result) Err() error {
	if r.Failed() == 0 && (r.Stopped == "" || r.DryRun) {
		return nil
	}
	msg := fmt.Sprintf("%d failed", r.Failed())
	if r.Stopped != "" {
		msg += "; stopped: " + r.Stopped
	}
	return errors.New(msg)
}

// item is r's line in a run's result.
func item(r *Record, outcome string) Item {
	return Item{Action: r.ID, Remediator: r.Remediator, Target: r.Target, Part: r.Part, Risk: r.Risk.String(), State: r.State, Outcome: outcome}
}

// Apply executes a plan. Without confirm it is a dry run: it says what would happen and
// makes no write, to the cloud or to the store. With confirm it first resolves actions
// an interrupted run left applying, then lets the gates decide each action: auto and
// approved ones run (within the blast-radius caps, the breaker and the canary waves),
// the others become approval requests. It also moves on every multi-step fix whose
// next step is due, whether or not the plan names it still (a rotation's old key, once
// deactivated, no longer has a finding to plan from).
func (m *Machine) Apply(ctx context.Context, p *Plan, confirm bool) (*Result, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if !confirm {
		return m.dryRun(ctx, p)
	}
	pause, err := m.Paused(ctx)
	if err != nil {
		return nil, err
	}
	if pause.Paused {
		return nil, fmt.Errorf("%w by %s: %s (warden resume lifts it)", ErrPaused, pause.Actor, pause.Reason)
	}
	res := &Result{Plan: p.Hash}
	n, err := m.Recover(ctx, p.Accounts, res)
	if err != nil {
		return nil, err
	}
	res.Recovered = n

	recs, err := m.expireAndRegister(ctx, p)
	if err != nil {
		return nil, err
	}
	if recs, err = m.withDueSteps(ctx, recs); err != nil {
		return nil, err
	}

	var runnable []*Record
	for _, r := range recs {
		it, run, err := m.decide(ctx, r)
		if err != nil {
			return nil, err
		}
		if run {
			runnable = append(runnable, r)
			continue
		}
		res.Items = append(res.Items, it)
	}
	runnable = m.cap(ctx, runnable, res)
	if err := m.run(ctx, runnable, p.Accounts, res); err != nil {
		return nil, err
	}
	return res, nil
}

// withDueSteps adds to a plan's records the multi-step fixes in progress that the plan
// does not name and whose next step is due.
func (m *Machine) withDueSteps(ctx context.Context, recs []*Record) ([]*Record, error) {
	all, err := m.actionsWhere(ctx, "state = ?", string(StateInProgress))
	if err != nil {
		return nil, err
	}
	planned := make(map[string]bool, len(recs))
	for _, r := range recs {
		planned[r.ID] = true
	}
	for _, r := range all {
		if planned[r.ID] {
			continue
		}
		if due, _ := m.due(r); due {
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// ApplyDue runs what is ready without a plan file, as warden serve's worker does: it
// resolves interrupted actions, expires overdue approval requests, and runs the
// actions whose request has reached its quorum and the multi-step fixes whose next step
// is due — within the blast-radius caps, the breaker and the canary waves, as Apply.
// It reads every pending action and request; ApplyDueFrom reads what changed.
func (m *Machine) ApplyDue(ctx context.Context) (*Result, error) { return m.ApplyDueFrom(ctx, nil) }

// ApplyDueFrom is ApplyDue, reading only the pending actions whose approval request
// something happened to since the previous pass of looks (everything when looks is nil,
// and on the looks' full ones). looks moves on only when the pass succeeds. A pending
// action whose request nothing happened to is untouched: the gates' config, which
// untouched also depends on, does not change in a machine's life.
func (m *Machine) ApplyDueFrom(ctx context.Context, looks *gates.Looks) (*Result, error) {
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
	if err := m.expireDue(ctx); err != nil {
		return nil, err
	}
	began := m.now()
	var since time.Time
	if looks != nil {
		since = looks.Next()
	}
	all, err := m.takenUp(ctx, since, began)
	if err != nil {
		return nil, err
	}
	var runnable []*Record
	for _, r := range all {
		it, run, err := m.decide(ctx, r)
		if err != nil {
			return nil, err
		}
		if why := m.unreachable(r); run && why != "" {
			it = item(r, "left for a process that can reach its cloud: "+why)
			it.Unreachable = why
			res.Items = append(res.Items, it)
		} else if run {
			runnable = append(runnable, r)
		} else if r.State != StatePending {
			res.Items = append(res.Items, it)
		}
	}
	runnable = m.cap(ctx, runnable, res)
	if err := m.run(ctx, runnable, nil, res); err != nil {
		return nil, err
	}
	if looks != nil {
		looks.Done(began, since)
	}
	return res, nil
}

// takenUp lists, with their history, the actions a pass of ApplyDue takes up: the
// approved and in-progress ones, and the pending ones Waiting reads (all, or those
// touched since since) except those whose approval request nothing happened to
// (untouched: still pending for the action's content, unexpired, without a decision,
// and the gates still asking for one for the action's risk). Deciding them again would
// find what the last pass found, in a write transaction each; a decision, a row written
// by hand, an expiry, a new content or a gates config that no longer asks makes them
// due again. Only their records are read.
func (m *Machine) takenUp(ctx context.Context, since, now time.Time) ([]*Record, error) {
	sts, err := m.Standings(ctx, StateApproved, StateInProgress)
	if err != nil {
		return nil, err
	}
	pending, ws, err := m.Waiting(ctx, since, now)
	if err != nil {
		return nil, err
	}
	sts = append(sts, pending...)
	slices.SortFunc(sts, func(a, b Standing) int { return strings.Compare(a.ID, b.ID) })
	ids := make([]string, 0, len(sts))
	for _, s := range sts {
		w, ok := ws[s.ID]
		v := m.gcfg.Verdict(s.Risk)
		if s.State == StatePending && ok && w.ContentHash == s.Binding() && w.Decisions == 0 && now.Before(w.ExpiresAt) &&
			!v.Refused && !v.Auto {
			continue // untouched
		}
		ids = append(ids, s.ID)
	}
	return m.actionsByID(ctx, ids)
}

// Waiting returns the actions waiting for their approval and the pending approval
// requests by action: every one when since is zero, else only the actions whose request
// something happened to at or after since, or is due at now (gates.Touched), and their
// requests. It is what a look for decisions reads (gates.Looks).
func (m *Machine) Waiting(ctx context.Context, since, now time.Time) ([]Standing, map[string]gates.Waiting, error) {
	if since.IsZero() {
		sts, err := m.Standings(ctx, StatePending)
		if err != nil || len(sts) == 0 {
			return nil, nil, err
		}
		var ws map[string]gates.Waiting
		err = m.st.Read(ctx, func(q *store.Reader) error {
			var err error
			ws, err = gates.Pending(ctx, q)
			return err
		})
		return sts, ws, err
	}
	var touched []string
	if err := m.st.Read(ctx, func(q *store.Reader) error {
		var err error
		touched, err = gates.Touched(ctx, q, since, now)
		return err
	}); err != nil || len(touched) == 0 {
		return nil, nil, err
	}
	slices.Sort(touched) // as Standings orders them
	byID, err := m.StandingOf(ctx, touched)
	if err != nil {
		return nil, nil, err
	}
	var sts []Standing
	var ids []string
	for _, id := range touched {
		if s, ok := byID[id]; ok && s.State == StatePending {
			sts = append(sts, s)
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	var ws map[string]gates.Waiting
	err = m.st.Read(ctx, func(q *store.Reader) error {
		var err error
		ws, err = gates.PendingOf(ctx, q, ids)
		return err
	})
	return sts, ws, err
}

// unreachable says why this process cannot reach r's cloud, or "".
func (m *Machine) unreachable(r *Record) string {
	if m.reach == nil {
		return ""
	}
	return m.reach(r.Target)
}

// run applies the runnable actions: grouped by remediator, in canary waves, stopping on
// the breaker.
func (m *Machine) run(ctx context.Context, rs []*Record, accounts []string, res *Result) error {
	var order []string
	groups := map[string][]*Record{}
	for _, r := range rs {
		if _, ok := groups[r.Remediator]; !ok {
			order = append(order, r.Remediator)
		}
		groups[r.Remediator] = append(groups[r.Remediator], r)
	}
	br := &breaker{l: m.limits}
	skip := func(left []*Record, why string) error {
		for _, r := range left {
			res.Items = append(res.Items, item(r, "not run: "+why))
		}
		res.Stopped = why
		return m.stop(ctx, why, len(left))
	}
	for gi, name := range order {
		ws := waves(m.limits, groups[name])
		// rest are the actions from the wave's i-th on, to the end of the run.
		rest := func(wi, i int) []*Record {
			left := append([]*Record{}, ws[wi][i:]...)
			for _, w := range ws[wi+1:] {
				left = append(left, w...)
			}
			for _, other := range order[gi+1:] {
				left = append(left, groups[other]...)
			}
			return left
		}
		for wi, wave := range ws {
			failed := 0
			for i, r := range wave {
				if err := ctx.Err(); err != nil {
					return err
				}
				if why, err := m.overBudget(ctx, r); err != nil {
					return err
				} else if why != "" {
					return skip(rest(wi, i), why)
				}
				// Another run (a worker, a replica) may be fixing another part of the same
				// target: wait for it, so that no two read-modify-writes of one resource
				// interleave and each drift re-check sees the other's result.
				release, err := m.st.Hold(ctx, "target/"+r.Target)
				if err != nil {
					return fmt.Errorf("action %s: wait for other fixes of %s: %w", r.ID, r.Target, err)
				}
				// A stop (SIGINT, SIGTERM, serve draining) comes between actions: the one
				// under way finishes and is recorded rather than being cut mid-call.
				// An action of another plan (a step due of a fix planned earlier) is
				// verified against its own plan's accounts.
				acc := accounts
				if r.PlanHash != res.Plan {
					acc = nil
				}
				m.logger.Info("fix taken up", "action", r.ID, "remediator", r.Remediator, "target", r.Target, "part", r.Part,
					"state", r.State, "detail", r.Detail)
				it, err := m.execute(context.WithoutCancel(ctx), r, acc)
				release()
				if err != nil {
					return err
				}
				m.logOutcome(it)
				res.Items = append(res.Items, it)
				ok := it.State != StateFailed
				if !ok {
					failed++
					if why, err := m.failureStreak(ctx); err != nil {
						return err
					} else if why != "" {
						return skip(rest(wi, i+1), why)
					}
				}
				br.record(ok)
				if br.tripped != "" {
					return skip(rest(wi, i+1), br.tripped)
				}
			}
			if len(ws) > 1 && float64(failed)/float64(len(wave)) > m.limits.BreakerRatio {
				var left []*Record
				for _, w := range ws[wi+1:] {
					left = append(left, w...)
				}
				label := "wave"
				if wi == 0 {
					label = "canary"
				}
				if err := skip(left, fmt.Sprintf("%s %s: %d of %d failed; the rest of its %d actions stopped", name, label, failed, len(wave), len(groups[name]))); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// execute walks one action the gates let through along the rest of its stages, each
// state change recorded with its audit entry (record.go): the drift re-check
// (recheck.go), the intent (intent.go), the call (call.go, or steps.go for a multi-step
// fix), and the verification (verify.go).
func (m *Machine) execute(ctx context.Context, r *Record, accounts []string) (Item, error) {
	m.inflight.Store(r.ID, true)
	defer m.inflight.Delete(r.ID)
	rem, err := m.remediator(r)
	if err != nil {
		return m.fail(ctx, r, r.State, err.Error(), false)
	}
	if accounts == nil {
		if accounts, err = m.planAccounts(ctx, r.PlanHash, nil); err != nil {
			return Item{}, err
		}
	}
	if _, ok := rem.(remediators.Stepper); ok && r.State == StateInProgress {
		// A later step of a fix under way: its own steps check what they rely on (the
		// target changes by design between them), so there is no drift re-check here.
		if err := m.intent(ctx, r, StateInProgress, "next step after "+stepName(r.Progress), nil); errors.Is(err, ErrStateChanged) {
			// Another run (serve's loop, a replica, an apply) took the step up first.
			return item(r, "its next step was taken up by another run"), nil
		} else if err != nil {
			return Item{}, err
		}
		return m.call(ctx, r, rem, accounts)
	}
	from := r.State
	if it, ok, err := m.recheck(ctx, r, rem, accounts); !ok {
		return it, err
	}
	if err := m.intent(ctx, r, from, "", map[string]any{"before": r.Before}); err != nil {
		return Item{}, err
	}
	return m.call(ctx, r, rem, accounts)
}

// logOutcome logs what became of an action this run took up: applied and verified, a
// step done, or failed (with why).
func (m *Machine) logOutcome(it Item) {
	args := []any{"action", it.Action, "remediator", it.Remediator, "target", it.Target, "state", it.State, "outcome", it.Outcome, "wrote", it.Wrote}
	switch it.State {
	case StateVerified:
		m.logger.Info("fix applied and verified", args...)
	case StateFailed:
		// Info, as the others: warden apply's table says it already; serve logs at info.
		m.logger.Info("fix failed", args...)
	case StateInProgress:
		m.logger.Info("fix step done", args...)
	default:
		m.logger.Info("fix not applied", args...)
	}
}
