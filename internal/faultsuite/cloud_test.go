package faultsuite_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// The cloud faults of the fault-injection suite (docs/faults.md), on AWS (this file) and
// on GCP (gcp_test.go), one table of cases for both (cloudCases). Each case injects one
// fault into the simulator, then runs what warden runs: a read of every scope judged by
// the reconciler (the daemon's collection), and an apply of fixes planned from the
// scopes as last read well, whose approvals were given before the fault. The faults are
// cleared and warden runs again, as the next pass would. What is asserted comes from
// the simulator (its world and its counters), not from warden's own account of what it
// did:
//   - no write the plan did not have, and no write made twice;
//   - no half-applied action: each is verified (its fix is in the cloud), failed (the
//     cloud is as it was, and an attempted call has its intent recorded), or left
//     applying and resolved by the next run without a second write;
//   - a scope that could not be read is recorded as failed, and resolves and deletes
//     nothing;
//   - the audit log verifies, with one intent and one outcome per attempted fix.

// approvers is the gate of every case: nothing is automatic, bob or carol approves.
var approvers = gates.Config{Approvers: []string{"bob", "carol"}, Auto: []findings.Risk{}, UncheckedNames: true}

// fix is one of a cloud's fixes: its remediator and the one write it makes.
type fix struct{ remediator, service, action string }

// write names the fix's write as the simulator counts it ("ec2:RevokeSecurityGroupIngress").
func (f fix) write() string { return f.service + ":" + f.action }

// cloud is one provider under the suite: how to start warden on its simulated world, and
// what the cases need to know of that world and of its API.
type cloud struct {
	start func(t *testing.T) *rig
	// net closes SSH on one network rule (one action per rule, several in the world: the
	// write faults are armed on it); iam is one IAM fix of the same world.
	net, iam fix
	// netReads and iamReads match every read of the network rules and of IAM, which
	// make the scopes netScope and iamScope (their ids' tails); verifyRead is the read
	// that verifies a network fix.
	netReads, iamReads []cloudsim.Fault
	netScope, iamScope string
	verifyRead         cloudsim.Fault
	// limits are rate limits low enough to throttle the cases' reads and writes.
	limits map[string]float64
	// applyNet makes the network fix of a in w, as the cloud does when it serves the write.
	applyNet func(w *cloudsim.World, a remediate.PlannedAction)
	// open reports whether the drift the fix a makes is still in w.
	open func(w *cloudsim.World, a remediate.PlannedAction) bool
	// untouched checks that what lies beside the fixes is as the world began.
	untouched func(t *testing.T, w *cloudsim.World)
}

// fixes maps the cloud's remediators to their writes.
func (cl cloud) fixes() map[string]string {
	return map[string]string{cl.net.remediator: cl.net.write(), cl.iam.remediator: cl.iam.write()}
}

// rig is warden on one simulated cloud: the store with its audit log and gate, the
// cloud's collector (which reads scopes, and single resources for the machine), the
// registry of fixes calling the simulator, and the policy pack.
type rig struct {
	sim      *cloudsim.Sim
	store    *store.Store
	log      *audit.Log
	gate     *gates.Gate
	engine   *engine.Engine
	registry *remediators.Registry
	reader   interface {
		collectors.Collector
		collectors.Reader
	}
	accounts []string
	now      func() time.Time
}

// machine is a remediation machine acting as actor, observing through the rig's reader.
func (r *rig) machine(actor string) *remediate.Machine {
	return remediate.New(remediate.Options{Store: r.store, Log: r.log, Gate: r.gate, Gates: approvers, Registry: r.registry,
		Observer: remediate.Readers{r.reader}, Engine: r.engine, Actor: actor, Now: r.now})
}

// cloudCase is one injected fault, and what the faulted run must make of it.
type cloudCase struct {
	name    string
	faults  []cloudsim.Fault
	limits  map[string]float64
	latency time.Duration
	// arm injects a fault at an exact moment (cloudsim.OnNextCall); it returns the writes
	// it makes itself, behind warden's back, as the cloud would have, by write. The map
	// fills in when the fault fires.
	arm func(r *rig, plans []*remediate.Plan) map[string]int
	// failedScopes are the scopes (by their id's tail) the faulted read must record failed.
	failedScopes []string
	// want is what every fix of the remediator must end as in the faulted run; a
	// remediator not listed may end in any state the invariants allow.
	want map[string]remediate.State
	// transient is whether the failed fixes of want must be marked transient (the
	// daemon reads their targets again soon).
	transient bool
}

// cloudCases are the faults every cloud is put through.
func cloudCases(cl cloud) []cloudCase {
	both := func(net, iam remediate.State) map[string]remediate.State {
		return map[string]remediate.State{cl.net.remediator: net, cl.iam.remediator: iam}
	}
	every := func(faults []cloudsim.Fault, set func(*cloudsim.Fault)) []cloudsim.Fault {
		out := slices.Clone(faults)
		for i := range out {
			set(&out[i])
		}
		return out
	}
	verified, failed := remediate.StateVerified, remediate.StateFailed
	return []cloudCase{
		{name: "latency on every call", latency: 30 * time.Millisecond, want: both(verified, verified)},
		{name: "rate limits throttle reads and writes", limits: cl.limits},
		{name: "throttled writes, half the time", faults: []cloudsim.Fault{{Writes: true, ThrottleRate: 0.5}}},
		{name: "5xx on the network rule reads", faults: every(cl.netReads, func(f *cloudsim.Fault) { f.ErrorRate = 1 }),
			failedScopes: []string{cl.netScope}, transient: true, want: both(failed, verified)},
		{name: "IAM reads denied", faults: every(cl.iamReads, func(f *cloudsim.Fault) { f.AccessDenied = true }),
			failedScopes: []string{cl.iamScope}, want: both(verified, failed)},
		{name: "5xx on every write", faults: []cloudsim.Fault{{Writes: true, ErrorRate: 1}}, transient: true, want: both(failed, failed)},
		{name: "every write denied", faults: []cloudsim.Fault{{Writes: true, AccessDenied: true}}, want: both(failed, failed)},
		{name: "a write applied but answered 5xx", transient: true, arm: appliedBut5xx(cl)},
		{name: "a fault between a write and its verification", arm: faultAfterWrite(cl)},
	}
}

// appliedBut5xx: the first network fix's write reaches the cloud, which applies it and
// answers a server error (as AWS and Google may); so does every such write after it.
func appliedBut5xx(cl cloud) func(*rig, []*remediate.Plan) map[string]int {
	return func(r *rig, plans []*remediate.Plan) map[string]int {
		behind := map[string]int{}
		first := firstOf(plans, cl.net.remediator) // a plan's actions run in its order
		r.sim.OnNextCall(cl.net.write(), func() {
			r.sim.Do(func(w *cloudsim.World) { cl.applyNet(w, first) })
			behind[cl.net.write()]++
			_ = r.sim.SetFaults([]cloudsim.Fault{{Service: cl.net.service, Action: cl.net.action, ErrorRate: 1}}, nil)
		})
		return behind
	}
}

// faultAfterWrite: once the first network fix is written, the network rules cannot be
// read: its verification fails, and so does the next fix's drift re-check.
func faultAfterWrite(cl cloud) func(*rig, []*remediate.Plan) map[string]int {
	return func(r *rig, _ []*remediate.Plan) map[string]int {
		read := cl.verifyRead
		read.ErrorRate = 1
		r.sim.OnNextCall(cl.net.write(), func() { _ = r.sim.SetFaults([]cloudsim.Fault{read}, nil) })
		return nil
	}
}

// firstOf is the first action of remediator in plans.
func firstOf(plans []*remediate.Plan, remediator string) remediate.PlannedAction {
	for _, p := range plans {
		for _, a := range p.Actions {
			if a.Remediator == remediator {
				return a
			}
		}
	}
	panic("no " + remediator + " planned")
}

func runCloudCase(t *testing.T, cl cloud, c cloudCase) {
	ctx := context.Background()
	r := cl.start(t)
	rec := reconcile.New(reconcile.Options{Store: r.store, Log: r.log, Engine: r.engine, Now: r.now})
	alice := r.machine("alice")

	// The fixes are planned from a good read and approved before the fault: the faulted
	// run applies them.
	plans := approved(t, r, rec, alice, cl)
	for _, f := range []fix{cl.net, cl.iam} {
		if !slices.ContainsFunc(plans, func(p *remediate.Plan) bool {
			return slices.ContainsFunc(p.Actions, func(a remediate.PlannedAction) bool { return a.Remediator == f.remediator })
		}) {
			t.Fatalf("the world's drift planned no %s", f.remediator)
		}
	}
	r.sim.ResetCalls()
	if err := r.sim.SetFaults(c.faults, c.limits); err != nil {
		t.Fatal(err)
	}
	r.sim.SetLatency(c.latency)
	var behind map[string]int
	if c.arm != nil {
		behind = c.arm(r, plans)
	}

	// The faulted read: failed scopes are recorded so, and resolve and delete nothing.
	for id, out := range observe(t, r, rec) {
		for _, tail := range c.failedScopes {
			if strings.HasSuffix(id, "/"+tail) && out.Status != snapshot.ScopeFailed {
				t.Errorf("scope %s read under the fault is %q, want failed", id, out.Status)
			}
		}
		if out.Status != snapshot.ScopeOK && (len(out.Resolved) > 0 || out.Deleted > 0) {
			var resolved []string
			for _, f := range out.Resolved {
				resolved = append(resolved, f.Finding.Policy+" on "+f.Finding.Resource)
			}
			t.Errorf("scope %s read %s: findings resolved %v, %d resources deleted; want none", id, out.Status, resolved, out.Deleted)
		}
	}

	// The faulted apply.
	states := map[string]remediate.State{}
	for _, p := range plans {
		res, err := alice.Apply(ctx, p, true)
		if err != nil {
			t.Fatalf("apply under the fault: %v", err)
		}
		for _, it := range res.Items {
			states[it.Action] = it.State
			w, ok := c.want[it.Remediator]
			if ok && it.State != w {
				t.Errorf("%s %s: %s (%s), want %s", it.Remediator, it.Part, it.State, it.Outcome, w)
			}
			if ok && it.State == remediate.StateFailed && c.transient != it.Transient {
				t.Errorf("%s %s failed (%s), transient %v: want %v", it.Remediator, it.Part, it.Outcome, it.Transient, c.transient)
			}
		}
	}
	checkActions(t, r, cl, alice, plans, "under the fault", false)

	// The fault is gone: the next run resolves what was left applying, and a fresh plan
	// (approved anew) takes up what failed. The cloud converges, each fix written once.
	r.sim.SetLatency(0)
	if err := r.sim.SetFaults(nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if _, err := alice.Apply(ctx, p, true); err != nil {
			t.Fatalf("apply after the fault: %v", err)
		}
	}
	checkActions(t, r, cl, alice, plans, "after the fault", true)
	for _, p := range approved(t, r, rec, alice, cl) {
		if _, err := alice.Apply(ctx, p, true); err != nil {
			t.Fatalf("apply of a fresh plan: %v", err)
		}
	}
	for _, p := range plans {
		for _, a := range p.Actions {
			if isOpen(r, cl, a) {
				t.Errorf("%s %s still to fix after the fault and a fresh run", a.Target, a.Part)
			}
		}
	}
	checkWrites(t, r, cl, plans, behind)
	checkAudit(t, r)
	t.Logf("faulted run: %v; calls %s", states, faultedCalls(r.sim))
}

// observe reads every scope and records each read with the reconciler, as the daemon's
// collections do, and returns what each read changed, by scope.
func observe(t *testing.T, r *rig, rec *reconcile.Reconciler) map[string]*reconcile.Outcome {
	t.Helper()
	ctx := context.Background()
	var sink collectors.MemorySink
	if err := r.reader.Collect(ctx, &sink); err != nil {
		t.Fatalf("collect: %v", err)
	}
	byScope := map[string][]snapshot.Resource{}
	for _, res := range sink.Resources {
		byScope[res.Scope] = append(byScope[res.Scope], res)
	}
	out := map[string]*reconcile.Outcome{}
	for _, sc := range sink.Scopes {
		o, err := rec.Observe(ctx, reconcile.Observation{Scope: sc, Resources: byScope[sc.ID], Accounts: r.accounts})
		if err != nil {
			t.Fatalf("observe %s: %v", sc.ID, err)
		}
		out[sc.ID] = o
	}
	if len(out) == 0 {
		t.Fatal("the read reported no scope")
	}
	return out
}

// approved reads every scope, plans the cloud's fixes of each as the daemon plans a
// scope, has alice's apply ask for their approval and bob approve every request, and
// returns the plans that have actions.
func approved(t *testing.T, r *rig, rec *reconcile.Reconciler, alice *remediate.Machine, cl cloud) []*remediate.Plan {
	t.Helper()
	ctx := context.Background()
	fixes := cl.fixes()
	var plans []*remediate.Plan
	for _, scope := range slices.Sorted(maps.Keys(observe(t, r, rec))) {
		p, err := rec.Plan(ctx, scope, reconcile.PlanOptions{Registry: r.registry, Gates: approvers, Accounts: r.accounts})
		if err != nil {
			t.Fatal(err)
		}
		p = p.Only(func(a remediate.PlannedAction) bool { return fixes[a.Remediator] != "" })
		if len(p.Actions) == 0 {
			continue
		}
		res, err := alice.Apply(ctx, p, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			if it.State != remediate.StatePending {
				continue
			}
			if _, err := r.gate.Decide(ctx, it.Request, "bob", "cli", true, "CHG-14"); err != nil {
				t.Fatalf("bob approves %s: %v", it.Request, err)
			}
		}
		plans = append(plans, p)
	}
	return plans
}

// isOpen reports whether the drift action a fixes is still in the cloud, as the
// simulator holds it (read without a call, so that the faults do not blind it).
func isOpen(r *rig, cl cloud, a remediate.PlannedAction) bool {
	var open bool
	r.sim.Do(func(w *cloudsim.World) { open = cl.open(w, a) })
	return open
}

// checkActions holds each action of plans to the cloud's state: a verified fix is in
// the cloud, a failed one left it as it was; an attempted fix has its intent recorded;
// none is left applying once the faults are gone (settled).
func checkActions(t *testing.T, r *rig, cl cloud, m *remediate.Machine, plans []*remediate.Plan, when string, settled bool) {
	t.Helper()
	ctx := context.Background()
	intents := subjects(t, r, audit.KindActionIntent)
	for _, p := range plans {
		for _, a := range p.Actions {
			rec, err := m.Action(ctx, a.ID)
			if err != nil || rec == nil {
				t.Fatalf("action %s: %v", a.ID, err)
			}
			if rec.State == remediate.StateApplying && settled {
				t.Errorf("%s: action %s (%s) still applying: %s", when, a.ID, a.Part, rec.Detail)
			}
			if (rec.State == remediate.StateApplying || attempted(rec)) && intents[a.ID] == 0 {
				t.Errorf("%s: action %s (%s) is %s without an intent recorded", when, a.ID, a.Part, rec.State)
			}
			open := isOpen(r, cl, a)
			switch rec.State {
			case remediate.StateVerified:
				if open {
					t.Errorf("%s: %s %s verified, and its drift is still in the cloud", when, a.Target, a.Part)
				}
			case remediate.StateFailed:
				if !open {
					t.Errorf("%s: %s %s failed (%s), yet the cloud has the fix: half-applied", when, a.Target, a.Part, rec.Detail)
				}
			}
		}
	}
}

// attempted reports whether a failed action's call was made (its failure says so).
func attempted(r *remediate.Record) bool {
	return r.State == remediate.StateFailed && (strings.HasPrefix(r.Detail, "apply:") || strings.HasPrefix(r.Detail, "partial:"))
}

// checkWrites asserts from the simulator's counters that every write since the fault
// was one of the plans', and that each fix reached the cloud once: the writes the
// cloud served (refused ones do not count) and those made behind warden's back add up
// to one per fix. What lies beside the fixes is untouched.
func checkWrites(t *testing.T, r *rig, cl cloud, plans []*remediate.Plan, behind map[string]int) {
	t.Helper()
	served := map[string]int{}
	for op, c := range r.sim.Calls() {
		if !c.Write {
			continue
		}
		if n := c.Calls - c.Throttled - c.Failed - c.AccessDenied - c.Cancelled; n > 0 {
			served[op] = n
		}
	}
	want := map[string]int{}
	for _, p := range plans {
		for _, a := range p.Actions {
			want[cl.fixes()[a.Remediator]]++
		}
	}
	for op, n := range behind {
		want[op] -= n
	}
	for op, n := range served {
		if want[op] == 0 && n > 0 {
			t.Errorf("write %s made %d times: not in the plan", op, n)
		}
	}
	for op, n := range want {
		if served[op] != n {
			t.Errorf("%s served %d times (and %d behind warden's back), want one per fix: %d", op, served[op], behind[op], n)
		}
	}
	r.sim.Do(func(w *cloudsim.World) { cl.untouched(t, w) })
}

// checkAudit verifies the log, and that each intent of an action is followed by exactly
// one outcome before the next intent; an outcome without an intent made no call (a
// failed drift re-check, a fix found in place).
func checkAudit(t *testing.T, r *rig) {
	t.Helper()
	// VerifyAudit reads nothing of an Env but its store.
	(&remediatetest.Env{Store: r.store}).VerifyAudit(t)
	es, err := r.log.EntriesOfKind(context.Background(), audit.KindActionIntent, audit.KindActionVerified, audit.KindActionFailed)
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, en := range es {
		var data struct {
			Attempted, Wrote *bool
		}
		_ = json.Unmarshal(en.Data, &data)
		switch {
		case en.Kind == audit.KindActionIntent && open[en.Subject]:
			t.Errorf("action %s: a second intent (entry %d) before the first one's outcome", en.Subject, en.Seq)
		case en.Kind == audit.KindActionIntent:
			open[en.Subject] = true
		case open[en.Subject]:
			open[en.Subject] = false
		case (data.Attempted != nil && *data.Attempted) || (data.Wrote != nil && *data.Wrote):
			t.Errorf("action %s: %s (entry %d) says a call was made, with no intent recorded before it", en.Subject, en.Kind, en.Seq)
		}
	}
	for id, o := range open {
		if o {
			t.Errorf("action %s: an intent without an outcome", id)
		}
	}
}

// subjects counts the audit entries of kinds by subject.
func subjects(t *testing.T, r *rig, kinds ...string) map[string]int {
	t.Helper()
	es, err := r.log.EntriesOfKind(context.Background(), kinds...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, en := range es {
		out[en.Subject]++
	}
	return out
}

// faultedCalls is the simulator's refused calls, for the log.
func faultedCalls(sim *cloudsim.Sim) string {
	refused := map[string]cloudsim.CallStats{}
	for op, c := range sim.Calls() {
		if c.Throttled+c.Failed+c.AccessDenied > 0 {
			refused[op] = c
		}
	}
	b, _ := json.Marshal(refused)
	return string(b)
}
