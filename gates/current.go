package gates

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/store"
)

// Current lists the requests as warden approvals list shows them: the pending ones (all:
// every request), after marking expired (and auditing) those past their expiry, so that
// no list shows as open what can no longer be approved.
func (g *Gate) Current(ctx context.Context, all bool) ([]Request, error) {
	if err := g.st.InTx(ctx, func(tx *store.Tx) error {
		_, err := g.ExpireDue(ctx, tx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("list approval requests: %w", err)
	}
	f := Filter{States: []State{StatePending}}
	if all {
		f = Filter{}
	}
	return g.List(ctx, f)
}
