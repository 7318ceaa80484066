package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
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

// State is the metrics' query of the deployment's gauges in st: open findings by
// severity, pending approvals, the audit log's size and last checkpoint, the scopes by
// provider, service and outcome of their last read.
func State(st *store.Store) metrics.StateFunc {
	return func(ctx context.Context) (metrics.State, error) {
		out := metrics.State{FindingsOpen: map[findings.Severity]int{}}
		err := st.Read(ctx, func(q *store.Reader) error {
			rows, err := q.QueryContext(ctx, `SELECT severity, COUNT(*) FROM finding_state WHERE status = 'open' GROUP BY severity`)
			if err != nil {
				return err
			}
			for rows.Next() {
				var sev string
				var n int
				if err := rows.Scan(&sev, &n); err != nil {
					rows.Close()
					return err
				}
				if s, err := findings.ParseSeverity(sev); err == nil {
					out.FindingsOpen[s] += n
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM approval_requests WHERE state = 'pending'`).Scan(&out.ApprovalsPending); err != nil {
				return err
			}
			if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_entries`).Scan(&out.AuditEntries); err != nil {
				return err
			}
			var at string
			switch err := q.QueryRowContext(ctx, `SELECT created_at FROM audit_checkpoints ORDER BY id DESC LIMIT 1`).Scan(&at); {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				if out.AuditLastCheckpoint, err = store.ParseTime(at); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return metrics.State{}, fmt.Errorf("read the deployment's state: %w", err)
		}
		scopes, err := reconcile.Scopes(ctx, st)
		if err != nil {
			return metrics.State{}, err
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
