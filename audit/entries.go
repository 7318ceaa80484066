package audit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/warden-sec/warden/store"
)

// Entries returns up to limit entries from seq from on, in order, as stored: it reads
// the log, it does not verify it (Verify does).
func (l *Log) Entries(ctx context.Context, from int64, limit int) ([]Entry, error) {
	var out []Entry
	err := l.st.Read(ctx, func(r *store.Reader) error {
		rows, err := r.QueryContext(ctx, `SELECT seq, at, actor, kind, subject, data FROM audit_entries WHERE seq >= ? ORDER BY seq LIMIT ?`, from, limit)
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
		return nil, fmt.Errorf("read audit entries from %d: %w", from, err)
	}
	return out, nil
}
