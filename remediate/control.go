package remediate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
)

// Pause is the global stop: while set, apply and rollback refuse to run.
type Pause struct {
	Paused bool      `json:"paused"`
	Reason string    `json:"reason,omitempty"`
	Actor  string    `json:"actor,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

const pauseControl = "pause"

func readPause(ctx context.Context, q queryer) (Pause, error) {
	var active int
	var p Pause
	var at string
	err := q.QueryRowContext(ctx, `SELECT active, reason, actor, at FROM controls WHERE name = ?`, pauseControl).Scan(&active, &p.Reason, &p.Actor, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Pause{}, nil
	}
	if err != nil {
		return Pause{}, fmt.Errorf("read the pause control: %w", err)
	}
	p.Paused = active == 1
	if p.At, err = store.ParseTime(at); err != nil {
		return Pause{}, fmt.Errorf("read the pause control: at: %w", err)
	}
	return p, nil
}

// Paused returns the pause control as it stands.
func (m *Machine) Paused(ctx context.Context) (Pause, error) {
	var p Pause
	err := m.st.Read(ctx, func(q *store.Reader) error {
		var err error
		p, err = readPause(ctx, q)
		return err
	})
	return p, err
}

// SetPause pauses (on) or resumes (off) remediation, audited with its reason.
func (m *Machine) SetPause(ctx context.Context, on bool, reason string) error {
	if on && reason == "" {
		return errors.New("pause: a reason is required (--reason)")
	}
	return m.inTx(ctx, func(tx *store.Tx) error {
		cur, err := readPause(ctx, tx)
		if err != nil {
			return err
		}
		if cur.Paused == on {
			if on {
				return fmt.Errorf("already paused by %s at %s: %s", cur.Actor, cur.At.Format(time.RFC3339), cur.Reason)
			}
			return errors.New("not paused")
		}
		now := m.now().UTC()
		active := 0
		kind := audit.KindControlResumed
		if on {
			active, kind = 1, audit.KindControlPaused
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO controls (name, active, reason, actor, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET active = excluded.active, reason = excluded.reason, actor = excluded.actor, at = excluded.at`,
			pauseControl, active, reason, m.actor, store.FormatTime(now)); err != nil {
			return fmt.Errorf("set the pause control: %w", err)
		}
		if _, err := m.log.Append(ctx, tx, audit.Event{Actor: m.actor, Kind: kind, Subject: pauseControl, Data: map[string]any{"reason": reason}}); err != nil {
			return fmt.Errorf("audit %s: %w", kind, err)
		}
		return nil
	})
}

// stop records, audited, why a run stopped before its end. It writes only the audit log,
// which serializes its appends itself: a partition of its own spares it the wait for the
// whole store (a spent budget stops each of a sweep's fix jobs).
func (m *Machine) stop(ctx context.Context, reason string, skipped int) error {
	return m.st.InTxOn(ctx, "apply/stop", func(tx *store.Tx) error {
		_, err := m.log.Append(ctx, tx, audit.Event{Actor: m.actor, Kind: audit.KindControlStopped, Subject: "apply",
			Data: map[string]any{"reason": reason, "skipped": skipped}})
		return err
	})
}
