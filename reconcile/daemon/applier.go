package daemon

import (
	"context"
	"strings"
	"time"

	"github.com/warden-sec/warden/store"
)

// Applier names the warden serve replica that applies what is approved on st's
// database within seconds — the queue's leader while its term runs: a serve with live
// targets runs the queue, and each of its passes applies what reached its quorum — or
// "" when no serve runs there (or it cannot be told: the decision is recorded anyway,
// and the next warden apply --confirm runs it).
func Applier(ctx context.Context, st *store.Store) string {
	id, until, err := Leader(ctx, st)
	if err != nil || id == "" || !until.After(time.Now()) || strings.HasSuffix(id, dryRunMarker) {
		// A dry-run serve leads the queue but applies nothing.
		return ""
	}
	return id
}
