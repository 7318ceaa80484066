package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/store/storetest"
)

// TestDaemon_sweepYieldsWhileAnEventsWorkRuns holds an event's refresh running, after
// its read, and sweeps meanwhile: the sweep's collections send the cloud nothing until
// the refresh ends, and then read every scope. The yield is a minute here (UrgentYield),
// so that what is measured is the yield, not a race with its end.
func TestDaemon_sweepYieldsWhileAnEventsWorkRuns(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			var hold atomic.Bool
			held, release := make(chan struct{}), make(chan struct{})
			h := start(t, dsn(t), 2, daemon.Options{Workers: 2, ApprovalPoll: time.Hour, UrgentYield: time.Minute, Hooks: daemon.Hooks{
				Stage: func(stage string, _ time.Duration, _ error) {
					// The event's refresh, read and judged, keeps its job running.
					if stage == "refresh" && hold.CompareAndSwap(true, false) {
						close(held)
						<-release
					}
				}}})
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()
			h.idle()
			srv := httptest.NewServer(h.d.EventsHandler(secret.New(token), daemon.EndpointHooks{}))
			t.Cleanup(srv.Close)
			hold.Store(true)
			if got := post(t, srv.URL, "Bearer "+token, event(t, "sg-00000000000000a1")); got != http.StatusAccepted {
				t.Fatalf("the event: %d, want 202", got)
			}
			select {
			case <-held:
			case <-time.After(60 * time.Second):
				t.Fatalf("the event's refresh never ran: jobs %v", h.snapshot())
			}
			reads := func() int {
				c := h.e.Sim.Calls()
				return c["ec2:DescribeSecurityGroups"].Calls + c["iam:GetAccountAuthorizationDetails"].Calls
			}
			before := reads()
			if _, err := h.d.Sweep(context.Background(), "aws", "while-an-event"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the sweep's collections running", func() bool { return collecting(t, h) > 0 })
			time.Sleep(time.Second)
			if n := reads() - before; n != 0 {
				t.Fatalf("the sweep's collections read the cloud %d times while the event's refresh ran", n)
			}
			close(release)
			released = true
			h.idle()
			if reads() == before {
				t.Fatal("the sweep never read the cloud after the event's refresh ended")
			}
		})
	}
}
