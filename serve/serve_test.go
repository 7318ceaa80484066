package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/serve"
	"github.com/warden-sec/warden/store/storetest"
)

// running is a Server serving on a loopback port until the test stops it.
type running struct {
	srv  *serve.Server
	base string
	stop context.CancelFunc
	done chan error
}

func startServer(t *testing.T, opts serve.Options) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{srv: serve.New(opts), base: "http://" + ln.Addr().String(), stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- r.srv.Run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func state(t *testing.T, m *remediate.Machine, id string) remediate.State {
	t.Helper()
	r, err := m.Action(context.Background(), id)
	if err != nil || r == nil {
		t.Fatalf("action %s: %v", id, err)
	}
	return r.State
}

// An approval that completes a request's quorum is applied by the worker within
// seconds: the rule is gone from the simulated cloud, read through the SDK.
func TestServe_appliesAnActionOnceItsRequestIsApproved(t *testing.T) {
	ctx := context.Background()
	e := remediatetest.Start(t, filepath.Join(t.TempDir(), "w.db"), remediatetest.World(1), gates.Config{Approvers: []string{"bob"}}, remediatetest.Options{})
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
	r := startServer(t, serve.Options{Machine: e.Machine("warden", remediate.Limits{}), Interval: time.Hour,
		Ready: func(ctx context.Context) error { _, err := e.Store.Scans(ctx, 1); return err }})
	if code, body := get(t, r.base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, r.base+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d %q", code, body)
	}
	if open, _ := e.SSHOpen(t, p.Actions[0].Target); !open {
		t.Fatal("applied before its approval")
	}
	if _, err := e.Gate.Decide(ctx, it.Request, "bob", "cli", true, "ok"); err != nil {
		t.Fatal(err)
	}
	r.srv.Wake()
	waitFor(t, "the approved action to be verified", func() bool { return state(t, alice, p.Actions[0].ID) == remediate.StateVerified })
	if open, _ := e.SSHOpen(t, p.Actions[0].Target); open {
		t.Error("the rule is still open after the worker verified the fix")
	}
	e.VerifyAudit(t)
}

// A stop while an action is in flight drains: the action finishes and is recorded,
// none is left applying, and the actions not started stay approved for the next run.
func TestServe_drainFinishesTheActionInFlight(t *testing.T) {
	ctx := context.Background()
	e := remediatetest.Start(t, storetest.Backends(t)["sqlite"](t), remediatetest.World(3), gates.Config{Approvers: []string{"bob"}}, remediatetest.Options{})
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
	r := startServer(t, serve.Options{Machine: e.Machine("warden", remediate.Limits{}), Interval: time.Hour})
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
		switch s := state(t, alice, a.ID); s {
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
		if state(t, m, a.ID) == remediate.StateApplying {
			return true
		}
	}
	return false
}
