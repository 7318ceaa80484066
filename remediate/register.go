package remediate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
)

// expireAndRegister expires the approval requests past their time, then records the
// plan and its actions: what every run does before deciding. A plan of one target (each
// of warden serve's fix jobs) is recorded in its target's partition (TargetPartition),
// after the expiry, which may touch any action's request and so takes the whole store,
// and only when a request is overdue; a plan of several targets (warden apply) does both
// in one transaction of the whole store.
func (m *Machine) expireAndRegister(ctx context.Context, p *Plan) ([]*Record, error) {
	var recs []*Record
	register := func(tx *store.Tx) error {
		var err error
		recs, err = m.register(ctx, tx, p)
		return err
	}
	if target, ok := p.oneTarget(); ok {
		if err := m.expireDue(ctx); err != nil {
			return nil, err
		}
		err := m.inTxOn(ctx, target, register)
		return recs, err
	}
	err := m.inTx(ctx, func(tx *store.Tx) error {
		if _, err := m.gate.ExpireDue(ctx, tx); err != nil {
			return fmt.Errorf("expire approval requests: %w", err)
		}
		return register(tx)
	})
	return recs, err
}

// expireDue expires the approval requests past their time, in a transaction of the
// whole store, which it takes only when one is overdue: most runs find none, and need
// not wait for every other writer.
func (m *Machine) expireDue(ctx context.Context) error {
	due, err := m.gate.AnyDue(ctx)
	if err != nil {
		return fmt.Errorf("expire approval requests: %w", err)
	}
	if !due {
		return nil
	}
	return m.inTx(ctx, func(tx *store.Tx) error {
		_, err := m.gate.ExpireDue(ctx, tx) // its errors say "expire approval requests"
		return err
	})
}

// oneTarget is the one target of the plan's actions, if they have one (ok false for a
// plan of none or of several).
func (p *Plan) oneTarget() (target string, ok bool) {
	for i, a := range p.Actions {
		if i > 0 && a.Target != target {
			return "", false
		}
		target = a.Target
	}
	return target, len(p.Actions) > 0
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
	created, _ := res.RowsAffected()
	// What is not audited comes first: the audit log's lock, which every writer's appends
	// share, is held from a transaction's first entry to its commit, and the rows of new
	// actions need not be written under it. The entries keep their order: the plan's,
	// then those of the generations it ends, in the plan's order.
	out := make([]*Record, len(p.Actions))
	type generation struct {
		i   int     // the action's index in the plan
		cur *Record // its recorded generation, which this plan replaces
	}
	var ended []generation
	for i, a := range p.Actions {
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
			out[i] = r
		case cur.Hash == a.Hash && (!cur.State.terminal() || cur.PlanHash == p.Hash):
			// The same fix, still under way, or already finished by this very plan.
			if cur.PlanHash != p.Hash && !cur.State.terminal() {
				if err := m.setPlan(ctx, tx, cur, p.Hash); err != nil {
					return nil, err
				}
			}
			out[i] = cur
		case cur.State == StateApplying:
			return nil, fmt.Errorf("action %s is still applying (an earlier run stopped mid-way): run apply to resolve it first", a.ID)
		case cur.State == StateInProgress:
			// A multi-step fix under way changes its target by design: a new plan of the
			// same finding sees another before-state, and must not restart it.
			out[i] = cur
		default:
			ended = append(ended, generation{i, cur})
		}
	}
	if created == 1 {
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
	for _, e := range ended {
		i, a, cur := e.i, p.Actions[e.i], e.cur
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
		out[i] = r
	}
	return out, nil
}
