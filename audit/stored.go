package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/store"
)

// StoredCheckpoint is a signed checkpoint as the log stored it: its note (what an
// auditor verifies with the log's verifier key), the checkpoint the note's body says,
// and when it was signed.
type StoredCheckpoint struct {
	ID int64
	Checkpoint
	Note string
	At   time.Time
}

// CheckpointAt returns the latest checkpoint signed at or before at, and false when none
// was. A stored row whose columns disagree with its note was edited: that is an error,
// since neither can be trusted. The signature is not checked here (Verify does).
func (l *Log) CheckpointAt(ctx context.Context, at time.Time) (StoredCheckpoint, bool, error) {
	type row struct {
		id, size   int64
		root, note string
		at         time.Time
	}
	var best *row
	err := l.st.Read(ctx, func(r *store.Reader) error {
		// Every row is read: created_at is text, which does not sort as time, and a
		// checkpoint is a few hundred bytes, signed now and then.
		rows, err := r.QueryContext(ctx, `SELECT id, size, root, created_at, note FROM audit_checkpoints`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c row
			var created string
			if err := rows.Scan(&c.id, &c.size, &c.root, &created, &c.note); err != nil {
				return err
			}
			if c.at, err = store.ParseTime(created); err != nil {
				return fmt.Errorf("checkpoint %d: created_at: %w", c.id, err)
			}
			if c.at.After(at) {
				continue
			}
			if best == nil || c.at.After(best.at) || (c.at.Equal(best.at) && c.id > best.id) {
				best = &c
			}
		}
		return rows.Err()
	})
	if err != nil {
		return StoredCheckpoint{}, false, fmt.Errorf("read the audit checkpoint at %s: %w", store.FormatTime(at), err)
	}
	if best == nil {
		return StoredCheckpoint{}, false, nil
	}
	cp, err := noteBody([]byte(best.note))
	if err != nil {
		return StoredCheckpoint{}, false, fmt.Errorf("audit checkpoint %d: %w", best.id, err)
	}
	if cp.Size != best.size || cp.Root.String() != best.root {
		return StoredCheckpoint{}, false, fmt.Errorf("audit checkpoint %d: its note says size %d, root %s; its row says size %d, root %s",
			best.id, cp.Size, cp.Root, best.size, best.root)
	}
	return StoredCheckpoint{ID: best.id, Checkpoint: cp, Note: best.note, At: best.at}, true, nil
}

// noteBody reads a signed note's checkpoint without checking its signatures, which
// follow the note's last blank line.
func noteBody(signed []byte) (Checkpoint, error) {
	i := bytes.LastIndex(signed, []byte("\n\n"))
	if i < 0 {
		return Checkpoint{}, errors.New("not a signed note")
	}
	return ParseCheckpoint(string(signed[:i+1]))
}

// SeqsOf returns the seqs of the entries whose subject is one of subjects, in order:
// an action's steps, an approval request's decisions.
func (l *Log) SeqsOf(ctx context.Context, subjects ...string) ([]int64, error) {
	var out []int64
	err := l.st.Read(ctx, func(r *store.Reader) error {
		for _, s := range subjects {
			rows, err := r.QueryContext(ctx, `SELECT seq FROM audit_entries WHERE subject = ?`, s)
			if err != nil {
				return err
			}
			for rows.Next() {
				var seq int64
				if err := rows.Scan(&seq); err != nil {
					rows.Close()
					return err
				}
				out = append(out, seq)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the audit entries of %v: %w", subjects, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// EntriesOfKind returns every entry of one of kinds, in log order: the actions that
// ended, for a report of the fixes.
func (l *Log) EntriesOfKind(ctx context.Context, kinds ...string) ([]Entry, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(kinds)), ", ")
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = k
	}
	var out []Entry
	err := l.st.Read(ctx, func(r *store.Reader) error {
		rows, err := r.QueryContext(ctx, `SELECT seq, at, actor, kind, subject, data FROM audit_entries WHERE kind IN (`+marks+`) ORDER BY seq`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Entry
			var at, data string
			if err := rows.Scan(&e.Seq, &at, &e.Actor, &e.Kind, &e.Subject, &data); err != nil {
				return err
			}
			if e.Time, err = store.ParseTime(at); err != nil {
				return fmt.Errorf("entry %d: %w", e.Seq, err)
			}
			e.Data = json.RawMessage(data)
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read the audit entries of kind %v: %w", kinds, err)
	}
	return out, nil
}
