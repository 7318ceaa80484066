package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// Finding is a finding's life as the daemon follows it.
type Finding struct {
	Finding findings.Finding
	// Status is findings.StatusOpen, StatusWaived, StatusUnknown or StatusResolved.
	Status   string
	OpenedAt time.Time
	SeenAt   time.Time
	// ResolvedAt is when the finding stopped being seen (zero unless resolved).
	ResolvedAt time.Time
}

// findingColumns are the columns scanFinding decodes.
const findingColumns = `resource, status, opened_at, seen_at, resolved_at, data`

// ActiveFindings returns the findings of the scope that are not resolved, by
// fingerprint: all of them, or with uid those of that resource only; with keep, only
// those it keeps (by resource and status), the others are not decoded: a tick that
// changed 1% of a scope needs the findings of that 1%, and decoding every finding's JSON
// was a tenth of its cost.
func ActiveFindings(ctx context.Context, q store.Querier, scope, uid string, keep func(resource, status string) bool) (map[string]Finding, error) {
	const cols = `SELECT ` + findingColumns + ` FROM finding_state`
	var rows *sql.Rows
	var err error
	value := scope
	if uid == "" {
		rows, err = q.QueryContext(ctx, cols+` WHERE scope = ? AND status <> ?`, scope, findings.StatusResolved)
	} else {
		value = uid + " in " + scope
		rows, err = q.QueryContext(ctx, cols+` WHERE resource = ? AND scope = ? AND status <> ?`, uid, scope, findings.StatusResolved)
	}
	if err != nil {
		return nil, fmt.Errorf("read the findings of %s: %w", value, err)
	}
	defer rows.Close()
	out := map[string]Finding{}
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

// scanFinding decodes a row of findingColumns when keep (nil keeps all) keeps it.
func scanFinding(rows *sql.Rows, keep func(resource, status string) bool) (Finding, bool, error) {
	var fs Finding
	var resource, opened, seen, resolved string
	var data sql.RawBytes
	if err := rows.Scan(&resource, &fs.Status, &opened, &seen, &resolved, &data); err != nil {
		return Finding{}, false, err
	}
	if keep != nil && !keep(resource, fs.Status) {
		return Finding{}, false, nil
	}
	if err := json.Unmarshal(data, &fs.Finding); err != nil {
		return Finding{}, false, err
	}
	var err error
	if fs.OpenedAt, err = store.ParseTime(opened); err != nil {
		return Finding{}, false, err
	}
	if fs.SeenAt, err = store.ParseTime(seen); err != nil {
		return Finding{}, false, err
	}
	if fs.ResolvedAt, err = store.ParseTime(resolved); err != nil {
		return Finding{}, false, err
	}
	return fs, true, nil
}

// Life is a finding's row without the finding: which it is, whose policy, its status and
// when it opened, was last seen and resolved (zero unless resolved).
type Life struct {
	Fingerprint, Policy, Status  string
	OpenedAt, SeenAt, ResolvedAt time.Time
}

// Findings returns every finding the store holds, resolved ones included, in no order:
// with keep, only those it keeps, judged by their Life before their finding is decoded
// (resolved findings stay for ever; a report over a month decodes a month's). Each
// finding's Status is its row's.
func Findings(ctx context.Context, q store.Querier, keep func(Life) bool) ([]Finding, error) {
	out, err := queryFindings(ctx, q, keep, `SELECT fingerprint, policy, status, opened_at, seen_at, resolved_at, data FROM finding_state`)
	if err != nil {
		return nil, fmt.Errorf("read the findings: %w", err)
	}
	return out, nil
}

// FindingsOf returns the findings of policy whose status is status, in no order: what a
// look for one policy's open findings reads. The watch policy's are read by an index of
// their own (migration 0019), whatever the organisation's size; another policy's, by
// reading the table.
func FindingsOf(ctx context.Context, q store.Querier, policy, status string) ([]Finding, error) {
	out, err := queryFindings(ctx, q, nil, `SELECT fingerprint, policy, status, opened_at, seen_at, resolved_at, data FROM finding_state
		WHERE policy = ? AND status = ?`, policy, status)
	if err != nil {
		return nil, fmt.Errorf("read the %s findings of policy %s: %w", status, policy, err)
	}
	return out, nil
}

// queryFindings decodes the findings of query's rows (fingerprint, policy, status,
// opened_at, seen_at, resolved_at, data) that keep (nil: all) keeps.
func queryFindings(ctx context.Context, q store.Querier, keep func(Life) bool, query string, args ...any) ([]Finding, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Finding
	for rows.Next() {
		var l Life
		var opened, seen, resolved string
		var data sql.RawBytes
		if err := rows.Scan(&l.Fingerprint, &l.Policy, &l.Status, &opened, &seen, &resolved, &data); err != nil {
			return nil, err
		}
		for _, t := range []struct {
			s   string
			dst *time.Time
		}{{opened, &l.OpenedAt}, {seen, &l.SeenAt}, {resolved, &l.ResolvedAt}} {
			if *t.dst, err = store.ParseTime(t.s); err != nil {
				return nil, fmt.Errorf("finding %s: %w", l.Fingerprint, err)
			}
		}
		if keep != nil && !keep(l) {
			continue
		}
		fs := Finding{Status: l.Status, OpenedAt: l.OpenedAt, SeenAt: l.SeenAt, ResolvedAt: l.ResolvedAt}
		if err := json.Unmarshal(data, &fs.Finding); err != nil {
			return nil, fmt.Errorf("finding %s: data: %w", l.Fingerprint, err)
		}
		fs.Finding.Status = l.Status
		out = append(out, fs)
	}
	return out, rows.Err()
}

// OpenBySeverity counts the open findings by severity; a severity the store holds that
// findings cannot parse is not counted.
func OpenBySeverity(ctx context.Context, q store.Querier) (map[findings.Severity]int, error) {
	out := map[findings.Severity]int{}
	err := func() error {
		rows, err := q.QueryContext(ctx, `SELECT severity, COUNT(*) FROM finding_state WHERE status = ? GROUP BY severity`, findings.StatusOpen)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sev string
			var n int
			if err := rows.Scan(&sev, &n); err != nil {
				return err
			}
			if s, err := findings.ParseSeverity(sev); err == nil {
				out[s] += n
			}
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, fmt.Errorf("count the open findings: %w", err)
	}
	return out, nil
}

// PutFinding saves a finding's life in tx; the finding's JSON carries its status and
// when it opened.
func PutFinding(ctx context.Context, tx *store.Tx, fs Finding) error {
	return PutFindings(ctx, tx, []Finding{fs})
}

// findingsPerInsert is how many findings one statement saves: 10 parameters each, well
// within every database's bound.
const findingsPerInsert = 250

// PutFindings saves the lives of fss in tx, as PutFinding on each in turn would (of two
// with one fingerprint, the later stands), a few hundred to a statement: a scope's
// first read saves thousands, in the transaction that holds SQLite's one writer.
func PutFindings(ctx context.Context, tx *store.Tx, fss []Finding) error {
	fss = lastOfEach(fss, func(fs Finding) string { return fs.Finding.Fingerprint })
	for len(fss) > 0 {
		chunk := fss[:min(len(fss), findingsPerInsert)]
		fss = fss[len(chunk):]
		args := make([]any, 0, 10*len(chunk))
		for _, fs := range chunk {
			f := fs.Finding
			f.Status = fs.Status
			f.FirstSeen = fs.OpenedAt
			data, err := json.Marshal(f)
			if err != nil {
				return fmt.Errorf("save finding %s: %w", f.Fingerprint, err)
			}
			args = append(args, f.Fingerprint, f.Scope, f.Resource, f.Policy, f.Severity.String(), fs.Status,
				store.FormatTime(fs.OpenedAt), store.FormatTime(fs.SeenAt), store.FormatTime(fs.ResolvedAt), string(data))
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO finding_state (fingerprint, scope, resource, policy, severity, status, opened_at, seen_at, resolved_at, data)
		VALUES `+rowMarks(len(chunk), 10)+`
		ON CONFLICT (fingerprint) DO UPDATE SET scope = excluded.scope, resource = excluded.resource, policy = excluded.policy,
			severity = excluded.severity, status = excluded.status, opened_at = excluded.opened_at, seen_at = excluded.seen_at,
			resolved_at = excluded.resolved_at, data = excluded.data`, args...)
		if err != nil {
			if len(chunk) == 1 {
				return fmt.Errorf("save finding %s: %w", chunk[0].Finding.Fingerprint, err)
			}
			return fmt.Errorf("save %d findings (%s, …): %w", len(chunk), chunk[0].Finding.Fingerprint, err)
		}
	}
	return nil
}

// ScopesWithOpen returns the scopes holding an open finding among fingerprints (read
// by primary key, a few hundred at a time): the daemon asks it which scopes' findings
// still stand while their fixes ended, so that an unchanged read of them plans again.
func ScopesWithOpen(ctx context.Context, q store.Querier, fingerprints []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(fingerprints) > 0 {
		n := min(len(fingerprints), 500) // within every database's bound on parameters
		args := make([]any, 0, n+1)
		args = append(args, findings.StatusOpen)
		marks := make([]byte, 0, 3*n)
		for i, fp := range fingerprints[:n] {
			if i > 0 {
				marks = append(marks, ", "...)
			}
			marks = append(marks, '?')
			args = append(args, fp)
		}
		scopes, err := store.QueryAll(ctx, q, store.ScanString,
			`SELECT DISTINCT scope FROM finding_state WHERE status = ? AND fingerprint IN (`+string(marks)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read the scopes of %d findings: %w", len(fingerprints), err)
		}
		for _, s := range scopes {
			out[s] = true
		}
		fingerprints = fingerprints[n:]
	}
	return out, nil
}

// FindingScope returns the scope a finding was last judged in, and false if it never was.
func FindingScope(ctx context.Context, q store.Querier, fingerprint string) (string, bool, error) {
	var scope string
	err := q.QueryRowContext(ctx, `SELECT scope FROM finding_state WHERE fingerprint = ?`, fingerprint).Scan(&scope)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the scope of finding %s: %w", fingerprint, err)
	}
	return scope, true, nil
}
