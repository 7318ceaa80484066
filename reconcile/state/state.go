// Package state keeps the daemon's view of the world between its jobs, and is the one
// owner of the tables that hold it: each scope's last read (scope_state), each resource
// as its scope was last read (resource_state), and each finding's life from opened to
// resolved (finding_state). Package reconcile moves that view along; the dashboard, the
// compliance evidence, warden status and the metrics read it here, through the reader
// they hold (a store.Tx or a store.Reader).
//
// Times are stored as RFC 3339 text (store.FormatTime), the zero time as "".
package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Scope is a scope as the daemon last read it.
type Scope struct {
	Scope snapshot.Scope
	// ReadAt is the last read's time, OKAt the last read in full (zero if none yet).
	ReadAt, OKAt time.Time
	// EvaluatedWith is the engine and settings version its findings were judged with;
	// FullAt when every resource of it was last evaluated.
	EvaluatedWith string
	FullAt        time.Time
}

// scopeColumns are the columns scanScope decodes.
const scopeColumns = `data, read_at, ok_at, evaluated_with, full_at`

// ReadScope returns the scope's state, and false if it was never read.
func ReadScope(ctx context.Context, q store.Querier, scope string) (Scope, bool, error) {
	st, err := scanScope(q.QueryRowContext(ctx, `SELECT `+scopeColumns+` FROM scope_state WHERE scope = ?`, scope))
	if errors.Is(err, sql.ErrNoRows) {
		return Scope{}, false, nil
	}
	if err != nil {
		return Scope{}, false, fmt.Errorf("read the state of scope %s: %w", scope, err)
	}
	return st, true, nil
}

// Scopes returns the state of every scope read so far, by id.
func Scopes(ctx context.Context, q store.Querier) ([]Scope, error) {
	out, err := store.QueryAll(ctx, q, func(r *sql.Rows) (Scope, error) { return scanScope(r) },
		`SELECT `+scopeColumns+` FROM scope_state ORDER BY scope`)
	if err != nil {
		return nil, fmt.Errorf("list the scopes: %w", err)
	}
	return out, nil
}

// ScopeIDs returns the id of every scope read so far, in no order, without decoding
// their state.
func ScopeIDs(ctx context.Context, q store.Querier) ([]string, error) {
	out, err := store.QueryAll(ctx, q, store.ScanString, `SELECT scope FROM scope_state`)
	if err != nil {
		return nil, fmt.Errorf("list the scopes' ids: %w", err)
	}
	return out, nil
}

// ScopeCalls returns, by scope id, how many API calls each scope's last read took
// (snapshot.Scope.Calls): what a sweep orders its collections by.
func ScopeCalls(ctx context.Context, q store.Querier) (map[string]int, error) {
	type scopeCalls struct {
		id    string
		calls int
	}
	rows, err := store.QueryAll(ctx, q, func(r *sql.Rows) (scopeCalls, error) {
		var id, data string
		var sc struct {
			Calls int `json:"calls"`
		}
		if err := r.Scan(&id, &data); err != nil {
			return scopeCalls{}, err
		}
		if err := json.Unmarshal([]byte(data), &sc); err != nil {
			return scopeCalls{}, fmt.Errorf("scope %s: %w", id, err)
		}
		return scopeCalls{id, sc.Calls}, nil
	}, `SELECT scope, data FROM scope_state`)
	if err != nil {
		return nil, fmt.Errorf("read the scopes' calls: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.id] = r.calls
	}
	return out, nil
}

// CountScopes returns how many scopes the daemon has read: none means its state is
// empty (no warden serve ever read one).
func CountScopes(ctx context.Context, q store.Querier) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM scope_state`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the scopes: %w", err)
	}
	return n, nil
}

// scanScope decodes a row of scopeColumns.
func scanScope(row interface{ Scan(...any) error }) (Scope, error) {
	var st Scope
	var data, readAt, okAt, fullAt string
	if err := row.Scan(&data, &readAt, &okAt, &st.EvaluatedWith, &fullAt); err != nil {
		return Scope{}, err
	}
	if err := json.Unmarshal([]byte(data), &st.Scope); err != nil {
		return Scope{}, err
	}
	for _, t := range []struct {
		s   string
		dst *time.Time
	}{{readAt, &st.ReadAt}, {okAt, &st.OKAt}, {fullAt, &st.FullAt}} {
		if t.s == "" {
			continue
		}
		v, err := store.ParseTime(t.s)
		if err != nil {
			return Scope{}, err
		}
		*t.dst = v
	}
	return st, nil
}

// ReadTape returns the tape of the scope's last complete read, nil if it has none
// (migration 0016). Only the read that follows needs it, so no other read of the scope
// carries it.
func ReadTape(ctx context.Context, q store.Querier, scope string) ([]byte, error) {
	var tape []byte
	err := q.QueryRowContext(ctx, `SELECT tape FROM scope_state WHERE scope = ?`, scope).Scan(&tape)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the tape of scope %s: %w", scope, err)
	}
	return tape, nil
}

// PutTape keeps tape as the scope's (nil forgets it), in tx; a scope never saved
// (PutScope) keeps none.
func PutTape(ctx context.Context, tx *store.Tx, scope string, tape []byte) error {
	if len(tape) == 0 {
		tape = nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE scope_state SET tape = ? WHERE scope = ?`, tape, scope); err != nil {
		return fmt.Errorf("keep the tape of scope %s: %w", scope, err)
	}
	return nil
}

// PutScope saves the scope's state in tx.
func PutScope(ctx context.Context, tx *store.Tx, st Scope) error {
	data, err := json.Marshal(st.Scope)
	if err != nil {
		return fmt.Errorf("save scope %s: %w", st.Scope.ID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO scope_state (scope, status, error, resources, read_at, ok_at, evaluated_with, full_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (scope) DO UPDATE SET status = excluded.status, error = excluded.error, resources = excluded.resources,
			read_at = excluded.read_at, ok_at = excluded.ok_at, evaluated_with = excluded.evaluated_with, full_at = excluded.full_at, data = excluded.data`,
		st.Scope.ID, st.Scope.Status, st.Scope.Error, st.Scope.Resources, store.FormatTime(st.ReadAt), store.FormatTime(st.OKAt),
		st.EvaluatedWith, store.FormatTime(st.FullAt), string(data))
	if err != nil {
		return fmt.Errorf("save scope %s: %w", st.Scope.ID, err)
	}
	return nil
}
