package daemon

import (
	"context"
	"time"

	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// MetricsHooks are the hooks that feed m: scopes read and their findings, actions and
// the drift-to-fix time, jobs, events. Combine them with other hooks if needed.
func MetricsHooks(m *metrics.Metrics) (Hooks, EndpointHooks) {
	h := Hooks{
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
		},
		JobDone: func(kind, outcome string) { m.Job(kind, metrics.JobOutcome(outcome)) },
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
