package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/internal/urgency"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/store/storetest"
)

// TestObserve_waitsForUrgentWorkBeforeTheWriter observes a scope under a sweep's context
// while urgent work runs: nothing may be recorded (on SQLite, an event's transaction
// would wait for the read's) until the urgent work ends, and then all of it is. The read
// is short, so that the wait is the one before the writer, not one of those between
// resources.
func TestObserve_waitsForUrgentWorkBeforeTheWriter(t *testing.T) {
	e := newEnv(t, storetest.Backends(t)["sqlite"](t), reconcile.Options{})
	ob := e.read(iamScope)
	ob.Resources = ob.Resources[:min(len(ob.Resources), 20)]
	g := urgency.NewGate(time.Minute) // longer than the test: the wait ends with the work
	leave := g.Enter()
	done := make(chan *reconcile.Outcome, 1)
	go func() {
		out, err := e.r.Observe(urgency.WithGate(context.Background(), g), ob)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	select {
	case <-done:
		t.Fatal("the read was recorded while urgent work ran")
	case <-time.After(500 * time.Millisecond):
	}
	if n := e.audited(audit.KindFindingOpened); n != 0 {
		t.Fatalf("%d findings opened while urgent work ran, want none yet", n)
	}
	leave()
	select {
	case out := <-done:
		if out == nil || len(out.Opened) == 0 || e.audited(audit.KindFindingOpened) != len(out.Opened) {
			t.Fatalf("after the urgent work: %+v, want the read's findings opened and audited", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the read still waits after the urgent work ended")
	}
}
