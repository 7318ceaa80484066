package gates

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/store"
)

// Current lists the requests as warden approvals list shows them: the pending ones (all:
// every request), after marking expired (and auditing) those past their expiry, so that
// no list shows as open what can no longer be approved, and after checking decisions
// (Check), so that none shows a forged decision as counted: a forgery is audited and
// removed by the first list, apply or replica that sees it. The pending list checks
// the decided requests that would still be pending without their decisions (not yet
// past their expiry), as a forged approval or deny would hide one of those.
func (g *Gate) Current(ctx context.Context, all bool) ([]Request, error) {
	f := Filter{States: []State{StatePending, StateApproved, StateDenied}}
	if all {
		f = Filter{}
	}
	var out []Request
	if err := g.st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := g.ExpireDue(ctx, tx); err != nil {
			return err
		}
		listed, err := list(ctx, tx, f)
		if err != nil {
			return err
		}
		now := g.now()
		out = listed[:0]
		for _, r := range listed {
			if !all && r.State != StatePending && !r.ExpiresAt.After(now) {
				continue
			}
			if r, _, err = g.Check(ctx, tx, r); err != nil {
				return err
			}
			if all || r.State == StatePending {
				out = append(out, r)
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list approval requests: %w", err)
	}
	return out, nil
}
