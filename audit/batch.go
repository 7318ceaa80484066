package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// Rows per INSERT statement: well under SQLite's 32,766 and PostgreSQL's 65,535 bound
// parameters, large enough that a scan's thousands of finding events cost few round trips.
const (
	entriesPerInsert = 500 // 6 parameters each
	hashesPerInsert  = 1000
)

// AppendAll adds evs in order in the caller's transaction, exactly as calling Append on
// each would, but reading each stored hash of the tree at most once and inserting rows
// in batches: a scan that opens 100,000 findings records them in one pass. Either all
// entries are added, with the caller's transaction, or none.
func (l *Log) AppendAll(ctx context.Context, tx *store.Tx, evs []Event) ([]Entry, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	now := l.now()
	if now.IsZero() {
		return nil, errors.New("append audit entries: the clock returned the zero time")
	}
	entries := make([]Entry, len(evs))
	for i, ev := range evs {
		if ev.Kind == "" {
			return nil, fmt.Errorf("append audit entry %d of %d: empty kind", i+1, len(evs))
		}
		if strings.TrimSpace(ev.Actor) == "" {
			return nil, fmt.Errorf("append audit entry %s: no actor: every event names who caused it", ev.Kind)
		}
		data, err := canonicalDataWith(ev.Data, Correlation(ctx))
		if err != nil {
			return nil, fmt.Errorf("append audit entry %s %s: %w", ev.Kind, ev.Subject, err)
		}
		entries[i] = Entry{Time: now.Round(0).UTC(), Actor: findings.ValidText(ev.Actor), Kind: findings.ValidText(ev.Kind),
			Subject: findings.ValidText(ev.Subject), Data: data}
	}
	var first int64
	if err := tx.Serialize(ctx, "audit"); err != nil {
		return nil, fmt.Errorf("append audit entries: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), -1) + 1 FROM audit_entries`).Scan(&first); err != nil {
		return nil, fmt.Errorf("append audit entries: read the log's size: %w", err)
	}
	if first == 0 {
		if _, err := l.originTx(ctx, tx); err != nil {
			return nil, fmt.Errorf("append audit entry 0: %w", err)
		}
	}
	// The tree's new nodes are computed from nodes stored before the batch and nodes
	// the batch itself adds: both are kept here, so no hash is read twice.
	known := map[int64]tlog.Hash{}
	reader := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		var missing []int64
		for _, x := range indexes {
			if _, ok := known[x]; !ok {
				missing = append(missing, x)
			}
		}
		if len(missing) > 0 {
			got, err := readHashes(ctx, tx, missing)
			if err != nil {
				return nil, err
			}
			for i, x := range missing {
				known[x] = got[i]
			}
		}
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			out[i] = known[x]
		}
		return out, nil
	})
	var newHashes []tlog.Hash
	at := ""
	for i := range entries {
		e := &entries[i]
		e.Seq = first + int64(i)
		at = store.FormatTime(e.Time)
		rec := appendRecord(nil, e.Seq, at, e.Actor, e.Kind, e.Subject, e.Data)
		hs, err := tlog.StoredHashes(e.Seq, rec, reader)
		if err != nil {
			return nil, fmt.Errorf("append audit entry %d: compute the tree's hashes: %w", e.Seq, err)
		}
		idx := tlog.StoredHashIndex(0, e.Seq)
		for j, h := range hs {
			known[idx+int64(j)] = h
		}
		newHashes = append(newHashes, hs...)
	}
	if err := insertEntries(ctx, tx, entries, at); err != nil {
		return nil, err
	}
	// Stored hashes of consecutive leaves are consecutive indexes: the batch's hashes
	// start at the first leaf's index and run without a gap.
	base := tlog.StoredHashIndex(0, first)
	for off := 0; off < len(newHashes); off += hashesPerInsert {
		end := min(off+hashesPerInsert, len(newHashes))
		if err := insertHashes(ctx, tx, base+int64(off), newHashes[off:end]); err != nil {
			return nil, fmt.Errorf("append audit entries %d-%d: %w", first, first+int64(len(entries))-1, err)
		}
	}
	return entries, nil
}

// insertEntries inserts entries, which share one time, in multi-row statements.
func insertEntries(ctx context.Context, tx *store.Tx, entries []Entry, at string) error {
	for off := 0; off < len(entries); off += entriesPerInsert {
		chunk := entries[off:min(off+entriesPerInsert, len(entries))]
		var q strings.Builder
		q.WriteString(`INSERT INTO audit_entries (seq, at, actor, kind, subject, data) VALUES `)
		args := make([]any, 0, 6*len(chunk))
		for i, e := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, e.Seq, at, e.Actor, e.Kind, e.Subject, string(e.Data))
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("append audit entries %d-%d: %w", chunk[0].Seq, chunk[len(chunk)-1].Seq, err)
		}
	}
	return nil
}

// lastOfKind reads the subject of the latest entry of a kind (given twice). kind >= ?
// AND kind <= ? is kind = ?, written so that the order by (kind, seq) is the index
// audit_entries_kind's own: with kind = ?, PostgreSQL's generic plan of the prepared
// statement (taken after a few runs, blind to how rare a version kind is) walks the
// primary key back through the whole log instead, under the audit lock every fix job's
// plan takes (10 ms at 150,000 entries, growing with the log).
const lastOfKind = `SELECT subject FROM audit_entries WHERE kind >= ? AND kind <= ? ORDER BY kind DESC, seq DESC LIMIT 1`

// AppendChanged appends ev unless the latest entry of its kind already has its subject:
// a version event (policy pack, config) is recorded when the version changes, not on
// every run. It reports whether it appended.
func (l *Log) AppendChanged(ctx context.Context, tx *store.Tx, ev Event) (bool, error) {
	if err := tx.Serialize(ctx, "audit"); err != nil {
		return false, fmt.Errorf("append audit entry %s: %w", ev.Kind, err)
	}
	var last string
	err := tx.QueryRowContext(ctx, lastOfKind, ev.Kind, ev.Kind).Scan(&last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, fmt.Errorf("append audit entry %s: read the last one: %w", ev.Kind, err)
	case last == findings.ValidText(ev.Subject):
		return false, nil
	}
	if _, err := l.Append(ctx, tx, ev); err != nil {
		return false, err
	}
	return true, nil
}
