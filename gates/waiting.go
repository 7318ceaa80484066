package gates

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/store"
)

// Waiting is a request still waiting for its decision, as the daemon reads it to tell
// which actions an arrived decision wakes: the action, the binding and the expiry only.
type Waiting struct {
	ActionID    string
	ContentHash string // what the approvals bind to (the action's Binding)
	ExpiresAt   time.Time
	// Decisions is how many decisions the request holds, signed or not: one that does
	// not reach the quorum leaves it pending, and one written by hand must still be
	// found and audited by Check.
	Decisions int
}

// Pending lists the requests in state pending by action id (an indexed read: the
// decisions counted, not read). A request past its expiry that ExpireDue has not marked
// yet is listed too: ExpiresAt tells it.
func Pending(ctx context.Context, q Querier) (map[string]Waiting, error) {
	ws, err := store.QueryAll(ctx, q, scanWaiting, waitingQuery, string(StatePending))
	if err != nil {
		return nil, fmt.Errorf("list the pending approval requests: %w", err)
	}
	out := make(map[string]Waiting, len(ws))
	for _, w := range ws {
		out[w.ActionID] = w
	}
	return out, nil
}

// waitingQuery reads Waiting rows; a condition on r follows it.
const waitingQuery = `SELECT r.action_id, r.content_hash, r.expires_at,
		(SELECT COUNT(*) FROM approval_decisions d WHERE d.request_id = r.id)
		FROM approval_requests r WHERE r.state = ?`

// PendingOf is Pending narrowed to the requests of the actions ids: what the daemon reads
// of the few actions Touched named.
func PendingOf(ctx context.Context, q Querier, ids []string) (map[string]Waiting, error) {
	out := make(map[string]Waiting, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500) // within every database's bound on parameters
		args := make([]any, 0, n+1)
		args = append(args, string(StatePending))
		for _, id := range ids[:n] {
			args = append(args, id)
		}
		ws, err := store.QueryAll(ctx, q, scanWaiting,
			waitingQuery+` AND r.action_id IN (`+strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read the pending approval requests of %d actions: %w", n, err)
		}
		for _, w := range ws {
			out[w.ActionID] = w
		}
		ids = ids[n:]
	}
	return out, nil
}

// StampMargin is how far before the previous look a look for what happened to approval
// requests (Touched) reaches back: decisions and ends are stamped by the clock of
// whoever recorded them (another replica, warden approve on a laptop), and stored times
// compare as text, which orders wrongly within one second.
const StampMargin = time.Minute

// FullLooks is how many looks a Looks makes for one that reads everything.
const FullLooks = 12

// Looks paces the looks for what happened to approval requests (warden serve's passes,
// the daemon's decision polls). Each reads what was touched since the previous one
// began, less StampMargin; every FullLooks-th, and the first, reads every pending
// request. That look catches what no timestamp tells: a request missing or of another
// content (written by hand, a crash between two writes), a clock further off than
// StampMargin. The zero value is ready; one Looks serves one caller's looks in turn.
type Looks struct {
	since time.Time // when the previous look began; zero before the first
	n     int       // looks since the last full one
}

// Next is since for a look beginning now: what it reads was touched at or after since,
// or everything when since is zero.
func (l *Looks) Next() (since time.Time) {
	if l.since.IsZero() || l.n+1 >= FullLooks {
		return time.Time{}
	}
	return l.since.Add(-StampMargin)
}

// Done records a look that began at began, with the since Next gave it, as complete: a
// look that failed is not recorded, and the next one reads what it would have.
func (l *Looks) Done(began, since time.Time) {
	l.since = began
	if l.n++; since.IsZero() {
		l.n = 0
	}
}

// Touched lists the actions whose approval request something happened to at or after
// since: decided, voided or marked expired then (by its decided_at), given a decision
// that did not end it (by the decision's time), or still pending yet due at now. Each
// is an indexed read, so a look costs what changed, not what waits; the times are the
// recording process's, so since should leave StampMargin.
func Touched(ctx context.Context, q Querier, since, now time.Time) ([]string, error) {
	// Three queries, not one UNION: SQLite plans a UNION as a merge, which scans the
	// table in order instead of using each query's index. CROSS JOIN makes SQLite read
	// the recent decisions first, not every pending request.
	at, due := store.FormatTime(since), store.FormatTime(now)
	seen := map[string]bool{}
	var out []string
	for _, qa := range []struct {
		query string
		args  []any
	}{
		{`SELECT action_id FROM approval_requests WHERE decided_at >= ? AND state <> ?`, []any{at, string(StatePending)}},
		{`SELECT action_id FROM approval_requests WHERE state = ? AND expires_at <= ?`, []any{string(StatePending), due}},
		{`SELECT r.action_id FROM approval_decisions d CROSS JOIN approval_requests r WHERE d.at >= ? AND r.id = d.request_id AND r.state = ?`,
			[]any{at, string(StatePending)}},
	} {
		ids, err := store.QueryAll(ctx, q, store.ScanString, qa.query, qa.args...)
		if err != nil {
			return nil, fmt.Errorf("list the approval requests touched since %s: %w", at, err)
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}

func scanWaiting(rows *sql.Rows) (Waiting, error) {
	var w Waiting
	var expires string
	if err := rows.Scan(&w.ActionID, &w.ContentHash, &expires, &w.Decisions); err != nil {
		return w, err
	}
	t, err := store.ParseTime(expires)
	w.ExpiresAt = t
	return w, err
}
