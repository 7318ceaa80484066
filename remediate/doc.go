// Package remediate is the use case that converges: it turns findings into a plan of
// actions, applies the plan behind the approval gates and the safety limits, verifies
// each fix by observing the cloud again, rolls fixes back, and records every step in the
// audit log in the same transaction as the state change it records.
//
// The files follow an action through its life:
//
//   - plan.go: NewPlan turns open findings into actions, one per part a fix touches,
//     each with its id, content hash (what approvals bind to), idempotency key and what
//     the gates ask of it. Plan.Check refuses an edited plan file.
//   - apply.go: Apply (a plan) and ApplyDue (the daemon's runs) drive a run: recover
//     what an interrupted run left (recover.go), record the plan (register.go), pass each
//     action through the gates, then run the runnable ones within the run's limits
//     (safety.go: blast-radius caps, canary waves, the breaker; budget.go: the hourly
//     budget and the failure streak across runs), one action per target at a time.
//     execute walks one action through the stages below.
//   - gate.go: decide is the gate: auto, approved, denied, refused, or an approval
//     request to wait for.
//   - recheck.go: recheck is the drift re-check: the target read again (observe.go) must
//     still hold the part as planned; a converged target is verified without a write,
//     a drifted one voided with its approvals.
//   - intent.go: intent records that the call is about to be made, before it is.
//   - call.go: call makes the remediator's one call; a multi-step fix runs its due steps
//     instead, each step's progress recorded before the next (steps.go).
//   - verify.go: verify reads the target again: the part and the finding must be gone.
//   - record.go: transition is the one writer of an action's state: a compare-and-set on
//     the actions table, its history event and its audit entry in one transaction. fail
//     records a failure; the step records, and the births of an action's generations,
//     are written here too.
//
// Around that path: recover.go resolves intents an interrupted run left without an
// outcome, by observing; rollback.go undoes a verified fix from its before-state;
// dryrun.go and ask.go say what a run would do; control.go holds the pause; state.go
// the states, the record of an action and its reads; machine.go the wiring.
package remediate
