package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// Status is what `warden status` reports of a deployment, from its database.
type Status struct {
	Leader          string                `json:"leader,omitempty"`
	LeaderUntil     time.Time             `json:"leader_until,omitzero"`
	Paused          bool                  `json:"paused"`
	PausedBy        string                `json:"paused_by,omitempty"`
	PauseReason     string                `json:"pause_reason,omitempty"`
	Queue           []JobCount            `json:"queue"`
	Scopes          []ScopeStatus         `json:"scopes"`
	PendingApproval []gates.Request       `json:"pending_approvals"`
	Checkpoint      *audit.CheckpointMark `json:"last_checkpoint,omitempty"`
}

// ScopeStatus is a scope's last read, as Status reports it.
type ScopeStatus struct {
	Scope     string    `json:"scope"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	Resources int       `json:"resources"`
	ReadAt    time.Time `json:"read_at"`
	OKAt      time.Time `json:"ok_at,omitzero"`
}

// ReadStatus gathers what st's database says of the deployment: the replica leading the
// queue and until when, whether remediation is paused, the unfinished jobs, each scope's
// last read by id, the approval requests waiting for a decision, and the last signed
// audit checkpoint (nil if none). It reads only, with serve running or not.
func ReadStatus(ctx context.Context, st *store.Store) (*Status, error) {
	s := &Status{Queue: []JobCount{}, Scopes: []ScopeStatus{}, PendingApproval: []gates.Request{}}
	var err error
	if s.Leader, s.LeaderUntil, err = Leader(ctx, st); err != nil {
		return nil, err
	}
	p, err := remediate.New(remediate.Options{Store: st, Log: audit.New(st, audit.Options{})}).Paused(ctx)
	if err != nil {
		return nil, err
	}
	s.Paused, s.PausedBy, s.PauseReason = p.Paused, p.Actor, p.Reason
	q, err := Depth(ctx, st)
	if err != nil {
		return nil, err
	}
	s.Queue = append(s.Queue, q...)
	var scopes []state.Scope
	err = st.Read(ctx, func(q *store.Reader) error {
		var err error
		if scopes, err = state.Scopes(ctx, q); err != nil {
			return err
		}
		cp, ok, err := audit.LatestCheckpoint(ctx, q)
		if ok {
			s.Checkpoint = &cp
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, sc := range scopes {
		s.Scopes = append(s.Scopes, ScopeStatus{Scope: sc.Scope.ID, Status: sc.Scope.Status, Error: sc.Scope.Error,
			Resources: sc.Scope.Resources, ReadAt: sc.ReadAt, OKAt: sc.OKAt})
	}
	reqs, err := gates.New(st, nil, gates.Config{}, time.Now).List(ctx, gates.Filter{States: []gates.State{gates.StatePending}})
	if err != nil {
		return nil, err
	}
	s.PendingApproval = append(s.PendingApproval, reqs...)
	return s, nil
}

// JobCount is how many jobs of one kind are in one state.
type JobCount struct {
	Kind  string `json:"kind"`
	State string `json:"state"`
	Count int    `json:"count"`
}

// Depth counts the jobs not finished, by kind and state (available, pending, running,
// retryable, scheduled), straight from River's table: River offers no count.
func (d *Daemon) Depth(ctx context.Context) ([]JobCount, error) {
	return Depth(ctx, d.o.Store)
}

// Depth counts the unfinished jobs of the queue in st's database, by kind and state, for
// warden status and /metrics; a database whose queue was never started has none.
func Depth(ctx context.Context, st *store.Store) ([]JobCount, error) {
	var out []JobCount
	err := st.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT kind, state, COUNT(*) FROM river_job
			WHERE state IN ('available', 'pending', 'running', 'retryable', 'scheduled') GROUP BY kind, state ORDER BY kind, state`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c JobCount
			if err := rows.Scan(&c.Kind, &c.State, &c.Count); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		if noQueue(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("count the queued jobs: %w", err)
	}
	return out, nil
}

// Leader is the replica that leads the queue (runs the schedules and River's
// maintenance) and until when its term runs, or "" when none does.
func Leader(ctx context.Context, st *store.Store) (string, time.Time, error) {
	var id string
	var exp time.Time
	err := st.Read(ctx, func(q *store.Reader) error {
		var expires any
		err := q.QueryRowContext(ctx, `SELECT leader_id, expires_at FROM river_leader LIMIT 1`).Scan(&id, &expires)
		if err != nil {
			return err
		}
		exp, err = asTime(expires)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) || (err != nil && noQueue(err)) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read the queue's leader: %w", err)
	}
	return id, exp, nil
}

// noQueue reports whether err says River's tables do not exist (no daemon ever ran).
func noQueue(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no such table") || strings.Contains(s, "does not exist")
}

// asTime reads a timestamp as either database returns it: PostgreSQL a time, River's
// SQLite driver text.
func asTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("unreadable time %q", x)
	case []byte:
		return asTime(string(x))
	}
	return time.Time{}, fmt.Errorf("unreadable time of type %T", v)
}
