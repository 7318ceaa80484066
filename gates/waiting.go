package gates

import (
	"context"
	"database/sql"
	"fmt"
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
	ws, err := store.QueryAll(ctx, q, func(rows *sql.Rows) (Waiting, error) {
		var w Waiting
		var expires string
		if err := rows.Scan(&w.ActionID, &w.ContentHash, &expires, &w.Decisions); err != nil {
			return w, err
		}
		t, err := store.ParseTime(expires)
		w.ExpiresAt = t
		return w, err
	}, `SELECT r.action_id, r.content_hash, r.expires_at,
		(SELECT COUNT(*) FROM approval_decisions d WHERE d.request_id = r.id)
		FROM approval_requests r WHERE r.state = ?`, string(StatePending))
	if err != nil {
		return nil, fmt.Errorf("list the pending approval requests: %w", err)
	}
	out := make(map[string]Waiting, len(ws))
	for _, w := range ws {
		out[w.ActionID] = w
	}
	return out, nil
}
