package daemon_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
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
			hold := newStageHold("refresh") // the event's refresh, read and judged
			h := start(t, dsn(t), 2, daemon.Options{Workers: 2, ApprovalPoll: time.Hour, UrgentYield: time.Minute,
				Hooks: daemon.Hooks{Stage: hold.hook}})
			defer hold.free()
			h.idle()
			srv := httptest.NewServer(h.d.EventsHandler(secret.New(token), daemon.EndpointHooks{}))
			t.Cleanup(srv.Close)
			hold.arm()
			if got := post(t, srv.URL, "Bearer "+token, event(t, "sg-00000000000000a1")); got != http.StatusAccepted {
				t.Fatalf("the event: %d, want 202", got)
			}
			hold.wait(t, h)
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
			hold.free()
			h.idle()
			if reads() == before {
				t.Fatal("the sweep never read the cloud after the event's refresh ended")
			}
		})
	}
}

// stageHold keeps a job running at a known point: once armed, the first run of its
// stage (Hooks.Stage) waits there until freed.
type stageHold struct {
	stage    string
	armed    atomic.Bool
	held     chan struct{}
	release  chan struct{}
	released sync.Once
}

func newStageHold(stage string) *stageHold {
	return &stageHold{stage: stage, held: make(chan struct{}), release: make(chan struct{})}
}

// hook is the daemon's Hooks.Stage.
func (s *stageHold) hook(stage string, _ time.Duration, _ error) {
	if stage == s.stage && s.armed.CompareAndSwap(true, false) {
		close(s.held)
		<-s.release
	}
}

func (s *stageHold) arm() { s.armed.Store(true) }

// wait waits until a job is held.
func (s *stageHold) wait(t *testing.T, h *harness) {
	t.Helper()
	select {
	case <-s.held:
	case <-time.After(60 * time.Second):
		t.Fatalf("no %s stage ran: jobs %v", s.stage, h.snapshot())
	}
}

// free lets the held job go on, and any later one: call it (defer) before the daemon
// stops, which waits for its jobs.
func (s *stageHold) free() { s.released.Do(func() { close(s.release) }) }
