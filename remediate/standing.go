package remediate

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// Standing is where one action stands, without its content or history: what the daemon
// reads to tell whether a sweep must plan an action again, or enqueue its job.
type Standing struct {
	ID         string
	Hash       string // the content hash of its current generation
	Generation int
	State      State
	// Finding is the fingerprint of the finding it fixes.
	Finding string
	// Risk is the action's risk, which the gates' verdict depends on.
	Risk findings.Risk
}

// Binding is what approvals of this generation bind to, as Record.Binding.
func (s Standing) Binding() string { return fmt.Sprintf("%s:%d", s.Hash, s.Generation) }

// Terminal reports whether the generation ended: planning the same fix again starts a
// new one (with its own approvals).
func (s Standing) Terminal() bool { return s.State.terminal() }

// Standings lists the actions in one of states (an indexed read: no content, no
// history).
func (m *Machine) Standings(ctx context.Context, states ...State) ([]Standing, error) {
	if len(states) == 0 {
		return nil, nil
	}
	args := make([]any, len(states))
	for i, s := range states {
		args[i] = string(s)
	}
	var out []Standing
	err := m.st.Read(ctx, func(q *store.Reader) error {
		var err error
		out, err = store.QueryAll(ctx, q, scanStanding,
			`SELECT id, content_hash, generation, state, finding, risk FROM actions WHERE state IN (`+marks(len(states))+`) ORDER BY id`, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list the actions %v: %w", states, err)
	}
	return out, nil
}

// StandingOf returns where each of the actions ids stands; an id never recorded is
// absent.
func (m *Machine) StandingOf(ctx context.Context, ids []string) (map[string]Standing, error) {
	out := make(map[string]Standing, len(ids))
	err := m.st.Read(ctx, func(q *store.Reader) error {
		for len(ids) > 0 {
			n := min(len(ids), 500) // within every database's bound on parameters
			args := make([]any, n)
			for i, id := range ids[:n] {
				args[i] = id
			}
			ss, err := store.QueryAll(ctx, q, scanStanding,
				`SELECT id, content_hash, generation, state, finding, risk FROM actions WHERE id IN (`+marks(n)+`)`, args...)
			if err != nil {
				return err
			}
			for _, s := range ss {
				out[s.ID] = s
			}
			ids = ids[n:]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read where the actions stand: %w", err)
	}
	return out, nil
}

// PlanOf returns a plan of the one action id, as its current generation was last
// planned (the plan its record names, narrowed to it): what a job that applies it
// carries when no new plan was made, e.g. once its approval arrives.
func (m *Machine) PlanOf(ctx context.Context, id string) (*Plan, error) {
	var data string
	err := m.st.Read(ctx, func(q *store.Reader) error {
		r, err := getRecord(ctx, q, id)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("no action %s", id)
		}
		return q.QueryRowContext(ctx, `SELECT data FROM plans WHERE hash = ?`, r.PlanHash).Scan(&data)
	})
	if err != nil {
		return nil, fmt.Errorf("read the plan of action %s: %w", id, err)
	}
	var p Plan
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return nil, fmt.Errorf("read the plan of action %s: %w", id, err)
	}
	one := p.Only(func(a PlannedAction) bool { return a.ID == id })
	if len(one.Actions) != 1 {
		return nil, fmt.Errorf("read the plan of action %s: its plan %s does not hold it", id, short(p.Hash))
	}
	return one, nil
}

func scanStanding(rows *sql.Rows) (Standing, error) {
	var s Standing
	var state, risk string
	if err := rows.Scan(&s.ID, &s.Hash, &s.Generation, &state, &s.Finding, &risk); err != nil {
		return s, err
	}
	s.State = State(state)
	r, err := findings.ParseRisk(risk)
	if err != nil {
		return s, fmt.Errorf("action %s: %w", s.ID, err)
	}
	s.Risk = r
	return s, nil
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// FixesOf returns where the latest action on each finding stands, by the finding's
// fingerprint: what an export of the findings tells of each one's fix (planned, waiting
// for approval, approved, applied, …). One read of the actions' index columns; a finding
// fixed more than once has its latest action (by when it last changed).
func FixesOf(ctx context.Context, q store.Querier) (map[string]Standing, error) {
	type row struct {
		s  Standing
		at time.Time
	}
	rows, err := store.QueryAll(ctx, q, func(r *sql.Rows) (row, error) {
		var v row
		var state, updated string
		if err := r.Scan(&v.s.ID, &v.s.Hash, &v.s.Generation, &state, &v.s.Finding, &updated); err != nil {
			return v, err
		}
		v.s.State = State(state)
		t, err := store.ParseTime(updated)
		v.at = t
		return v, err
	}, `SELECT id, content_hash, generation, state, finding, updated_at FROM actions WHERE finding <> ''`)
	if err != nil {
		return nil, fmt.Errorf("read the findings' fixes: %w", err)
	}
	out := make(map[string]Standing, len(rows))
	latest := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		// Times are compared parsed: RFC 3339 text of varying precision does not sort.
		if t, ok := latest[r.s.Finding]; !ok || r.at.After(t) || (r.at.Equal(t) && r.s.ID > out[r.s.Finding].ID) {
			out[r.s.Finding], latest[r.s.Finding] = r.s, r.at
		}
	}
	return out, nil
}
