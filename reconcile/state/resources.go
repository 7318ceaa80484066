package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// ResourceHashes returns the stored hash of every resource of the scope, by uid.
func ResourceHashes(ctx context.Context, q store.Querier, scope string) (map[string]string, error) {
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

// SameResourceHashes reports whether the scope's stored hashes are still want: the
// compare half of an observation's compare-and-set, run in its transaction. It decodes
// nothing it does not compare (it reads every row of the scope on every tick).
func SameResourceHashes(ctx context.Context, q store.Querier, scope string, want map[string]string) (bool, error) {
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

// ResourceHash returns the stored hash of one resource of the scope, and false if the
// store does not hold it there. The hash is "" for a resource whose last evaluation
// failed in part (the next read evaluates it again).
func ResourceHash(ctx context.Context, q store.Querier, scope, uid string) (string, bool, error) {
	var h string
	err := q.QueryRowContext(ctx, `SELECT hash FROM resource_state WHERE scope = ? AND uid = ?`, scope, uid).Scan(&h)
	switch {
	case err == nil:
		return h, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	}
	return "", false, fmt.Errorf("read resource %s: %w", uid, err)
}

// Resource returns a resource as its scope was last read, and false if the store does
// not hold it there.
func Resource(ctx context.Context, q store.Querier, scope, uid string) (snapshot.Resource, bool, error) {
	var data string
	err := q.QueryRowContext(ctx, `SELECT data FROM resource_state WHERE scope = ? AND uid = ?`, scope, uid).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return snapshot.Resource{}, false, nil
	}
	if err != nil {
		return snapshot.Resource{}, false, fmt.Errorf("read resource %s: %w", uid, err)
	}
	var res snapshot.Resource
	if err := json.Unmarshal([]byte(data), &res); err != nil {
		return snapshot.Resource{}, false, fmt.Errorf("read resource %s: %w", uid, err)
	}
	return res, true, nil
}

// Resources returns the resources of scope among uids as the scope was last read, by
// uid (those the store does not hold there are absent), read a few hundred at a time: a
// scope's plan wants the resource of every open finding, which one query each made a
// round trip, and on SQLite a parse, per resource.
func Resources(ctx context.Context, q store.Querier, scope string, uids []string) (map[string]snapshot.Resource, error) {
	out := make(map[string]snapshot.Resource, len(uids))
	for len(uids) > 0 {
		n := min(len(uids), 500) // within every database's bound on parameters
		args := make([]any, 0, n+1)
		args = append(args, scope)
		for _, uid := range uids[:n] {
			args = append(args, uid)
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
		rows, err := store.QueryAll(ctx, q, func(rows *sql.Rows) ([2]string, error) {
			var uid, data string
			err := rows.Scan(&uid, &data)
			return [2]string{uid, data}, err
		}, `SELECT uid, data FROM resource_state WHERE scope = ? AND uid IN (`+marks+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read %d resources of %s: %w", n, scope, err)
		}
		for _, r := range rows {
			var res snapshot.Resource
			if err := json.Unmarshal([]byte(r[1]), &res); err != nil {
				return nil, fmt.Errorf("read resource %s: %w", r[0], err)
			}
			out[r[0]] = res
		}
		uids = uids[n:]
	}
	return out, nil
}

// ResourcesOfTypes returns the resources of the given types as their scopes were last
// read, sorted by uid (the dashboard's Access page reads the IAM principals).
func ResourcesOfTypes(ctx context.Context, q store.Querier, types ...string) ([]snapshot.Resource, error) {
	if len(types) == 0 {
		return nil, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(types)), ", ")
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = t
	}
	out, err := store.QueryAll(ctx, q, func(rows *sql.Rows) (snapshot.Resource, error) {
		var data string
		if err := rows.Scan(&data); err != nil {
			return snapshot.Resource{}, err
		}
		var r snapshot.Resource
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return r, fmt.Errorf("decode a resource: %w", err)
		}
		return r, nil
	}, `SELECT data FROM resource_state WHERE type IN (`+marks+`) ORDER BY uid`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the resources of %s: %w", strings.Join(types, ", "), err)
	}
	return out, nil
}

// ResourceRow is a resource's row without the resource: what a report counts.
type ResourceRow struct {
	Scope, UID, Type string
	// Hash is "" when the resource's last evaluation judged it only in part.
	Hash string
	// ReadAt is when a read last changed it.
	ReadAt time.Time
}

// ResourceRows returns the row of every resource the store holds, in no order; the
// resources themselves are not decoded.
func ResourceRows(ctx context.Context, q store.Querier) ([]ResourceRow, error) {
	out, err := store.QueryAll(ctx, q, func(rows *sql.Rows) (ResourceRow, error) {
		var r ResourceRow
		var readAt string
		if err := rows.Scan(&r.Scope, &r.UID, &r.Type, &r.Hash, &readAt); err != nil {
			return r, err
		}
		var err error
		if r.ReadAt, err = store.ParseTime(readAt); err != nil {
			return r, fmt.Errorf("resource %s: %w", r.UID, err)
		}
		return r, nil
	}, `SELECT scope, uid, type, hash, read_at FROM resource_state`)
	if err != nil {
		return nil, fmt.Errorf("read the resources: %w", err)
	}
	return out, nil
}

// CountResources returns how many resources the store holds, every scope's.
func CountResources(ctx context.Context, q store.Querier) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM resource_state`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the resources: %w", err)
	}
	return n, nil
}

// ScopeOf returns the one scope the store holds the resource in, or "" if none or
// several do (an AWS-managed policy is read in every account: a uid alone does not say
// which).
func ScopeOf(ctx context.Context, q store.Querier, uid string) (string, error) {
	scopes, err := store.QueryAll(ctx, q, store.ScanString, `SELECT scope FROM resource_state WHERE uid = ? LIMIT 2`, uid)
	if err != nil {
		return "", fmt.Errorf("find the scope of %s: %w", uid, err)
	}
	if len(scopes) != 1 {
		return "", nil
	}
	return scopes[0], nil
}

// PutResource saves the resource as read in scope, data its JSON and hash its hash (""
// to have the next read evaluate it again): a uid is unique only within its scope (an
// AWS-managed policy has one ARN in every account).
func PutResource(ctx context.Context, tx *store.Tx, scope string, r snapshot.Resource, hash string, data []byte, at time.Time) error {
	return PutResources(ctx, tx, scope, []ResourceWrite{{Resource: r, Hash: hash, Data: data}}, at)
}

// ResourceWrite is one resource for PutResources: the resource as read, its JSON, and
// its hash ("" to have the next read evaluate it again).
type ResourceWrite struct {
	Resource snapshot.Resource
	Data     []byte
	Hash     string
}

// resourcesPerInsert is how many resources one statement saves: 6 parameters each.
const resourcesPerInsert = 400

// PutResources saves the resources of ws as read in scope at at, as PutResource on each
// in turn would (of two with one uid, the later stands), a few hundred to a statement.
func PutResources(ctx context.Context, tx *store.Tx, scope string, ws []ResourceWrite, at time.Time) error {
	ws = lastOfEach(ws, func(w ResourceWrite) string { return w.Resource.UID })
	readAt := store.FormatTime(at)
	for len(ws) > 0 {
		chunk := ws[:min(len(ws), resourcesPerInsert)]
		ws = ws[len(chunk):]
		args := make([]any, 0, 6*len(chunk))
		for _, w := range chunk {
			args = append(args, scope, w.Resource.UID, w.Resource.Type, w.Hash, string(w.Data), readAt)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO resource_state (scope, uid, type, hash, data, read_at) VALUES `+rowMarks(len(chunk), 6)+`
		ON CONFLICT (scope, uid) DO UPDATE SET type = excluded.type, hash = excluded.hash, data = excluded.data, read_at = excluded.read_at`, args...)
		if err != nil {
			if len(chunk) == 1 {
				return fmt.Errorf("save resource %s: %w", chunk[0].Resource.UID, err)
			}
			return fmt.Errorf("save %d resources of %s (%s, …): %w", len(chunk), scope, chunk[0].Resource.UID, err)
		}
	}
	return nil
}

// rowMarks is the VALUES list of an INSERT of rows rows of cols parameters each:
// "(?, ?), (?, ?)".
func rowMarks(rows, cols int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}

// lastOfEach keeps, of the items sharing a key, the last, in the order of their last
// occurrence: one multi-row upsert may not touch a row twice (PostgreSQL refuses), and
// writing them one by one would have left the last.
func lastOfEach[T any](items []T, key func(T) string) []T {
	if len(items) < 2 {
		return items
	}
	last := make(map[string]int, len(items))
	for i, it := range items {
		last[key(it)] = i
	}
	if len(last) == len(items) {
		return items
	}
	out := make([]T, 0, len(last))
	for i, it := range items {
		if last[key(it)] == i {
			out = append(out, it)
		}
	}
	return out
}

// DeleteResource forgets a resource of the scope: the cloud no longer has it.
func DeleteResource(ctx context.Context, tx *store.Tx, scope, uid string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM resource_state WHERE scope = ? AND uid = ?`, scope, uid); err != nil {
		return fmt.Errorf("forget resource %s: %w", uid, err)
	}
	return nil
}
