package evidence

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/store"
)

// checkpointAt returns the latest checkpoint stored at or before at, nil when none was.
// audit.Log offers only the latest one; the checkpoints are read here from the table
// audit keeps them in (migration 0002: audit_checkpoints, one row per signed note with
// its size, root and creation time).
func checkpointAt(ctx context.Context, st *store.Store, at time.Time) (*compliance.Checkpoint, error) {
	type row struct {
		id, size   int64
		root, note string
		at         time.Time
	}
	var best *row
	err := st.Read(ctx, func(r *store.Reader) error {
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
		return nil, fmt.Errorf("read the audit checkpoint at %s: %w", stamp(at), err)
	}
	if best == nil {
		return nil, nil
	}
	cp, err := parseNote([]byte(best.note))
	if err != nil {
		return nil, fmt.Errorf("audit checkpoint %d: %w", best.id, err)
	}
	// The columns repeat the note for queries; a row whose columns and note disagree was
	// edited, and its note is what an auditor would check: neither can be trusted.
	if cp.Size != best.size || cp.Root.String() != best.root {
		return nil, fmt.Errorf("audit checkpoint %d: its note says size %d, root %s; its row says size %d, root %s",
			best.id, cp.Size, cp.Root, best.size, best.root)
	}
	return &compliance.Checkpoint{Size: cp.Size, Root: base64.StdEncoding.EncodeToString(cp.Root[:]), Note: best.note, At: best.at}, nil
}

// parseNote reads a signed checkpoint's body without checking its signature: the
// report carries the note for the auditor to check with the verifier key.
func parseNote(signed []byte) (audit.Checkpoint, error) {
	// As note.Open: the signatures follow the last blank line.
	i := bytes.LastIndex(signed, []byte("\n\n"))
	if i < 0 {
		return audit.Checkpoint{}, fmt.Errorf("not a signed note")
	}
	return audit.ParseCheckpoint(string(signed[:i+1]))
}
