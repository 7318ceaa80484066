package remediate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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

// Actions lists every recorded action with its history, newest change first.
func (m *Machine) Actions(ctx context.Context) ([]*Record, error) {
	return m.actionsWhere(ctx, "")
}

// actionsByID lists the recorded actions of ids with their history, newest change
// first: what warden serve's every pass reads, so that it grows with the actions it
// takes up, not with those that wait or ended.
func (m *Machine) actionsByID(ctx context.Context, ids []string) ([]*Record, error) {
	var out []*Record
	for len(ids) > 0 {
		n := min(len(ids), 500) // within every database's bound on parameters
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rs, err := m.actionsWhere(ctx, `id IN (`+marks(n)+`)`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
		ids = ids[n:]
	}
	slices.SortFunc(out, func(a, b *Record) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// actionsWhere lists the actions matching the SQL condition where (all when "") with
// their history, newest change first.
func (m *Machine) actionsWhere(ctx context.Context, where string, args ...any) ([]*Record, error) {
	evWhere := ""
	if where != "" {
		where = " WHERE " + where
		evWhere = ` WHERE action_id IN (SELECT id FROM actions` + where + `)`
	}
	var out []*Record
	err := m.st.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM actions`+where+` ORDER BY updated_at DESC, id`, args...)
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
		ev, err := q.QueryContext(ctx, `SELECT action_id, at, actor, state, detail FROM action_events`+evWhere+` ORDER BY id`, args...)
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

// Verified lists the actions of the named remediators that stand applied and verified
// (not rolled back, not replaced by a newer generation under way), without their
// history, most recently verified first: what reconcile/watch compares access-denied
// events with.
func (m *Machine) Verified(ctx context.Context, remediators ...string) ([]*Record, error) {
	if len(remediators) == 0 {
		return nil, nil
	}
	args := []any{string(StateVerified)}
	marks := make([]string, len(remediators))
	for i, r := range remediators {
		marks[i] = "?"
		args = append(args, r)
	}
	var out []*Record
	err := m.st.Read(ctx, func(q *store.Reader) error {
		var err error
		out, err = store.QueryAll(ctx, q, func(rows *sql.Rows) (*Record, error) { return scanRecord(rows) },
			`SELECT `+recordColumns+` FROM actions WHERE state = ? AND remediator IN (`+strings.Join(marks, ", ")+`) ORDER BY updated_at DESC, id`, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list the verified actions of %s: %w", strings.Join(remediators, ", "), err)
	}
	return out, nil
}
