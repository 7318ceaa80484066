package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// metered is one daemon over remediatetest's simulated account whose only hooks are
// MetricsHooks, as warden serve wires them, over a registry of its own.
type metered struct {
	t   *testing.T
	e   *remediatetest.Env
	d   *daemon.Daemon
	reg *prometheus.Registry
}

func startMetered(t *testing.T, dsn string, w *cloudsim.World, opts daemon.Options) *metered {
	t.Helper()
	ctx := context.Background()
	e := remediatetest.Start(t, dsn, w,
		gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}, Approvers: []string{"bob", "carol"}, UncheckedNames: true}, remediatetest.Options{})
	reg := prometheus.NewRegistry()
	opts.Hooks, _ = daemon.MetricsHooks(metrics.New(reg))
	opts.Store, opts.Log = e.Store, e.Log
	opts.Reconciler = reconcile.New(reconcile.Options{Store: e.Store, Log: e.Log, Engine: e.Engine})
	opts.Machine = e.Machine("warden", remediate.Limits{})
	opts.Plan = reconcile.PlanOptions{Registry: e.Registry, Gates: e.Gates}
	opts.Targets = []daemon.Target{{Name: "aws", Collector: e.Reader, Reader: e.Reader, Schedule: river.PeriodicInterval(time.Hour)}}
	d, err := daemon.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("stop the daemon: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the daemon did not stop within 30s")
		}
	})
	return &metered{t: t, e: e, d: d, reg: reg}
}

// value sums the samples of the metric name whose labels include match: what a query
// of name{match} summed over the other labels would say (a histogram's: its count).
func (h *metered) value(name string, match map[string]string) float64 {
	h.t.Helper()
	sum, _ := h.scrape(name, match)
	return sum
}

// exists reports whether a scrape has a series of name whose labels include match.
func (h *metered) exists(name string, match map[string]string) bool {
	h.t.Helper()
	_, n := h.scrape(name, match)
	return n > 0
}

func (h *metered) scrape(name string, match map[string]string) (sum float64, series int) {
	h.t.Helper()
	families, err := h.reg.Gather()
	if err != nil {
		h.t.Fatalf("scrape: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if !matches(s, match) {
				continue
			}
			series++
			switch {
			case s.GetCounter() != nil:
				sum += s.GetCounter().GetValue()
			case s.GetHistogram() != nil:
				sum += float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, series
}

func matches(s *dto.Metric, match map[string]string) bool {
	n := 0
	for _, l := range s.GetLabel() {
		if v, ok := match[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(match)
}

// idle waits until the sweeps asked for have completed and no job is left but
// remediations waiting (snoozed) for an approval; polling says they are polled so
// often that they may be caught running.
func (h *metered) idle(sweeps int, polling bool) {
	h.t.Helper()
	var depth []daemon.JobCount
	deadline := time.Now().Add(60 * time.Second)
	for {
		var err error
		if depth, err = h.d.Depth(context.Background()); err != nil {
			h.t.Fatal(err)
		}
		busy := h.value("warden_jobs_total", map[string]string{"kind": daemon.KindSweep, "outcome": "completed"}) < float64(sweeps)
		for _, c := range depth {
			if c.Kind != daemon.KindRemediate || (c.State != "scheduled" && !polling) {
				busy = true
			}
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("waited 60s for %d sweeps and their jobs: queue %+v", sweeps, depth)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A sweep of a world whose cloud throttles or denies calls shows on /metrics: one scope
// read per scope, by its outcome, and the cloud call counters agreeing with the counts
// each scope's read recorded in the store and with the simulator's own count of the
// faults it injected. A read the cloud refused is a failed read, not a failed step.
func TestMetricsHooks_sweepRecordsScopeReadsAndCloudCalls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		faults  []cloudsim.Fault
		service string // the faulted service
		metric  string // the counter its faults show in
		stat    func(cloudsim.CallStats) int
		outcome string // the faulted scope's read
	}{
		{
			name:    "iam throttled",
			faults:  []cloudsim.Fault{{Service: "iam", ThrottleRate: 0.5}},
			service: "iam", metric: "warden_cloud_throttled_total",
			stat: func(c cloudsim.CallStats) int { return c.Throttled },
		},
		{
			name:    "ec2 denied",
			faults:  []cloudsim.Fault{{Service: "ec2", Action: "Describe*", AccessDenied: true}},
			service: "ec2", metric: "warden_cloud_access_denied_total",
			stat:    func(c cloudsim.CallStats) int { return c.AccessDenied },
			outcome: "failed",
		},
	} {
		for backend, dsn := range storetest.Backends(t) {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				w := remediatetest.World(2)
				w.Faults = tc.faults
				// A dry run writes nothing, so that every call the simulator counts is a
				// read, and no fix makes a scope be read again.
				h := startMetered(t, dsn(t), w, daemon.Options{Workers: 2, DryRun: true, ApprovalPoll: time.Hour})
				h.idle(1, false)
				ctx := context.Background()
				var scopes []state.Scope
				err := h.e.Store.Read(ctx, func(q *store.Reader) error {
					var err error
					scopes, err = state.Scopes(ctx, q)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				listed, err := h.e.Reader.Scopes(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(scopes) == 0 || len(scopes) != len(listed) {
					t.Fatalf("%d scopes recorded, %d listed: want each read once", len(scopes), len(listed))
				}

				// What each provider and service's reads recorded in the store.
				type group struct{ calls, throttled, denied int }
				groups := map[[2]string]*group{}
				reads := map[[3]string]int{}
				for _, s := range scopes {
					k := [2]string{s.Scope.Provider, s.Scope.Service}
					if groups[k] == nil {
						groups[k] = &group{}
					}
					groups[k].calls += s.Scope.Calls
					groups[k].throttled += s.Scope.Throttled
					groups[k].denied += s.Scope.AccessDenied
					reads[[3]string{k[0], k[1], s.Scope.Status}]++
				}
				for k, g := range groups {
					labels := map[string]string{"provider": k[0], "service": k[1]}
					for _, c := range []struct {
						metric string
						want   int
					}{
						{"warden_cloud_calls_total", g.calls},
						{"warden_cloud_throttled_total", g.throttled},
						{"warden_cloud_access_denied_total", g.denied},
					} {
						// Each exists, at zero if need be, from the service's first read.
						if got := h.value(c.metric, labels); got != float64(c.want) || !h.exists(c.metric, labels) {
							t.Errorf("%s%v = %v (exists: %v), want %d (the scopes' recorded counts)", c.metric, labels, got, h.exists(c.metric, labels), c.want)
						}
					}
					if g.calls == 0 {
						t.Errorf("the %s scopes recorded no call", k)
					}
				}
				for k, n := range reads {
					labels := map[string]string{"provider": k[0], "service": k[1], "outcome": k[2]}
					if got := h.value("warden_scope_reads_total", labels); got != float64(n) {
						t.Errorf("warden_scope_reads_total%v = %v, want %d", labels, got, n)
					}
				}
				if got := h.value("warden_scope_reads_total", nil); got != float64(len(scopes)) {
					t.Errorf("warden_scope_reads_total = %v, want one per scope (%d)", got, len(scopes))
				}

				// The faults: every one the simulator injected into the service was
				// counted, and there were some.
				injected, calls := 0, 0
				for op, c := range h.e.Sim.Calls() {
					if strings.HasPrefix(op, tc.service+":") {
						injected += tc.stat(c)
						calls += c.Calls
					}
				}
				labels := map[string]string{"provider": "aws", "service": tc.service}
				if got := h.value(tc.metric, labels); injected == 0 || got != float64(injected) {
					t.Errorf("%s%v = %v; the simulator injected %d", tc.metric, labels, got, injected)
				}
				if got := h.value("warden_cloud_calls_total", labels); got != float64(calls) {
					t.Errorf("warden_cloud_calls_total%v = %v; the simulator served %d", labels, got, calls)
				}
				if tc.outcome != "" {
					if got := h.value("warden_scope_reads_total", map[string]string{"service": tc.service, "outcome": tc.outcome}); got < 1 {
						t.Errorf("no %s read of %s counted", tc.outcome, tc.service)
					}
				}

				// The steps: each scope read, judged and planned once, none failed (a read
				// the cloud refused is counted above, as a failed read).
				for _, st := range []string{"collect", "evaluate", "plan"} {
					if got := h.value("warden_reconcile_attempts_total", map[string]string{"stage": st}); got != float64(len(scopes)) {
						t.Errorf("warden_reconcile_attempts_total{stage=%q} = %v, want one per scope (%d)", st, got, len(scopes))
					}
					if got := h.value("warden_reconcile_duration_seconds", map[string]string{"stage": st}); got != float64(len(scopes)) {
						t.Errorf("warden_reconcile_duration_seconds{stage=%q} has %v observations, want %d", st, got, len(scopes))
					}
				}
				// A dry run's every remediation job asks once and completes: one step each.
				jobs := h.value("warden_jobs_total", map[string]string{"kind": daemon.KindRemediate, "outcome": "completed"})
				if got := h.value("warden_reconcile_attempts_total", map[string]string{"stage": "remediate"}); jobs == 0 || got != jobs {
					t.Errorf("warden_reconcile_attempts_total{stage=\"remediate\"} = %v, want one per remediation job (%v)", got, jobs)
				}
				if got := h.value("warden_reconcile_errors_total", nil); got != 0 {
					t.Errorf("warden_reconcile_errors_total = %v, want 0", got)
				}
				t.Logf("%s: %d scopes; %s %v of %v calls", tc.service, len(scopes), tc.metric, injected, calls)
			})
		}
	}
}

// An approval request's end is counted once, by the remediation job that waited on it:
// neither its job's later runs nor the next sweep's plan of the same fix count it again.
func TestMetricsHooks_approvalEndedCountedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		approve bool
		outcome string
	}{
		{"approved", true, "approved"},
		{"denied", false, "denied"},
	} {
		for backend, dsn := range storetest.Backends(t) {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				w := remediatetest.World(1)
				// A role anyone may assume: a critical fix, which waits for two approvers.
				w.AWS.Accounts[0].Roles = []*cloudsim.Role{{Name: "deploy", Created: remediatetest.T0,
					AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}]}`}}
				h := startMetered(t, dsn(t), w, daemon.Options{Workers: 2, ApprovalPoll: 100 * time.Millisecond})
				ctx := context.Background()
				var req gates.Request
				waitFor(t, "the critical fix's approval request", func() bool {
					reqs, err := h.e.Gate.List(ctx, gates.Filter{States: []gates.State{gates.StatePending}})
					if err != nil {
						t.Fatal(err)
					}
					if len(reqs) == 1 {
						req = reqs[0]
					}
					return len(reqs) == 1
				})
				// Polled every 100ms while it waits: no approval ended, no step counted.
				time.Sleep(500 * time.Millisecond)
				if got := h.value("warden_approvals_total", nil); got != 0 {
					t.Fatalf("warden_approvals_total = %v before any decision", got)
				}
				for _, who := range []string{"bob", "carol"} {
					if _, err := h.e.Gate.Decide(ctx, req.ID, who, "cli", tc.approve, "not now"); err != nil {
						t.Fatal(err)
					}
					if !tc.approve {
						break // one deny ends it
					}
				}
				want := map[string]string{"outcome": tc.outcome}
				waitFor(t, "the request's end counted", func() bool { return h.value("warden_approvals_total", want) == 1 })

				// The next sweep plans the fix again (denied: a new generation, which asks
				// anew) or finds it fixed: the ended request is not counted again.
				if _, err := h.d.Sweep(ctx, "aws", "test-again"); err != nil {
					t.Fatal(err)
				}
				h.idle(2, true)
				if !tc.approve {
					waitFor(t, "the fix planned again, asking anew", func() bool {
						reqs, err := h.e.Gate.List(ctx, gates.Filter{ActionID: req.ActionID, States: []gates.State{gates.StatePending}})
						return err == nil && len(reqs) == 1 && reqs[0].ID != req.ID
					})
				}
				time.Sleep(500 * time.Millisecond) // a few more polls of whatever waits
				if got := h.value("warden_approvals_total", want); got != 1 {
					t.Errorf("warden_approvals_total{outcome=%q} = %v after another sweep, want 1", tc.outcome, got)
				}
				if got := h.value("warden_approvals_total", nil); got != 1 {
					t.Errorf("warden_approvals_total = %v, want the one request's end", got)
				}
				if tc.approve {
					a, err := h.e.Machine("warden", remediate.Limits{}).Action(ctx, req.ActionID)
					if err != nil || a == nil || a.State != remediate.StateVerified {
						t.Errorf("the approved fix: %+v %v, want verified", a, err)
					}
				}
			})
		}
	}
}

// The hooks' mapping to the metrics, for what a simulator does not easily make: a fix
// whose write succeeded and which still failed is a partial remediation, and the
// daemon's stages land on the metrics' stage labels.
func TestMetricsHooks_partialRemediationAndStages(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, _ := daemon.MetricsHooks(metrics.New(reg))
	m := &metered{t: t, reg: reg}
	for _, tc := range []struct {
		name    string
		it      remediate.Item
		partial float64
	}{
		{"failed after its write", remediate.Item{State: remediate.StateFailed, Wrote: true}, 1},
		{"failed before any write", remediate.Item{State: remediate.StateFailed}, 0},
		{"verified", remediate.Item{State: remediate.StateVerified, Wrote: true}, 0},
		{"rolled back", remediate.Item{State: remediate.StateRolledBack}, 0},
		{"in progress", remediate.Item{State: remediate.StateInProgress, Wrote: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := m.value("warden_remediation_partial_total", nil)
			tc.it.Remediator = "aws.ec2.revoke_ingress"
			h.Applied(tc.it, time.Time{})
			if got := m.value("warden_remediation_partial_total", nil) - before; got != tc.partial {
				t.Errorf("warden_remediation_partial_total grew by %v, want %v", got, tc.partial)
			}
		})
	}

	for _, tc := range []struct {
		stage, label string
		err          error
		reason       string
	}{
		{"collect", "collect", nil, ""},
		{"refresh", "collect", errors.New("boom"), "internal"},
		{"observe", "evaluate", nil, ""},
		{"plan", "plan", nil, ""},
		{"apply", "remediate", context.DeadlineExceeded, "timeout"},
		{"event", "event", nil, ""},
		{"collect", "collect", fmt.Errorf("collect aws/x: %w", collectors.ErrUnknownScope), "invalid"},
	} {
		attempts := m.value("warden_reconcile_attempts_total", map[string]string{"stage": tc.label})
		h.Stage(tc.stage, time.Second, tc.err)
		if got := m.value("warden_reconcile_attempts_total", map[string]string{"stage": tc.label}) - attempts; got != 1 {
			t.Errorf("stage %s: warden_reconcile_attempts_total{stage=%q} grew by %v, want 1", tc.stage, tc.label, got)
		}
		if tc.reason != "" {
			if got := m.value("warden_reconcile_errors_total", map[string]string{"stage": tc.label, "reason": tc.reason}); got < 1 {
				t.Errorf("stage %s: no error counted under %s/%s", tc.stage, tc.label, tc.reason)
			}
		}
	}
	before := m.value("warden_reconcile_attempts_total", nil)
	h.Stage("list_scopes", time.Second, nil) // no stage of the metrics
	if got := m.value("warden_reconcile_attempts_total", nil); got != before {
		t.Errorf("a stage the metrics do not know was counted: %v → %v", before, got)
	}
}

// TestState_countsForgeriesOfEveryProcess: warden_forged_decisions_total is read from the
// audit log, so a forgery that warden apply (another process, with no metrics of its
// own) found and audited is counted by every replica's scrape.
func TestState_countsForgeriesOfEveryProcess(t *testing.T) {
	ctx := context.Background()
	e := remediatetest.Start(t, storetest.Backends(t)["sqlite"](t), remediatetest.World(1), gates.Config{}, remediatetest.Options{})
	for i := range 2 {
		if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
			_, err := e.Log.Append(ctx, tx, audit.Event{Actor: gates.SystemActor, Kind: audit.KindApprovalForged,
				Subject: fmt.Sprintf("apr-%012d", i), Data: map[string]any{"actor": "carol", "why": "no signature"}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := daemon.State(e.Store)(ctx)
	if err != nil || s.ForgedDecisions != 2 {
		t.Fatalf("state: %d forged decisions, %v; want 2", s.ForgedDecisions, err)
	}
}
