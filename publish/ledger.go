package publish

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// ledgerRow is what a sink last accepted of a finding (published_findings).
type ledgerRow struct {
	hash, status, data string
	createdAt          time.Time
}

// readLedger returns what sink holds, by fingerprint.
func readLedger(ctx context.Context, q store.Querier, sink string) (map[string]ledgerRow, error) {
	out := map[string]ledgerRow{}
	rows, err := store.QueryAll(ctx, q, func(r *sql.Rows) (struct {
		fp string
		ledgerRow
	}, error) {
		var v struct {
			fp string
			ledgerRow
		}
		var created string
		if err := r.Scan(&v.fp, &v.hash, &v.status, &v.data, &created); err != nil {
			return v, err
		}
		t, err := store.ParseTime(created)
		v.createdAt = t
		return v, err
	}, `SELECT fingerprint, hash, status, data, created_at FROM published_findings WHERE sink = ?`, sink)
	if err != nil {
		return nil, fmt.Errorf("read what was sent to %s: %w", sink, err)
	}
	for _, r := range rows {
		out[r.fp] = r.ledgerRow
	}
	return out, nil
}

// record notes in tx what sink did with a batch: each accepted finding's hash, status
// and content; each refused one's reason, keeping what was accepted before.
func record(ctx context.Context, tx *store.Tx, sink string, batch []pending, refused map[string]string, now time.Time) error {
	at := store.FormatTime(now)
	for _, p := range batch {
		fp := p.item.Finding.Fingerprint
		created := store.FormatTime(p.item.CreatedAt)
		if why, ok := refused[fp]; ok {
			why = findings.ValidText(why)
			_, err := tx.ExecContext(ctx, `INSERT INTO published_findings (sink, fingerprint, hash, status, data, created_at, sent_at, error, failures)
				VALUES (?, ?, '', '', '{}', ?, '', ?, 1)
				ON CONFLICT (sink, fingerprint) DO UPDATE SET error = excluded.error, failures = published_findings.failures + 1`,
				sink, fp, created, why)
			if err != nil {
				return fmt.Errorf("record that %s refused finding %s: %w", sink, fp, err)
			}
			continue
		}
		data, err := json.Marshal(p.item)
		if err != nil {
			return fmt.Errorf("record finding %s sent to %s: %w", fp, sink, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO published_findings (sink, fingerprint, hash, status, data, created_at, sent_at, error, failures)
			VALUES (?, ?, ?, ?, ?, ?, ?, '', 0)
			ON CONFLICT (sink, fingerprint) DO UPDATE SET hash = excluded.hash, status = excluded.status, data = excluded.data,
				sent_at = excluded.sent_at, error = '', failures = 0`,
			sink, fp, p.hash, p.item.Finding.Status, string(data), created, at)
		if err != nil {
			return fmt.Errorf("record finding %s sent to %s: %w", fp, sink, err)
		}
	}
	return nil
}

// forget deletes what sink refused of the findings fps and never accepted: they are gone.
func forget(ctx context.Context, tx *store.Tx, sink string, fps []string) error {
	for _, fp := range fps {
		if _, err := tx.ExecContext(ctx, `DELETE FROM published_findings WHERE sink = ? AND fingerprint = ? AND hash = ''`, sink, fp); err != nil {
			return fmt.Errorf("forget finding %s refused by %s: %w", fp, sink, err)
		}
	}
	return nil
}

// Sent is what a sink last accepted of one finding, and its last refusal.
type Sent struct {
	Fingerprint string
	// Status is the status last accepted; empty if the sink never accepted it.
	Status string
	// Error is the sink's last refusal and Failures how many in a row (0: accepted).
	Error    string
	Failures int
	SentAt   time.Time
}

// Ledger lists what sink was sent, by fingerprint: what warden believes the place
// holds, and the findings it refused.
func Ledger(ctx context.Context, q store.Querier, sink string) (map[string]Sent, error) {
	rows, err := store.QueryAll(ctx, q, func(r *sql.Rows) (Sent, error) {
		var s Sent
		var at string
		if err := r.Scan(&s.Fingerprint, &s.Status, &s.Error, &s.Failures, &at); err != nil {
			return s, err
		}
		t, err := store.ParseTime(at)
		s.SentAt = t
		return s, err
	}, `SELECT fingerprint, status, error, failures, sent_at FROM published_findings WHERE sink = ?`, sink)
	if err != nil {
		return nil, fmt.Errorf("read what was sent to %s: %w", sink, err)
	}
	out := make(map[string]Sent, len(rows))
	for _, s := range rows {
		out[s.Fingerprint] = s
	}
	return out, nil
}
