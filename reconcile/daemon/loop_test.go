package daemon_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// running is a Loop running until the test stops it.
type running struct {
	loop *daemon.Loop
	stop context.CancelFunc
	done chan error
}

func startLoop(t *testing.T, opts daemon.LoopOptions) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{loop: daemon.NewLoop(opts), stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- r.loop.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func actionState(t *testing.T, m *remediate.Machine, id string) remediate.State {
	t.Helper()
	r, err := m.Action(context.Background(), id)
	if err != nil || r == nil {
		t.Fatalf("action %s: %v", id, err)
	}
	return r.State
}

// An approval that completes a request's quorum is applied by the worker within
// seconds of a wake: the rule is gone from the simulated cloud, read through the SDK.
func TestLoop_appliesAnActionOnceItsRequestIsApproved(t *testing.T) {
	ctx := context.Background()
	e := remediatetest.Start(t, filepath.Join(t.TempDir(), "w.db"), remediatetest.World(1), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}, remediatetest.Options{})
	p := remediatetest.Only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
	alice := e.Machine("alice", remediate.Limits{})
	res, err := alice.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	it := remediatetest.ItemOf(t, res, p.Actions[0].ID)
	if it.State != remediate.StatePending {
		t.Fatalf("action %+v, want pending", it)
	}
	r := startLoop(t, daemon.LoopOptions{Machine: e.Machine("warden", remediate.Limits{}), Interval: time.Hour})
	if open, _ := e.SSHOpen(t, p.Actions[0].Target); !open {
		t.Fatal("applied before its approval")
	}
	if _, err := e.Gate.Decide(ctx, it.Request, "bob", "cli", true, "ok"); err != nil {
		t.Fatal(err)
	}
	r.loop.Wake()
	waitFor(t, "the approved action to be verified", func() bool { return actionState(t, alice, p.Actions[0].ID) == remediate.StateVerified })
	if open, _ := e.SSHOpen(t, p.Actions[0].Target); open {
		t.Error("the rule is still open after the worker verified the fix")
	}
	e.VerifyAudit(t)
}

// A stop while an action is in flight drains: the action finishes and is recorded,
// none is left applying, and the actions not started stay approved for the next run.
func TestLoop_drainFinishesTheActionInFlight(t *testing.T) {
	ctx := context.Background()
	e := remediatetest.Start(t, storetest.Backends(t)["sqlite"](t), remediatetest.World(3), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}, remediatetest.Options{})
	p := remediatetest.Only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 3)
	alice := e.Machine("alice", remediate.Limits{})
	res, err := alice.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Actions {
		if _, err := e.Gate.Decide(ctx, remediatetest.ItemOf(t, res, a.ID).Request, "bob", "cli", true, ""); err != nil {
			t.Fatal(err)
		}
	}
	e.Sim.SetLatency(150 * time.Millisecond)
	e.Sim.ResetCalls()
	r := startLoop(t, daemon.LoopOptions{Machine: e.Machine("warden", remediate.Limits{}), Interval: time.Hour})
	waitFor(t, "the first revoke call", func() bool { return e.Sim.CallsTo("ec2") > 0 && anyApplying(t, alice, p) })
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run after the stop: %v", err)
		}
		r.done <- nil // for the cleanup
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after the stop")
	}
	verified, approved := 0, 0
	for _, a := range p.Actions {
		switch s := actionState(t, alice, a.ID); s {
		case remediate.StateVerified:
			verified++
		case remediate.StateApproved:
			approved++
		default:
			t.Errorf("action %s is %s after the drain", a.ID, s)
		}
	}
	if verified < 1 || verified+approved != len(p.Actions) || approved < 1 {
		t.Errorf("after the drain: %d verified, %d still approved; want the one in flight finished and the rest left", verified, approved)
	}
}

func anyApplying(t *testing.T, m *remediate.Machine, p *remediate.Plan) bool {
	for _, a := range p.Actions {
		if actionState(t, m, a.ID) == remediate.StateApplying {
			return true
		}
	}
	return false
}

// Without a daemon the loop runs the tasks itself: at once, and a run that asks for
// Later runs again after the wait it asked for, not at its next interval.
func TestLoop_runsTheTasksWithoutADaemon(t *testing.T) {
	var runs atomic.Int32
	task := daemon.Task{Name: "reports", Every: time.Hour, Run: func(context.Context, time.Time) error {
		if runs.Add(1) == 1 {
			return daemon.Later(50*time.Millisecond, "nothing read yet")
		}
		return nil
	}}
	r := startLoop(t, daemon.LoopOptions{DryRun: true, Interval: time.Hour, Tasks: []daemon.Task{task}})
	waitFor(t, "the task's second run", func() bool { return runs.Load() >= 2 })
	r.stop()
	if err := <-r.done; err != nil {
		t.Fatalf("Run after the stop: %v", err)
	}
	r.done <- nil // for the cleanup
	if n := runs.Load(); n != 2 {
		t.Errorf("the task ran %d times within an hour's interval, want 2 (at once, then after its Later)", n)
	}
	if done, failed := r.loop.Passes(); done < 1 || failed != 0 {
		t.Errorf("passes %d, failed %d: want the dry run's passes, none failed", done, failed)
	}
}
