package remediate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// State is where an action stands.
type State string

// The states of an action. An action moves planned → (pending approval → approved |
// denied) → applying → verified | failed; a multi-step fix goes applying → in progress
// → applying … between its steps; an applied one may be rolled back; a drifted target
// or a changed plan voids it.
const (
	StatePlanned    State = "planned"
	StatePending    State = "pending_approval"
	StateApproved   State = "approved"
	StateDenied     State = "denied"
	StateRefused    State = "refused"
	StateApplying   State = "applying"
	StateVerified   State = "verified"
	StateFailed     State = "failed"
	StateVoided     State = "voided"
	StateRolledBack State = "rolled_back"
	// StateInProgress is a multi-step fix between two steps: it waits for its next
	// step's due time (a grace period), or for a person when a step holds it.
	StateInProgress State = "in_progress"
)

// terminal states end an action's current generation: planning the same fix again starts
// a new one, which needs its own approvals.
func (s State) terminal() bool {
	switch s {
	case StateVerified, StateFailed, StateVoided, StateRolledBack, StateDenied, StateRefused:
		return true
	}
	return false
}

// Record is an action as the store keeps it.
type Record struct {
	PlannedAction
	Generation int       `json:"generation"`
	PlanHash   string    `json:"plan_hash"`
	State      State     `json:"state"`
	Detail     string    `json:"detail,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	History    []Event   `json:"history,omitempty"`
	// Progress is a multi-step fix's progress (remediators.Stepper); nil for the others.
	Progress *remediators.Progress `json:"progress,omitempty"`
}

// Binding is what approvals of this generation of the action bind to: its content hash
// and generation, so that an approval is spent once the action ran.
func (r *Record) Binding() string { return fmt.Sprintf("%s:%d", r.Hash, r.Generation) }

// Event is one step of an action's history.
type Event struct {
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	State  State     `json:"state"`
	Detail string    `json:"detail,omitempty"`
}

// ErrStateChanged is returned when a compare-and-set finds the action no longer in the
// state it was read in: another process moved it first.
var ErrStateChanged = errors.New("the action changed state meanwhile")

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const recordColumns = `id, content_hash, generation, plan_hash, state, detail, data, created_at, updated_at, progress`

func scanRecord(row interface{ Scan(...any) error }) (*Record, error) {
	var r Record
	var id, hash, state, data, created, updated, progress string
	if err := row.Scan(&id, &hash, &r.Generation, &r.PlanHash, &state, &r.Detail, &data, &created, &updated, &progress); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(data), &r.PlannedAction); err != nil {
		return nil, fmt.Errorf("action %s: stored data: %w", id, err)
	}
	if progress != "" {
		r.Progress = &remediators.Progress{}
		if err := json.Unmarshal([]byte(progress), r.Progress); err != nil {
			return nil, fmt.Errorf("action %s: stored progress: %w", id, err)
		}
	}
	r.State = State(state)
	var err error
	if r.CreatedAt, err = store.ParseTime(created); err != nil {
		return nil, fmt.Errorf("action %s: created_at: %w", id, err)
	}
	if r.UpdatedAt, err = store.ParseTime(updated); err != nil {
		return nil, fmt.Errorf("action %s: updated_at: %w", id, err)
	}
	if r.ID != id || r.Hash != hash {
		return nil, fmt.Errorf("action %s: stored data does not match its row", id)
	}
	return &r, nil
}

func getRecord(ctx context.Context, q queryer, id string) (*Record, error) {
	r, err := scanRecord(q.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM actions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read action %s: %w", id, err)
	}
	return r, nil
}

// transition moves an action from one state to another by compare-and-set, with its
// history event and its audit entry in the caller's transaction.
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

func (m *Machine) event(ctx context.Context, tx *store.Tx, id string, s State, detail string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO action_events (action_id, at, actor, state, detail) VALUES (?, ?, ?, ?, ?)`,
		id, store.FormatTime(at), m.actor, string(s), detail); err != nil {
		return fmt.Errorf("action %s: record history: %w", id, err)
	}
	return nil
}

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

// register records the plan and its actions, idempotently: an action already recorded
// with the same content keeps its state; one whose content changed, or whose last
// generation ended, starts a new generation (voiding the old approvals and a pending or
// approved old generation). An action left applying is never replaced: its intent must
// be resolved first.
func (m *Machine) register(ctx context.Context, tx *store.Tx, p *Plan) ([]*Record, error) {
	now := m.now().UTC()
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO plans (hash, created_at, actor, snapshot, data) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING`,
		p.Hash, store.FormatTime(now), m.actor, p.Snapshot, string(data))
	if err != nil {
		return nil, fmt.Errorf("record plan: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		for _, v := range m.versions {
			v.Actor = m.actor
			if _, err := m.log.AppendChanged(ctx, tx, v); err != nil {
				return nil, fmt.Errorf("audit plan: %w", err)
			}
		}
		if _, err := m.log.Append(ctx, tx, audit.Event{Actor: m.actor, Kind: audit.KindPlanCreated, Subject: p.Hash,
			Data: map[string]any{"actions": len(p.Actions), "notices": len(p.Notices), "snapshot": p.Snapshot}}); err != nil {
			return nil, fmt.Errorf("audit plan: %w", err)
		}
	}
	out := make([]*Record, 0, len(p.Actions))
	for _, a := range p.Actions {
		cur, err := getRecord(ctx, tx, a.ID)
		if err != nil {
			return nil, err
		}
		switch {
		case cur == nil:
			r := &Record{PlannedAction: a, Generation: 1, PlanHash: p.Hash, State: StatePlanned, CreatedAt: now, UpdatedAt: now}
			if err := m.insert(ctx, tx, r); err != nil {
				return nil, err
			}
			out = append(out, r)
		case cur.Hash == a.Hash && (!cur.State.terminal() || cur.PlanHash == p.Hash):
			// The same fix, still under way, or already finished by this very plan.
			if cur.PlanHash != p.Hash && !cur.State.terminal() {
				if _, err := tx.ExecContext(ctx, `UPDATE actions SET plan_hash = ? WHERE id = ? AND generation = ?`, p.Hash, cur.ID, cur.Generation); err != nil {
					return nil, fmt.Errorf("record action %s: %w", cur.ID, err)
				}
				cur.PlanHash = p.Hash
			}
			out = append(out, cur)
		case cur.State == StateApplying:
			return nil, fmt.Errorf("action %s is still applying (an earlier run stopped mid-way): run apply to resolve it first", a.ID)
		case cur.State == StateInProgress:
			// A multi-step fix under way changes its target by design: a new plan of the
			// same finding sees another before-state, and must not restart it.
			out = append(out, cur)
		default:
			if cur.Hash != a.Hash && (cur.State == StatePending || cur.State == StateApproved || cur.State == StatePlanned) {
				if err := m.gate.Void(ctx, tx, cur.ID, "the action changed: a new plan replaced it"); err != nil {
					return nil, fmt.Errorf("action %s: void its approvals: %w", cur.ID, err)
				}
				if err := m.transition(ctx, tx, cur, cur.State, StateVoided, audit.KindActionVoided, "replaced by a changed plan", nil); err != nil {
					return nil, err
				}
			}
			r := &Record{PlannedAction: a, Generation: cur.Generation + 1, PlanHash: p.Hash, State: StatePlanned, CreatedAt: now, UpdatedAt: now}
			if err := m.replace(ctx, tx, cur, r); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

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

// Actions lists every recorded action with its history, newest change first.
func (m *Machine) Actions(ctx context.Context) ([]*Record, error) {
	var out []*Record
	err := m.st.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM actions ORDER BY updated_at DESC, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		byID := map[string]*Record{}
		for _, r := range out {
			byID[r.ID] = r
		}
		ev, err := q.QueryContext(ctx, `SELECT action_id, at, actor, state, detail FROM action_events ORDER BY id`)
		if err != nil {
			return err
		}
		defer ev.Close()
		for ev.Next() {
			var id, at, actor, state, detail string
			if err := ev.Scan(&id, &at, &actor, &state, &detail); err != nil {
				return err
			}
			t, err := store.ParseTime(at)
			if err != nil {
				return fmt.Errorf("action %s: history: %w", id, err)
			}
			if r := byID[id]; r != nil {
				r.History = append(r.History, Event{At: t, Actor: actor, State: State(state), Detail: detail})
			}
		}
		return ev.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	return out, nil
}

// Action returns one recorded action, or nil when there is none with this id.
func (m *Machine) Action(ctx context.Context, id string) (*Record, error) {
	var r *Record
	err := m.st.Read(ctx, func(q *store.Reader) error {
		var err error
		r, err = getRecord(ctx, q, id)
		return err
	})
	return r, err
}
