package reconcile

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// ScopeState is a scope as the daemon last read it.
type ScopeState struct {
	Scope snapshot.Scope
	// ReadAt is the last read's time, OKAt the last read in full (zero if none yet).
	ReadAt, OKAt time.Time
	// EvaluatedWith is the engine and settings version its findings were judged with;
	// FullAt when every resource of it was last evaluated.
	EvaluatedWith string
	FullAt        time.Time
}

// FindingState is a finding's life as the daemon follows it.
type FindingState struct {
	Finding  findings.Finding
	Status   string // findings.StatusOpen, StatusWaived, StatusUnknown, or StatusResolved
	OpenedAt time.Time
	SeenAt   time.Time
	// ResolvedAt is when the finding stopped being seen (zero unless resolved).
	ResolvedAt time.Time
}

// StatusResolved marks a finding the daemon no longer sees on a resource it read again,
// or whose resource its scope's full read no longer lists.
const StatusResolved = "resolved"

// querier is a store.Tx or a store.Reader.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// active statuses are those of findings not (yet) resolved.
func active(status string) bool { return status != StatusResolved }

// resourceHashes returns the stored hash of every resource of the scope.
func resourceHashes(ctx context.Context, q querier, scope string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT uid, hash FROM resource_state WHERE scope = ?`, scope)
	if err != nil {
		return nil, fmt.Errorf("read the resources of %s: %w", scope, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var uid, h string
		if err := rows.Scan(&uid, &h); err != nil {
			return nil, fmt.Errorf("read the resources of %s: %w", scope, err)
		}
		out[uid] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the resources of %s: %w", scope, err)
	}
	return out, nil
}

// sameResourceHashes reports whether the scope's stored hashes are still want: the
// compare half of an observation's compare-and-set, run in its transaction. It decodes
// nothing it does not compare (it reads every row of the scope on every tick).
func sameResourceHashes(ctx context.Context, q querier, scope string, want map[string]string) (bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT uid, hash FROM resource_state WHERE scope = ?`, scope)
	if err != nil {
		return false, fmt.Errorf("read the resources of %s: %w", scope, err)
	}
	defer rows.Close()
	n := 0
	same := true
	var uid, h sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&uid, &h); err != nil {
			return false, fmt.Errorf("read the resources of %s: %w", scope, err)
		}
		n++
		if w, ok := want[string(uid)]; !ok || w != string(h) {
			same = false
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read the resources of %s: %w", scope, err)
	}
	return same && n == len(want), nil
}

// putResource saves the resource as read in scope: a uid is unique only within its scope
// (an AWS-managed policy has one ARN in every account).
func putResource(ctx context.Context, tx *store.Tx, scope string, r snapshot.Resource, hash string, data []byte, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO resource_state (scope, uid, type, hash, data, read_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (scope, uid) DO UPDATE SET type = excluded.type, hash = excluded.hash, data = excluded.data, read_at = excluded.read_at`,
		scope, r.UID, r.Type, hash, string(data), store.FormatTime(at))
	if err != nil {
		return fmt.Errorf("save resource %s: %w", r.UID, err)
	}
	return nil
}

func deleteResource(ctx context.Context, tx *store.Tx, scope, uid string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM resource_state WHERE scope = ? AND uid = ?`, scope, uid); err != nil {
		return fmt.Errorf("forget resource %s: %w", uid, err)
	}
	return nil
}

// readScope returns the scope's state, and false if it was never read.
func readScope(ctx context.Context, q querier, scope string) (ScopeState, bool, error) {
	st, err := scanScope(q.QueryRowContext(ctx, `SELECT data, read_at, ok_at, evaluated_with, full_at FROM scope_state WHERE scope = ?`, scope))
	if errors.Is(err, sql.ErrNoRows) {
		return ScopeState{}, false, nil
	}
	if err != nil {
		return ScopeState{}, false, fmt.Errorf("read the state of scope %s: %w", scope, err)
	}
	return st, true, nil
}

// scanScope decodes a row of data, read_at, ok_at, evaluated_with, full_at.
func scanScope(row interface{ Scan(...any) error }) (ScopeState, error) {
	var st ScopeState
	var data, readAt, okAt, fullAt string
	if err := row.Scan(&data, &readAt, &okAt, &st.EvaluatedWith, &fullAt); err != nil {
		return ScopeState{}, err
	}
	if err := json.Unmarshal([]byte(data), &st.Scope); err != nil {
		return ScopeState{}, err
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
			return ScopeState{}, err
		}
		*t.dst = v
	}
	return st, nil
}

func putScope(ctx context.Context, tx *store.Tx, st ScopeState) error {
	data, err := json.Marshal(st.Scope)
	if err != nil {
		return fmt.Errorf("save scope %s: %w", st.Scope.ID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO scope_state (scope, status, error, resources, read_at, ok_at, evaluated_with, full_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (scope) DO UPDATE SET status = excluded.status, error = excluded.error, resources = excluded.resources,
			read_at = excluded.read_at, ok_at = excluded.ok_at, evaluated_with = excluded.evaluated_with, full_at = excluded.full_at, data = excluded.data`,
		st.Scope.ID, st.Scope.Status, st.Scope.Error, st.Scope.Resources, formatOpt(st.ReadAt), formatOpt(st.OKAt), st.EvaluatedWith, formatOpt(st.FullAt), string(data))
	if err != nil {
		return fmt.Errorf("save scope %s: %w", st.Scope.ID, err)
	}
	return nil
}

// formatOpt formats t, or "" for the zero time.
func formatOpt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return store.FormatTime(t)
}

// scopeFindings returns the findings of the scope that are not resolved, by fingerprint.
func scopeFindings(ctx context.Context, q querier, scope string) (map[string]FindingState, error) {
	return activeFindings(ctx, q, scope, "", nil)
}

// activeFindings returns the findings of the scope that are not resolved, by
// fingerprint: all of them, or with uid those of that resource only; with keep, only
// those it keeps (by resource and status), the others are not decoded: a tick that
// changed 1% of a scope needs the findings of that 1%, and decoding every finding's JSON
// was a tenth of its cost.
func activeFindings(ctx context.Context, q querier, scope, uid string, keep func(resource, status string) bool) (map[string]FindingState, error) {
	const cols = `SELECT resource, status, opened_at, seen_at, resolved_at, data FROM finding_state`
	var rows *sql.Rows
	var err error
	value := scope
	if uid == "" {
		rows, err = q.QueryContext(ctx, cols+` WHERE scope = ? AND status <> ?`, scope, StatusResolved)
	} else {
		value = uid + " in " + scope
		rows, err = q.QueryContext(ctx, cols+` WHERE resource = ? AND scope = ? AND status <> ?`, uid, scope, StatusResolved)
	}
	if err != nil {
		return nil, fmt.Errorf("read the findings of %s: %w", value, err)
	}
	defer rows.Close()
	out := map[string]FindingState{}
	for rows.Next() {
		fs, ok, err := scanFinding(rows, keep)
		if err != nil {
			return nil, fmt.Errorf("read the findings of %s: %w", value, err)
		}
		if ok {
			out[fs.Finding.Fingerprint] = fs
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the findings of %s: %w", value, err)
	}
	return out, nil
}

// scanFinding decodes a row of resource, status, opened_at, seen_at, resolved_at, data
// when keep (nil keeps all) keeps it.
func scanFinding(rows *sql.Rows, keep func(resource, status string) bool) (FindingState, bool, error) {
	var fs FindingState
	var resource, opened, seen, resolved string
	var data sql.RawBytes
	if err := rows.Scan(&resource, &fs.Status, &opened, &seen, &resolved, &data); err != nil {
		return FindingState{}, false, err
	}
	if keep != nil && !keep(resource, fs.Status) {
		return FindingState{}, false, nil
	}
	if err := json.Unmarshal(data, &fs.Finding); err != nil {
		return FindingState{}, false, err
	}
	var err error
	if fs.OpenedAt, err = store.ParseTime(opened); err != nil {
		return FindingState{}, false, err
	}
	if fs.SeenAt, err = store.ParseTime(seen); err != nil {
		return FindingState{}, false, err
	}
	if resolved != "" {
		if fs.ResolvedAt, err = store.ParseTime(resolved); err != nil {
			return FindingState{}, false, err
		}
	}
	return fs, true, nil
}

func putFinding(ctx context.Context, tx *store.Tx, fs FindingState) error {
	f := fs.Finding
	f.Status = fs.Status
	f.FirstSeen = fs.OpenedAt
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("save finding %s: %w", f.Fingerprint, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO finding_state (fingerprint, scope, resource, policy, severity, status, opened_at, seen_at, resolved_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (fingerprint) DO UPDATE SET scope = excluded.scope, resource = excluded.resource, policy = excluded.policy,
			severity = excluded.severity, status = excluded.status, opened_at = excluded.opened_at, seen_at = excluded.seen_at,
			resolved_at = excluded.resolved_at, data = excluded.data`,
		f.Fingerprint, f.Scope, f.Resource, f.Policy, f.Severity.String(), fs.Status,
		store.FormatTime(fs.OpenedAt), store.FormatTime(fs.SeenAt), formatOpt(fs.ResolvedAt), string(data))
	if err != nil {
		return fmt.Errorf("save finding %s: %w", f.Fingerprint, err)
	}
	return nil
}
