package daemon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/store"
)

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
