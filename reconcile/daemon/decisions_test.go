package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store/storetest"
)

// A look for decided approval requests reads what was decided since the previous look,
// by the time each decision was stamped with. A decision stamped by a clock far behind
// (another machine's) is still found: every few looks, one reads every pending action
// and request.
func TestDaemon_decisionStampedByAClockBehind(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			src := dsn(t)
			h := start(t, src, 2, daemon.Options{Workers: 2, DryRun: true, ApprovalPoll: time.Hour, DecisionPoll: 100 * time.Millisecond})
			h.idle()
			waitFor(t, "every planned fix judged", func() bool { return h.count(daemon.KindRemediate+"/completed") >= 4 })
			ctx := context.Background()
			reqs, err := h.e.Gate.List(ctx, gates.Filter{})
			if err != nil || len(reqs) != 1 || reqs[0].State != "pending" {
				t.Fatalf("approval requests: %+v %v; want the critical fix's, pending", reqs, err)
			}
			// Let a few looks pass, so that the next ones read only what changed.
			time.Sleep(500 * time.Millisecond)
			db, _ := storetest.RawDB(t, src)
			res, err := db.ExecContext(ctx, `UPDATE approval_requests SET state = 'denied', decided_at = '2000-01-01T00:00:00Z',
				reason = 'denied on a machine whose clock is behind' WHERE id = $1 AND state = 'pending'`, reqs[0].ID)
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("deny the request by hand: %d rows, %v", n, err)
			}
			denied := time.Now()
			waitWithin(t, 10*time.Second, "the denied action's job to record it", func() bool {
				a, err := h.e.Machine("warden", remediate.Limits{}).Action(ctx, reqs[0].ActionID)
				return err == nil && a != nil && a.State == remediate.StateDenied
			})
			t.Logf("found %v after the denial", time.Since(denied).Round(time.Millisecond))
		})
	}
}
