package remediate

import (
	"context"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
)

// intent records, before any cloud call, that the action's call is about to be made:
// the action moves to applying with its audit entry, so that a crash after it leaves an
// intent without an outcome for the next run to resolve (Recover).
func (m *Machine) intent(ctx context.Context, r *Record, from State, detail string, data map[string]any) error {
	return m.inTxOn(ctx, r.Target, func(tx *store.Tx) error {
		return m.transition(ctx, tx, r, from, StateApplying, audit.KindActionIntent, detail, data)
	})
}
