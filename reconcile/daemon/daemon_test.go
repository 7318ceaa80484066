package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// harness is one daemon over remediatetest's simulated account.
type harness struct {
	t *testing.T
	e *remediatetest.Env
	r *reconcile.Reconciler
	d *daemon.Daemon

	mu      sync.Mutex
	applied []remediate.Item
	jobs    map[string]int // kind/outcome → count
	// plans counts the scopes planned, evaluated the resources evaluated (by scope).
	plans     int
	evaluated map[string]int
	replayed  map[string]int // scopes found unchanged by their replay, by scope

	stop     func() error
	verifier note.Verifier
}

func start(t *testing.T, dsn string, groups int, opts daemon.Options) *harness {
	t.Helper()
	return startWorld(t, dsn, remediatetest.World(groups), opts)
}

// startWorld is start on a world of remediatetest's shape (its faults in place from the
// first call).
func startWorld(t *testing.T, dsn string, w *cloudsim.World, opts daemon.Options) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{t: t, jobs: map[string]int{}, evaluated: map[string]int{}, replayed: map[string]int{}}
	// A role anyone may assume: a critical fix, which waits for two approvers.
	w.AWS.Accounts[0].Roles = []*cloudsim.Role{{Name: "deploy", Created: remediatetest.T0,
		AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}]}`}}
	h.e = remediatetest.Start(t, dsn, w,
		gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}, Approvers: []string{"bob", "carol"}, UncheckedNames: true}, remediatetest.Options{})
	h.r = reconcile.New(reconcile.Options{Store: h.e.Store, Log: h.e.Log, Engine: h.e.Engine})
	opts.Store, opts.Log, opts.Reconciler = h.e.Store, h.e.Log, h.r
	opts.Machine = h.e.Machine("warden", remediate.Limits{})
	if opts.Now == nil {
		opts.Now = h.e.Now // the gate's clock, which a test may move on
	}
	opts.Plan = reconcile.PlanOptions{Registry: h.e.Registry, Gates: h.e.Gates}
	if opts.Targets == nil {
		opts.Targets = []daemon.Target{{Name: "aws", Collector: h.e.Reader, Reader: h.e.Reader, Schedule: river.PeriodicInterval(time.Hour)}}
	}
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	h.verifier = verifier
	signed := audit.New(h.e.Store, audit.Options{Signer: signer})
	opts.Checkpoint = func(ctx context.Context) error { _, err := signed.Checkpoint(ctx); return err }
	if os.Getenv("WARDEN_TEST_DAEMON_LOG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	stage := opts.Hooks.Stage // a test's own, heard too
	opts.Hooks = daemon.Hooks{
		Applied: func(it remediate.Item, _ time.Time) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.applied = append(h.applied, it)
		},
		JobDone: func(kind, outcome string) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.jobs[kind+"/"+outcome]++
		},
		Stage: func(name string, took time.Duration, err error) {
			if stage != nil {
				stage(name, took, err)
			}
			if name == "plan" {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.plans++
			}
		},
		Observed: func(_ string, out *reconcile.Outcome) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.evaluated[out.Scope] += out.Evaluated
			if out.Replayed {
				h.replayed[out.Scope]++
			}
		},
	}
	d, err := daemon.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.d = d
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx, 10*time.Second) }()
	var once sync.Once
	var runErr error
	h.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = fmt.Errorf("the daemon did not stop within 30s")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = h.stop() })
	return h
}

// idle waits until no collection, sweep or refresh is queued or running, and every
// remediation job left is held back (snoozed: a pause, a budget, an approved fix waiting).
func (h *harness) idle() {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		depth, err := h.d.Depth(context.Background())
		if err != nil {
			h.t.Fatal(err)
		}
		busy := false
		for _, c := range depth {
			if c.Kind != daemon.KindRemediate || c.State == "running" || c.State == "available" || c.State == "retryable" {
				busy = true
			}
		}
		if !busy && h.count(daemon.KindSweep+"/completed") > 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the queue is still busy after 60s: %+v, jobs %v", depth, h.snapshot())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// verified counts the remediation runs that verified a fix of target.
func (h *harness) verified(target string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, it := range h.applied {
		if it.Target == target && it.State == remediate.StateVerified {
			n++
		}
	}
	return n
}

func (h *harness) count(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.jobs[key]
}

func (h *harness) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.jobs {
		out[k] = v
	}
	return out
}

func (h *harness) states() map[remediate.State]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[remediate.State]int{}
	last := map[string]remediate.State{}
	for _, it := range h.applied {
		last[it.Action] = it.State
	}
	for _, s := range last {
		out[s]++
	}
	return out
}

// The daemon on its own: the start-up sweep enqueues one collection per scope, each
// scope is read once (the simulator's counters), judged, and its fixes applied by the
// same machine as warden apply — the SSH rules closed in the simulator, the high-risk
// rotation left waiting for approval. A second sweep finds the fixed findings resolved.
func TestDaemon_sweepCollectsEachScopeOnceAndConverges(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			const groups = 3
			h := start(t, dsn(t), groups, daemon.Options{Workers: 2, ApprovalPoll: time.Hour})
			h.idle()
			scopes, err := h.e.Reader.Scopes(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := h.count(daemon.KindCollect + "/completed"); got != len(scopes) {
				t.Errorf("%d collections completed, want one per scope (%d)", got, len(scopes))
			}
			calls := h.e.Sim.Calls()
			if n := calls["iam:GetAccountAuthorizationDetails"].Calls; n != 1 {
				t.Errorf("IAM read in bulk %d times, want once", n)
			}
			for i := range groups {
				arn := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/sg-00000000000000a%d", remediatetest.Account, i)
				if open, _ := h.e.SSHOpen(t, arn); open {
					t.Errorf("SSH still open on %s", arn)
				}
			}
			waitFor(t, "the role's fix waiting for approval", func() bool { return h.states()[remediate.StatePending] == 1 })
			// Two workers apply side by side: neither takes the other's action in flight
			// for an interrupted one (each Apply first recovers what a crash left).
			if n := h.count(daemon.KindRemediate + "/retried"); n != 0 {
				t.Errorf("%d remediation jobs failed and were retried: %v", n, h.snapshot())
			}
			st := h.states()
			if st[remediate.StateVerified] < groups || st[remediate.StatePending] != 1 || st[remediate.StateFailed] != 0 {
				t.Errorf("remediation states %v: want at least %d verified, the role's trust waiting for approval, none failed", st, groups)
			}

			// The next sweep reads the fixed groups again: their findings resolve.
			if _, err := h.d.Sweep(context.Background(), "aws", "test-second-sweep"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the second sweep", func() bool { return h.count(daemon.KindSweep+"/completed") >= 2 })
			h.idle()
			fs, err := h.r.Findings(context.Background(), "aws/"+remediatetest.Account+"/ec2/us-east-1")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				if f.Finding.Policy == "WARDEN-AWS-NET-001" {
					t.Errorf("finding %s still %s after the fix", f.Finding.Policy, f.Status)
				}
			}
			if err := h.stop(); err != nil {
				t.Fatalf("stop: %v", err)
			}
			// The leader signed a checkpoint when it started leading; the log verifies
			// against it.
			if n := h.count(daemon.KindCheckpoint + "/completed"); n < 1 {
				t.Errorf("%d checkpoints signed, want the leader's first", n)
			}
			if rep, err := h.e.Log.Verify(context.Background(), h.verifier); err != nil || rep.Checkpoints < 1 {
				t.Errorf("audit verify: %+v %v", rep, err)
			}
		})
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	waitWithin(t, time.Minute, what, ok)
}

// waitWithin is waitFor with a deadline of its own.
func waitWithin(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A dry-run daemon reads, judges and plans, and writes nothing to the cloud: the
// simulator counts no write call, the SSH rules stay open, and no approval is requested.
func TestDaemon_dryRunAsksAndWritesNothing(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := start(t, dsn(t), 2, daemon.Options{Workers: 2, DryRun: true, ApprovalPoll: time.Hour, DecisionPoll: 100 * time.Millisecond})
			h.idle()
			waitFor(t, "every planned fix judged", func() bool { return h.count(daemon.KindRemediate+"/completed") >= 4 })
			// It leads the queue, but nobody is told it applies what gets approved.
			if id, _, err := daemon.Leader(context.Background(), h.e.Store); err != nil || !strings.HasSuffix(id, ".dry-run") {
				t.Errorf("the dry-run replica's name in the queue: %q, %v", id, err)
			}
			if who := daemon.Applier(context.Background(), h.e.Store); who != "" {
				t.Errorf("Applier names %q, a dry-run replica that applies nothing", who)
			}
			if w := h.e.Sim.Writes(); len(w) != 0 {
				t.Errorf("a dry run wrote to the cloud: %v", w)
			}
			for i := range 2 {
				arn := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/sg-00000000000000a%d", remediatetest.Account, i)
				if open, _ := h.e.SSHOpen(t, arn); !open {
					t.Errorf("a dry run closed SSH on %s", arn)
				}
			}
			// It asks: the critical fix (the role anyone may assume) waits for its two
			// approvers, and approving it applies nothing while the dry run holds.
			reqs, err := h.e.Gate.List(context.Background(), gates.Filter{})
			if err != nil || len(reqs) != 1 || reqs[0].State != "pending" || reqs[0].Quorum != 2 {
				t.Fatalf("a dry run's approval requests: %+v %v; want the critical fix's, pending", reqs, err)
			}
			asked := h.count(daemon.KindRemediate + "/completed")
			for _, who := range []string{"bob", "carol"} {
				if _, err := h.e.Gate.Decide(context.Background(), reqs[0].ID, who, "cli", true, ""); err != nil {
					t.Fatal(err)
				}
			}
			// The decision wakes the one job of its action, which records it approved; the
			// next sweep, the world unchanged, enqueues no fix at all.
			waitFor(t, "the approved action recorded as approved", func() bool {
				a, err := h.e.Machine("warden", remediate.Limits{}).Action(context.Background(), reqs[0].ActionID)
				return err == nil && a != nil && a.State == remediate.StateApproved
			})
			if _, err := h.d.Sweep(context.Background(), "aws", "again"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the second sweep", func() bool { return h.count(daemon.KindSweep+"/completed") >= 2 })
			h.idle()
			if n := h.count(daemon.KindRemediate + "/completed"); n != asked+1 {
				t.Errorf("%d fix jobs ran, want the first sweep's %d and the approved one's: %v", n, asked, h.snapshot())
			}
			if w := h.e.Sim.Writes(); len(w) != 0 {
				t.Errorf("a dry run applied an approved fix: %v", w)
			}
			fs, err := h.r.Findings(context.Background(), "aws/"+remediatetest.Account+"/ec2/us-east-1")
			if err != nil || len(fs) == 0 {
				t.Errorf("a dry run judged nothing: %v %v", fs, err)
			}
		})
	}
}
