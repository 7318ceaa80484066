package remediate

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// verify observes the target of an action whose calls are made: the finding must be gone.
func (m *Machine) verify(ctx context.Context, r *Record, rem remediators.Remediator, accounts []string, wrote bool) (Item, error) {
	after, err := m.observe(ctx, r, rem, accounts)
	if err != nil {
		// The call may have worked: leave the intent without an outcome for the next run
		// to resolve by observing, rather than guess.
		it := item(r, "applied, but verification could not observe the target: "+err.Error()+"; the next apply resolves it")
		it.Wrote = wrote
		return it, nil
	}
	if !after.converged() {
		detail := "partial: the call succeeded but the finding is still there"
		if after.part != nil {
			detail = "partial: the call succeeded but the part is still there"
		}
		it, err := m.fail(ctx, r, StateApplying, detail, true)
		it.Wrote = wrote
		return it, err
	}
	err = m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		if _, err := m.log.Append(ctx, tx, audit.Event{Actor: m.actor, Kind: audit.KindActionApplied, Subject: r.ID,
			Data: map[string]any{"remediator": r.Remediator, "target": r.Target, "part": r.Part, "wrote": wrote}}); err != nil {
			return fmt.Errorf("action %s: audit %s: %w", r.ID, audit.KindActionApplied, err)
		}
		return m.transition(ctx, tx, r, StateApplying, StateVerified, audit.KindActionVerified, "applied and verified", map[string]any{"wrote": wrote})
	})
	it := item(r, "applied and verified")
	if !wrote {
		it.Outcome = "already converged: no write"
	}
	it.Wrote = wrote
	return it, err
}
