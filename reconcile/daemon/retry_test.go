package daemon_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// A fix that fails because the cloud throttled it is not left to the next sweep (here
// an hour away): its target is read again a few seconds later, planned anew and fixed.
// (remediate's TestApply_transientFailures: a denied fix is not transient.)
func TestDaemon_throttledFixIsTriedAgainSoon(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			w := remediatetest.World(2)
			w.Faults = []cloudsim.Fault{
				{Service: "ec2", Action: "RevokeSecurityGroupIngress", Account: remediatetest.Account, ThrottleRate: 1},
			}
			h := startWorld(t, dsn(t), w, daemon.Options{Workers: 2, ApprovalPoll: time.Hour})
			failed := func() (transient int) {
				h.mu.Lock()
				defer h.mu.Unlock()
				for _, it := range h.applied {
					if it.State == remediate.StateFailed && it.Transient {
						transient++
					}
				}
				return transient
			}
			waitFor(t, "the throttled fixes failed", func() bool { return failed() >= 2 })
			started := time.Now()
			if err := h.e.Sim.SetFaults(nil, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "both groups fixed", func() bool { return closed(t, h) })
			took := time.Since(started)
			if sweeps := h.count(daemon.KindSweep + "/completed"); sweeps != 1 {
				t.Errorf("%d sweeps: the fixes were retried by a sweep, not by the refresh", sweeps)
			}
			t.Logf("fixed %v after the throttling ended (the retry waits 5 s)", took.Round(10*time.Millisecond))
			if _, err := h.e.Log.Verify(context.Background(), h.verifier); err != nil {
				t.Fatalf("audit log: %v", err)
			}
		})
	}
}

// closed reports whether SSH is closed on both of the world's groups, as the simulator
// has them.
func closed(t *testing.T, h *harness) bool {
	for i := range 2 {
		arn := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/sg-00000000000000a%d", remediatetest.Account, i)
		if open, _ := h.e.SSHOpen(t, arn); open {
			return false
		}
	}
	return true
}
