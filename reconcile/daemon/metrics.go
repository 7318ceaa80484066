package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// MetricsHooks are the hooks that feed m: scopes read (warden_scope_reads_total and the
// cloud call counters, from each scope's own counts of call attempts), the steps of the
// loop (warden_reconcile_*), findings, actions and the drift-to-fix time, partial
// remediations, approvals ended, jobs, events. Combine them with other hooks if needed.
//
// What they count, where the daemon's view is narrower than a metric's name:
//   - Stages: a scope read and a resource read again alone are collect, a read judged
//     evaluate, planning plan, a run of the remediation machine remediate (Hooks.Stage
//     says which runs are steps), and turning a body of POST /v1/events into re-reads event
//     (a body refused as malformed is not a step: warden_events_total counts it).
//   - Cloud calls: every attempt of the scope reads, by the scope's provider and service,
//     whose three counters exist (at zero) from the first read of that service. A
//     remediation's calls and a refresh's read are not counted: the remediators and
//     readers keep no counts the daemon could read.
//   - Partial remediations: the daemon applies one action per job, so a run is partial
//     when its action wrote to the cloud and still failed (the call succeeded but the
//     finding or part is still there): the target is between its before and after. An
//     action that failed before any write, or that a person rolled back, is not; nor is
//     a multi-step fix parked after a failed step (it retries the step when due, and
//     its item does not say why it waits).
//   - Approvals: each request's end as the remediation job waiting on it saw it
//     (Hooks.ApprovalEnded).
func MetricsHooks(m *metrics.Metrics) (Hooks, EndpointHooks) {
	h := Hooks{
		Read: func(_ string, sc snapshot.Scope) {
			m.ScopeRead(sc)
		},
		Stage: func(stage string, took time.Duration, err error) {
			st, ok := metricsStage(stage)
			if !ok {
				return
			}
			if errors.Is(err, collectors.ErrUnknownScope) {
				// A job naming a scope its target no longer has: stale input, no fault.
				err = metrics.Classify(err, metrics.ReasonInvalid)
			}
			m.ObserveReconcile(st, took, err)
		},
		ApprovalEnded: func(outcome string) { m.ApprovalDecided(metrics.ApprovalOutcome(outcome)) },
		Observed: func(target string, out *reconcile.Outcome) {
			for _, f := range out.Opened {
				m.FindingOpened(target, f.Severity)
			}
			for _, f := range out.Resolved {
				m.FindingResolved(target, f.Finding.Severity, f.ResolvedAt.Sub(f.OpenedAt))
			}
		},
		Applied: func(it remediate.Item, announced time.Time) {
			o, ok := actionOutcome(it.State)
			if !ok {
				return
			}
			m.Action(it.Remediator, o)
			if it.State == remediate.StateVerified && !announced.IsZero() {
				m.DriftFixed(time.Since(announced))
			}
			if partial(it) {
				m.RemediationPartial()
			}
		},
		JobDone:         func(kind, outcome string) { m.Job(kind, metrics.JobOutcome(outcome)) },
		RightsizeDenied: func(remediator string) { m.RightsizeDenied(remediator) },
	}
	e := EndpointHooks{Event: func(source, result string) {
		src := metrics.EventSource(source)
		if source == "" {
			src = metrics.SourceUnknown
		}
		m.Event(src, metrics.EventResult(result))
	}}
	return h, e
}

// metricsStage is the metrics' stage of one of the daemon's (Hooks.Stage).
func metricsStage(stage string) (metrics.Stage, bool) {
	switch stage {
	case stageCollect, stageRefresh:
		return metrics.StageCollect, true
	case stageObserve:
		return metrics.StageEvaluate, true
	case stagePlan:
		return metrics.StagePlan, true
	case stageApply:
		return metrics.StageRemediate, true
	case stageEvent:
		return metrics.StageEvent, true
	}
	return "", false
}

// partial reports whether an action's run left its target half-fixed: a write was made
// in this run (an item of an action that ended earlier has none) and the action failed.
func partial(it remediate.Item) bool {
	return it.State == remediate.StateFailed && it.Wrote
}

func actionOutcome(s remediate.State) (metrics.ActionOutcome, bool) {
	switch s {
	case remediate.StateVerified:
		return metrics.ActionVerified, true
	case remediate.StateFailed:
		return metrics.ActionFailed, true
	case remediate.StateRolledBack:
		return metrics.ActionRolledBack, true
	case remediate.StatePending, remediate.StateApproved:
		return metrics.ActionWaiting, true
	case remediate.StateVoided:
		return metrics.ActionVoid, true
	case remediate.StateRefused, remediate.StateDenied:
		return metrics.ActionHeld, true
	}
	return "", false
}

// QueueDepth is the metrics' queue-depth query on st's job queue.
func QueueDepth(st *store.Store) metrics.QueueDepthFunc {
	return func(ctx context.Context) (map[[2]string]int, error) {
		cs, err := Depth(ctx, st)
		if err != nil {
			return nil, err
		}
		out := make(map[[2]string]int, len(cs))
		for _, c := range cs {
			out[[2]string{c.Kind, c.State}] = c.Count
		}
		return out, nil
	}
}

// State is the metrics' query of the deployment's gauges in st: open findings by
// severity, pending approvals, the audit log's size and last checkpoint, the scopes by
// provider, service and outcome of their last read.
func State(st *store.Store) metrics.StateFunc {
	return func(ctx context.Context) (metrics.State, error) {
		var out metrics.State
		var scopes []state.Scope
		err := st.Read(ctx, func(q *store.Reader) error {
			var err error
			if out.FindingsOpen, err = state.OpenBySeverity(ctx, q); err != nil {
				return err
			}
			if out.ApprovalsPending, err = gates.CountPending(ctx, q); err != nil {
				return err
			}
			if out.AuditEntries, err = audit.Size(ctx, q); err != nil {
				return err
			}
			if out.ForgedDecisions, err = audit.CountKind(ctx, q, audit.KindApprovalForged); err != nil {
				return err
			}
			cp, _, err := audit.LatestCheckpoint(ctx, q)
			if err != nil {
				return err
			}
			out.AuditLastCheckpoint = cp.At // zero when none was signed
			scopes, err = state.Scopes(ctx, q)
			return err
		})
		if err != nil {
			return metrics.State{}, fmt.Errorf("read the deployment's state: %w", err)
		}
		groups := map[[2]string]*metrics.ScopeGroup{}
		var order [][2]string
		for _, s := range scopes {
			k := [2]string{s.Scope.Provider, s.Scope.Service}
			g := groups[k]
			if g == nil {
				g = &metrics.ScopeGroup{Provider: metrics.Provider(s.Scope.Provider), Service: s.Scope.Service}
				groups[k] = g
				order = append(order, k)
			}
			switch s.Scope.Status {
			case snapshot.ScopeOK:
				g.OK++
			case snapshot.ScopePartial:
				g.Partial++
			default:
				g.Failed++
			}
			if !s.OKAt.IsZero() && (g.OldestComplete.IsZero() || s.OKAt.Before(g.OldestComplete)) {
				g.OldestComplete = s.OKAt
			}
		}
		for _, k := range order {
			out.Scopes = append(out.Scopes, *groups[k])
		}
		return out, nil
	}
}
