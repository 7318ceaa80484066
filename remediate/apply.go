package remediate

import (
	"context"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// Result is what one apply run did or, in a dry run, would do.
type Result struct {
	DryRun bool   `json:"dry_run"`
	Plan   string `json:"plan"`
	Items  []Item `json:"items"`
	// Stopped says why the run stopped before its end, when it did.
	Stopped string `json:"stopped,omitempty"`
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

func item(r *Record, outcome string) Item {
	return Item{Action: r.ID, Remediator: r.Remediator, Target: r.Target, Part: r.Part, Risk: r.Risk.String(), State: r.State, Outcome: outcome}
}

// Apply executes a plan. Without confirm it is a dry run: it says what would happen and
// makes no write, to the cloud or to the store. With confirm it first resolves actions
// an interrupted run left applying, then lets the gates decide each action: auto and
// approved ones run (within the blast-radius caps, the breaker and the canary waves),
// the others become approval requests.
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

// expireAndRegister expires the approval requests past their time, then records the
// plan and its actions, in one transaction: what every run does before deciding.
func (m *Machine) expireAndRegister(ctx context.Context, p *Plan) ([]*Record, error) {
	var recs []*Record
	err := m.inTx(ctx, func(tx *store.Tx) error {
		if _, err := m.gate.ExpireDue(ctx, tx); err != nil {
			return fmt.Errorf("expire approval requests: %w", err)
		}
		var err error
		recs, err = m.register(ctx, tx, p)
		return err
	})
	return recs, err
}

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
		err := m.inTx(ctx, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, r.State, StateRefused, audit.KindActionVoided, reason, nil)
		})
		return item(r, "refused: "+reason), false, err
	}
	if v.Auto {
		return Item{}, true, nil
	}
	var it Item
	run := false
	err := m.inTx(ctx, func(tx *store.Tx) error {
		req, err := m.gate.Request(ctx, tx, r.Action, r.Binding(), m.actor)
		if err != nil {
			return fmt.Errorf("action %s: request approval: %w", r.ID, err)
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
	return it, run, err
}

// cap keeps the runnable actions within the blast-radius caps; the rest wait.
func (m *Machine) cap(ctx context.Context, rs []*Record, res *Result) []*Record {
	perAccount := map[string]int{}
	var keep []*Record
	skipped := 0
	for _, r := range rs {
		if len(keep) >= m.limits.MaxActions || perAccount[r.Account] >= m.limits.MaxPerAccount {
			res.Items = append(res.Items, item(r, fmt.Sprintf("deferred: over the blast-radius cap (%d per run, %d per account)", m.limits.MaxActions, m.limits.MaxPerAccount)))
			skipped++
			continue
		}
		perAccount[r.Account]++
		keep = append(keep, r)
	}
	if skipped > 0 {
		reason := fmt.Sprintf("blast-radius cap: %d actions deferred (at most %d per run, %d per account)", skipped, m.limits.MaxActions, m.limits.MaxPerAccount)
		if err := m.stop(ctx, reason, skipped); err != nil {
			m.logger.Error("audit the blast-radius stop", "err", err)
		}
		res.Stopped = reason
	}
	return keep
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
				it, err := m.execute(context.WithoutCancel(ctx), r, accounts)
				release()
				if err != nil {
					return err
				}
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

// execute runs one action: drift re-check → intent → the cloud call → verification →
// outcome, each state change recorded with its audit entry.
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
	if st, ok := rem.(remediators.Stepper); ok && r.State == StateInProgress {
		// A later step of a fix under way: its own steps check what they rely on (the
		// target changes by design between them), so there is no drift re-check here.
		if err := m.inTx(ctx, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, StateInProgress, StateApplying, audit.KindActionIntent, "next step after "+stepName(r.Progress), nil)
		}); err != nil {
			return Item{}, err
		}
		return m.advance(ctx, r, st, accounts)
	}
	before, err := m.observe(ctx, r, rem, accounts)
	if err != nil {
		it, ferr := m.fail(ctx, r, r.State, "drift re-check: "+err.Error(), false)
		it.Transient = Transient(err)
		return it, ferr
	}
	from := r.State
	if before.converged() {
		err := m.inTx(ctx, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, from, StateVerified, audit.KindActionVerified, "already converged: no write needed", map[string]any{"wrote": false})
		})
		return item(r, "already converged: no write"), err
	}
	if before.part == nil || before.drifted(r) {
		why := "the target drifted since the plan: a fresh plan is needed"
		if before.part == nil {
			why = "the part is gone but the policy still finds the problem: a fresh plan is needed"
		}
		err := m.inTx(ctx, func(tx *store.Tx) error {
			if err := m.gate.Void(ctx, tx, r.ID, why); err != nil {
				return fmt.Errorf("action %s: void its approvals: %w", r.ID, err)
			}
			return m.transition(ctx, tx, r, from, StateVoided, audit.KindActionVoided, why, nil)
		})
		return item(r, "voided: "+why), err
	}
	if err := m.inTx(ctx, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, from, StateApplying, audit.KindActionIntent, "", map[string]any{"before": r.Before})
	}); err != nil {
		return Item{}, err
	}
	if st, ok := rem.(remediators.Stepper); ok {
		return m.advance(ctx, r, st, accounts)
	}
	return m.applyAndVerify(ctx, r, rem, accounts)
}

// applyAndVerify makes the call of an action whose intent is recorded, then observes.
func (m *Machine) applyAndVerify(ctx context.Context, r *Record, rem remediators.Remediator, accounts []string) (Item, error) {
	err := rem.Apply(ctx, r.Action)
	wrote := true
	switch {
	case errors.Is(err, remediators.ErrConverged):
		wrote = false
	case err != nil && Transient(err):
		// A server error or a timeout does not say that the call changed nothing: the
		// cloud may have applied it and failed to answer. A fix found in place is
		// verified, not recorded failed while the cloud has it.
		if o, oerr := m.observe(ctx, r, rem, accounts); oerr == nil && o.converged() {
			return m.verify(ctx, r, rem, accounts, true)
		}
		it, ferr := m.fail(ctx, r, StateApplying, "apply: "+err.Error(), true)
		it.Transient = true
		return it, ferr
	case err != nil:
		return m.fail(ctx, r, StateApplying, "apply: "+err.Error(), true)
	}
	return m.verify(ctx, r, rem, accounts, wrote)
}

// verify observes the target of an action whose calls are made: the finding must be gone.
func (m *Machine) verify(ctx context.Context, r *Record, rem remediators.Remediator, accounts []string, wrote bool) (Item, error) {
	after, err := m.observe(ctx, r, rem, accounts)
	if err != nil {
		// The call may have worked: leave the intent without an outcome for the next run
		// to resolve by observing, rather than guess.
		it := item(r, "applied, but verification could not observe the target: "+err.Error()+"; the next apply resolves it")
		it.Wrote = wrote
		return it, nil
	}
	if !after.converged() {
		detail := "partial: the call succeeded but the finding is still there"
		if after.part != nil {
			detail = "partial: the call succeeded but the part is still there"
		}
		it, err := m.fail(ctx, r, StateApplying, detail, true)
		it.Wrote = wrote
		return it, err
	}
	err = m.inTx(ctx, func(tx *store.Tx) error {
		if _, err := m.log.Append(ctx, tx, audit.Event{Actor: m.actor, Kind: audit.KindActionApplied, Subject: r.ID,
			Data: map[string]any{"remediator": r.Remediator, "target": r.Target, "part": r.Part, "wrote": wrote}}); err != nil {
			return fmt.Errorf("action %s: audit %s: %w", r.ID, audit.KindActionApplied, err)
		}
		return m.transition(ctx, tx, r, StateApplying, StateVerified, audit.KindActionVerified, "applied and verified", map[string]any{"wrote": wrote})
	})
	it := item(r, "applied and verified")
	if !wrote {
		it.Outcome = "already converged: no write"
	}
	it.Wrote = wrote
	return it, err
}

// fail records an action's failure.
func (m *Machine) fail(ctx context.Context, r *Record, from State, detail string, attempted bool) (Item, error) {
	err := m.inTx(ctx, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, from, StateFailed, audit.KindActionFailed, detail, map[string]any{"attempted": attempted})
	})
	return item(r, "failed: "+detail), err
}

// Recover resolves the actions an interrupted run left applying (an intent without an
// outcome): it observes each target; a fix in place is recorded verified without a
// second call, an untouched target gets its call now, a drifted one fails.
func (m *Machine) Recover(ctx context.Context, accounts []string, res *Result) (int, error) {
	all, err := m.Actions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range all {
		if r.State != StateApplying {
			continue
		}
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
		err := m.inTx(ctx, func(tx *store.Tx) error {
			return m.transition(ctx, tx, r, StateApplying, StateVerified, audit.KindActionVerified, "resolved after an interruption: the fix was in place", map[string]any{"wrote": false, "recovered": true})
		})
		if err != nil {
			return false, err
		}
		res.Items = append(res.Items, item(r, "interrupted earlier: found applied, verified"))
	case o.part != nil && !o.drifted(r):
		it, err := m.applyAndVerify(ctx, r, rem, accts)
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
	if deferred > 0 && res.Stopped == "" {
		res.Stopped = fmt.Sprintf("blast-radius cap: %d actions would be deferred (at most %d per run, %d per account)", deferred, m.limits.MaxActions, m.limits.MaxPerAccount)
	}
	return res, nil
}

func describe(a PlannedAction) string {
	return fmt.Sprintf("%s on %s (%s)", a.Remediator, a.Part, a.Target)
}
