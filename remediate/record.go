package remediate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// transition moves an action from one state to another by compare-and-set, with its
// history event and its audit entry in the caller's transaction. It is the one writer of
// an action's state: every stage, recovery and rollback changes it through here.
func (m *Machine) transition(ctx context.Context, tx *store.Tx, r *Record, from, to State, kind, detail string, data map[string]any) error {
	now := m.now().UTC()
	res, err := tx.ExecContext(ctx, `UPDATE actions SET state = ?, detail = ?, updated_at = ? WHERE id = ? AND state = ? AND content_hash = ? AND generation = ?`,
		string(to), detail, store.FormatTime(now), r.ID, string(from), r.Hash, r.Generation)
	if err != nil {
		return fmt.Errorf("action %s: %s → %s: %w", r.ID, from, to, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("action %s: %s → %s: %w", r.ID, from, to, ErrStateChanged)
	}
	if err := m.event(ctx, tx, r.ID, to, detail, now); err != nil {
		return err
	}
	if kind != "" {
		if err := m.audit(ctx, tx, kind, r, detail, data); err != nil {
			return err
		}
	}
	r.State, r.Detail, r.UpdatedAt = to, detail, now
	return nil
}

// fail records an action's failure.
func (m *Machine) fail(ctx context.Context, r *Record, from State, detail string, attempted bool) (Item, error) {
	err := m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, from, StateFailed, audit.KindActionFailed, detail, map[string]any{"attempted": attempted})
	})
	return item(r, "failed: "+detail), err
}

// saveProgress records a completed step by compare-and-set on the applying action,
// with its history event and its audit entry.
func (m *Machine) saveProgress(ctx context.Context, tx *store.Tx, r *Record, p remediators.Progress) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("action %s: encode progress: %w", r.ID, err)
	}
	now := m.now().UTC()
	detail := "step " + p.Step + " done"
	if p.Hold != "" {
		detail = "held after step " + stepName(&p) + ": " + p.Hold
	}
	res, err := tx.ExecContext(ctx, `UPDATE actions SET progress = ?, detail = ?, updated_at = ? WHERE id = ? AND state = ? AND content_hash = ? AND generation = ?`,
		string(b), detail, store.FormatTime(now), r.ID, string(StateApplying), r.Hash, r.Generation)
	if err != nil {
		return fmt.Errorf("action %s: record step %s: %w", r.ID, p.Step, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("action %s: record step %s: %w", r.ID, p.Step, ErrStateChanged)
	}
	if err := m.event(ctx, tx, r.ID, StateApplying, detail, now); err != nil {
		return err
	}
	data := map[string]any{"step": p.Step, "done": p.Done}
	if !p.Due.IsZero() {
		data["due"] = store.FormatTime(p.Due)
	}
	if p.Hold != "" {
		data["hold"] = p.Hold
	}
	if len(p.Data) > 0 {
		data["data"] = p.Data
	}
	if err := m.audit(ctx, tx, audit.KindActionStep, r, detail, data); err != nil {
		return err
	}
	r.Progress, r.Detail, r.UpdatedAt = &p, detail, now
	return nil
}

// event appends one step of an action's history.
func (m *Machine) event(ctx context.Context, tx *store.Tx, id string, s State, detail string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO action_events (action_id, at, actor, state, detail) VALUES (?, ?, ?, ?, ?)`,
		id, store.FormatTime(at), m.actor, string(s), detail); err != nil {
		return fmt.Errorf("action %s: record history: %w", id, err)
	}
	return nil
}

// audit appends an action's audit entry: what the action is, why, and the event's own
// data.
func (m *Machine) audit(ctx context.Context, tx *store.Tx, kind string, r *Record, detail string, data map[string]any) error {
	d := map[string]any{
		"remediator": r.Remediator, "target": r.Target, "part": r.Part, "risk": r.Risk.String(),
		"policy": r.Policy, "finding": r.Finding, "hash": r.Hash, "generation": r.Generation, "key": r.Key,
	}
	if detail != "" {
		d["detail"] = detail
	}
	for k, v := range data {
		d[k] = v
	}
	if _, err := m.log.Append(ctx, tx, audit.Event{Actor: m.actor, Kind: kind, Subject: r.ID, Data: d}); err != nil {
		return fmt.Errorf("action %s: audit %s: %w", r.ID, kind, err)
	}
	return nil
}

// insert records the first generation of an action, planned, with its first history
// event.
func (m *Machine) insert(ctx context.Context, tx *store.Tx, r *Record) error {
	data, err := json.Marshal(r.PlannedAction)
	if err != nil {
		return fmt.Errorf("encode action %s: %w", r.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO actions (id, content_hash, generation, plan_hash, remediator, target, part, account, risk, policy, finding, idem_key, state, detail, data, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Hash, r.Generation, r.PlanHash, r.Remediator, r.Target, r.Part, r.Account, r.Risk.String(), r.Policy, r.Finding, r.Key,
		string(r.State), "", string(data), store.FormatTime(r.CreatedAt), store.FormatTime(r.UpdatedAt)); err != nil {
		return fmt.Errorf("record action %s: %w", r.ID, err)
	}
	return m.event(ctx, tx, r.ID, StatePlanned, fmt.Sprintf("generation %d, plan %s", r.Generation, short(r.PlanHash)), r.CreatedAt)
}

// replace starts a new generation of a recorded action, planned again, by
// compare-and-set on the generation it replaces: its old progress and detail go.
func (m *Machine) replace(ctx context.Context, tx *store.Tx, cur, r *Record) error {
	data, err := json.Marshal(r.PlannedAction)
	if err != nil {
		return fmt.Errorf("encode action %s: %w", r.ID, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE actions SET content_hash = ?, generation = ?, plan_hash = ?, risk = ?, idem_key = ?, state = ?, detail = '', progress = '', data = ?, updated_at = ?
		WHERE id = ? AND generation = ?`,
		r.Hash, r.Generation, r.PlanHash, r.Risk.String(), r.Key, string(StatePlanned), string(data), store.FormatTime(r.UpdatedAt), cur.ID, cur.Generation)
	if err != nil {
		return fmt.Errorf("record action %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("record action %s: %w", r.ID, ErrStateChanged)
	}
	return m.event(ctx, tx, r.ID, StatePlanned, fmt.Sprintf("generation %d, plan %s", r.Generation, short(r.PlanHash)), r.UpdatedAt)
}

// setPlan moves an action under way to a newer plan of the same fix.
func (m *Machine) setPlan(ctx context.Context, tx *store.Tx, r *Record, hash string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE actions SET plan_hash = ? WHERE id = ? AND generation = ?`, hash, r.ID, r.Generation); err != nil {
		return fmt.Errorf("record action %s: %w", r.ID, err)
	}
	r.PlanHash = hash
	return nil
}
