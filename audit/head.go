package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/store"
)

// Size returns the number of entries in the log: the seq the next entry gets. q is a
// store.Tx or a store.Reader, so a caller counts inside its own transaction or outside
// any. It reads the log; it does not verify it (Verify does).
func Size(ctx context.Context, q store.Querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), -1) + 1 FROM audit_entries`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the audit log's size: %w", err)
	}
	return n, nil
}

// CountKind is the number of entries of kind in the log (KindApprovalForged for the
// metrics): every process's, as the log is shared.
func CountKind(ctx context.Context, q store.Querier, kind string) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_entries WHERE kind = ?`, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the audit log's %s entries: %w", kind, err)
	}
	return n, nil
}

// CheckpointMark is the latest signed checkpoint as its row records it: how many entries
// it covers and when it was signed. Status pages and metrics show it; the signed note
// itself is Log.LatestCheckpoint's.
type CheckpointMark struct {
	Size int64     `json:"size"`
	At   time.Time `json:"at"`
}

// LatestCheckpoint returns the newest stored checkpoint's size and time through q (a
// store.Tx or a store.Reader), and false when none was ever signed.
func LatestCheckpoint(ctx context.Context, q store.Querier) (CheckpointMark, bool, error) {
	var c CheckpointMark
	var at string
	err := q.QueryRowContext(ctx, `SELECT size, created_at FROM audit_checkpoints ORDER BY id DESC LIMIT 1`).Scan(&c.Size, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return CheckpointMark{}, false, nil
	}
	if err == nil {
		c.At, err = store.ParseTime(at)
	}
	if err != nil {
		return CheckpointMark{}, false, fmt.Errorf("read the last checkpoint: %w", err)
	}
	return c, true, nil
}
