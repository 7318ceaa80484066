package faultsuite_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

// The cloud faults of the fault-injection suite (docs/faults.md). Each case injects one
// fault into the simulator, then runs what warden runs: a read of every scope judged by
// the reconciler (the daemon's collection), and an apply of fixes whose approvals were
// given before the fault. The faults are cleared and warden runs again, as the next
// pass would. What is asserted comes from the simulator (its world and its counters),
// not from warden's own account of what it did:
//   - no write the plan did not have, and no write made twice;
//   - no half-applied action: each is verified (its fix is in the cloud), failed (the
//     cloud is as it was, and an attempted call has its intent recorded), or left
//     applying and resolved by the next run without a second write;
//   - a scope that could not be read is recorded as failed, and resolves and deletes
//     nothing;
//   - the audit log verifies, with one intent and one outcome per attempted fix.

// fixes are the remediators the cases apply: one write each (a revoke of an SSH rule,
// the account's password policy).
var fixes = map[string]string{
	"aws.ec2.revoke_ingress":      "ec2:RevokeSecurityGroupIngress",
	"aws.iam.set_password_policy": "iam:UpdateAccountPasswordPolicy",
}

// groups is how many security groups open to SSH the world holds.
const groups = 2

// cloudCase is one injected fault, and what the faulted run must make of it.
type cloudCase struct {
	name    string
	faults  []cloudsim.Fault
	limits  map[string]float64
	latency time.Duration
	// arm injects a fault at an exact moment (cloudsim.OnNextCall); it returns how many
	// writes it made itself, behind warden's back, as the cloud would have.
	arm func(e *remediatetest.Env, p *remediate.Plan) *int
	// failedScopes are the scopes (by their id's tail) the faulted read must record failed.
	failedScopes []string
	// want is what every fix of the remediator must end as in the faulted run; a
	// remediator not listed may end in any state the invariants allow.
	want map[string]remediate.State
	// transient is whether the failed fixes of want must be marked transient (the
	// daemon reads their targets again soon).
	transient bool
}

func TestFaults_cloud(t *testing.T) {
	revokeFault := func(f cloudsim.Fault) cloudsim.Fault {
		f.Service, f.Action = "ec2", "RevokeSecurityGroupIngress"
		return f
	}
	verified := remediate.StateVerified
	for _, c := range []cloudCase{
		{name: "latency on every call", latency: 30 * time.Millisecond,
			want: map[string]remediate.State{"aws.ec2.revoke_ingress": verified, "aws.iam.set_password_policy": verified}},
		{name: "rate limits throttle reads and writes", limits: map[string]float64{"ec2": 2, "iam": 3}},
		{name: "throttled writes, half the time", faults: []cloudsim.Fault{{Writes: true, ThrottleRate: 0.5}}},
		{name: "5xx on the security group reads", faults: []cloudsim.Fault{{Service: "ec2", Action: "Describe*", ErrorRate: 1}},
			failedScopes: []string{"ec2/us-east-1"}, transient: true,
			want: map[string]remediate.State{"aws.ec2.revoke_ingress": remediate.StateFailed, "aws.iam.set_password_policy": verified}},
		{name: "AccessDenied on the IAM reads", faults: []cloudsim.Fault{{Service: "iam", Action: "Get*", AccessDenied: true}},
			failedScopes: []string{"iam"},
			want:         map[string]remediate.State{"aws.ec2.revoke_ingress": verified, "aws.iam.set_password_policy": remediate.StateFailed}},
		{name: "5xx on every write", faults: []cloudsim.Fault{{Writes: true, ErrorRate: 1}}, transient: true,
			want: map[string]remediate.State{"aws.ec2.revoke_ingress": remediate.StateFailed, "aws.iam.set_password_policy": remediate.StateFailed}},
		{name: "AccessDenied on every write", faults: []cloudsim.Fault{{Writes: true, AccessDenied: true}},
			want: map[string]remediate.State{"aws.ec2.revoke_ingress": remediate.StateFailed, "aws.iam.set_password_policy": remediate.StateFailed}},
		{name: "a write applied but answered 5xx", transient: true,
			// The first revoke reaches the cloud, which applies it and answers a server
			// error (as AWS may); so does every revoke after it.
			arm: func(e *remediatetest.Env, p *remediate.Plan) *int {
				made := new(int)
				first := "" // the group of the plan's first revoke, which runs first
				for _, a := range p.Actions {
					if a.Remediator == "aws.ec2.revoke_ingress" && first == "" {
						first = a.Target[strings.LastIndex(a.Target, "/")+1:]
					}
				}
				e.Sim.OnNextCall("ec2:RevokeSecurityGroupIngress", func() {
					e.Sim.Do(func(w *cloudsim.World) {
						for _, g := range w.AWS.Accounts[0].SecurityGroups {
							if g.ID == first {
								g.Ingress = g.Ingress[1:] // the SSH rule, first in World
							}
						}
					})
					*made++
					_ = e.Sim.SetFaults([]cloudsim.Fault{revokeFault(cloudsim.Fault{ErrorRate: 1})}, nil)
				})
				return made
			}},
		{name: "a fault between a write and its verification",
			// Once the first revoke is made, the security groups cannot be read: its
			// verification fails, and so does the next fix's drift re-check.
			arm: func(e *remediatetest.Env, _ *remediate.Plan) *int {
				e.Sim.OnNextCall("ec2:RevokeSecurityGroupIngress", func() {
					_ = e.Sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Action: "DescribeSecurityGroups", ErrorRate: 1}}, nil)
				})
				return new(int)
			}},
	} {
		t.Run(c.name, func(t *testing.T) { runCloudCase(t, c) })
	}
}

func runCloudCase(t *testing.T, c cloudCase) {
	ctx := context.Background()
	e := remediatetest.Start(t, storetest.Backends(t)["sqlite"](t), remediatetest.World(groups),
		gates.Config{Approvers: []string{"bob", "carol"}, Auto: []findings.Risk{}}, remediatetest.Options{})
	rec := reconcile.New(reconcile.Options{Store: e.Store, Log: e.Log, Engine: e.Engine, Now: e.Now})
	alice := e.Machine("alice", remediate.Limits{})
	observe(t, e, rec) // the findings as the last good read left them

	// The fixes are planned and approved before the fault: the faulted run applies them.
	p := approved(t, e, alice)
	e.Sim.ResetCalls()
	if err := e.Sim.SetFaults(c.faults, c.limits); err != nil {
		t.Fatal(err)
	}
	e.Sim.SetLatency(c.latency)
	behind := new(int)
	if c.arm != nil {
		behind = c.arm(e, p)
	}

	// The faulted read: failed scopes are recorded so, and resolve and delete nothing.
	for id, out := range observe(t, e, rec) {
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
	res, err := alice.Apply(ctx, p, true)
	if err != nil {
		t.Fatalf("apply under the fault: %v", err)
	}
	states := map[string]remediate.State{}
	for _, it := range res.Items {
		states[it.Action] = it.State
		if w, ok := c.want[it.Remediator]; ok && it.State != w {
			t.Errorf("%s %s: %s (%s), want %s", it.Remediator, it.Part, it.State, it.Outcome, w)
		}
		if _, ok := c.want[it.Remediator]; ok && it.State == remediate.StateFailed && c.transient != it.Transient {
			t.Errorf("%s %s failed (%s), transient %v: want %v", it.Remediator, it.Part, it.Outcome, it.Transient, c.transient)
		}
	}
	checkActions(t, e, alice, p, "under the fault", false)

	// The fault is gone: the next run resolves what was left applying, and a fresh plan
	// (approved anew) takes up what failed. The cloud converges, each fix written once.
	e.Sim.SetLatency(0)
	if err := e.Sim.SetFaults(nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(ctx, p, true); err != nil {
		t.Fatalf("apply after the fault: %v", err)
	}
	checkActions(t, e, alice, p, "after the fault", true)
	again := approved(t, e, alice)
	if _, err := alice.Apply(ctx, again, true); err != nil {
		t.Fatalf("apply of a fresh plan: %v", err)
	}
	for i := range groups {
		if sshOpen(e.Sim, groupARN(i)) {
			t.Errorf("SSH still open on %s after the fault and a fresh run", groupARN(i))
		}
	}
	checkWrites(t, e, *behind)
	checkAudit(t, e)
	t.Logf("faulted run: %v; calls %s", states, faultedCalls(e.Sim))
}

// observe reads every scope and records each read with the reconciler, as the daemon's
// collections do, and returns what each read changed.
func observe(t *testing.T, e *remediatetest.Env, rec *reconcile.Reconciler) map[string]*reconcile.Outcome {
	t.Helper()
	ctx := context.Background()
	var sink collectors.MemorySink
	if err := e.Reader.Collect(ctx, &sink); err != nil {
		t.Fatalf("collect: %v", err)
	}
	byScope := map[string][]snapshot.Resource{}
	for _, r := range sink.Resources {
		byScope[r.Scope] = append(byScope[r.Scope], r)
	}
	out := map[string]*reconcile.Outcome{}
	for _, sc := range sink.Scopes {
		o, err := rec.Observe(ctx, reconcile.Observation{Scope: sc, Resources: byScope[sc.ID], Accounts: e.Accounts})
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

// approved plans the fixes, has alice's apply ask for their approval and bob approve
// every request, and returns the plan.
func approved(t *testing.T, e *remediatetest.Env, alice *remediate.Machine) *remediate.Plan {
	t.Helper()
	ctx := context.Background()
	p := e.Plan(t, "alice").Only(func(a remediate.PlannedAction) bool { return fixes[a.Remediator] != "" })
	res, err := alice.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.Items {
		if it.State != remediate.StatePending {
			continue
		}
		if _, err := e.Gate.Decide(ctx, it.Request, "bob", "cli", true, "CHG-14"); err != nil {
			t.Fatalf("bob approves %s: %v", it.Request, err)
		}
	}
	return p
}

// checkActions holds each action of p to the cloud's state: a verified revoke closed
// its rule, a failed one left it as it was; an attempted fix has its intent recorded;
// none is left applying once the faults are gone (settled).
func checkActions(t *testing.T, e *remediatetest.Env, m *remediate.Machine, p *remediate.Plan, when string, settled bool) {
	t.Helper()
	ctx := context.Background()
	intents := subjects(t, e, audit.KindActionIntent)
	for _, a := range p.Actions {
		r, err := m.Action(ctx, a.ID)
		if err != nil || r == nil {
			t.Fatalf("action %s: %v", a.ID, err)
		}
		if r.State == remediate.StateApplying && settled {
			t.Errorf("%s: action %s (%s) still applying: %s", when, a.ID, a.Part, r.Detail)
		}
		if (r.State == remediate.StateApplying || attempted(r)) && intents[a.ID] == 0 {
			t.Errorf("%s: action %s (%s) is %s without an intent recorded", when, a.ID, a.Part, r.State)
		}
		if a.Remediator != "aws.ec2.revoke_ingress" {
			continue
		}
		open := sshOpen(e.Sim, a.Target)
		switch r.State {
		case remediate.StateVerified:
			if open {
				t.Errorf("%s: %s verified, and its rule is still open in the cloud", when, a.Target)
			}
		case remediate.StateFailed:
			if !open {
				t.Errorf("%s: %s failed (%s), yet the cloud has the fix: half-applied", when, a.Target, r.Detail)
			}
		}
	}
}

// attempted reports whether a failed action's call was made (its failure says so).
func attempted(r *remediate.Record) bool {
	return r.State == remediate.StateFailed && (strings.HasPrefix(r.Detail, "apply:") || strings.HasPrefix(r.Detail, "partial:"))
}

// checkWrites asserts from the simulator's counters that every write since the fault
// was one of the plan's, and that each fix reached the cloud once: the writes the
// cloud served (refused ones do not count) and those made behind warden's back add up
// to one per fix.
func checkWrites(t *testing.T, e *remediatetest.Env, behind int) {
	t.Helper()
	served := map[string]int{}
	for op, c := range e.Sim.Calls() {
		if !c.Write {
			continue
		}
		if n := c.Calls - c.Throttled - c.Failed - c.AccessDenied - c.Cancelled; n > 0 {
			served[op] = n
		}
	}
	want := map[string]int{"ec2:RevokeSecurityGroupIngress": groups - behind, "iam:UpdateAccountPasswordPolicy": 1}
	for op, n := range served {
		if want[op] == 0 && n > 0 {
			t.Errorf("write %s made %d times: not in the plan", op, n)
		}
	}
	for op, n := range want {
		if served[op] != n {
			t.Errorf("%s served %d times (and %d behind warden's back), want one per fix: %d", op, served[op], behind, n)
		}
	}
	var office int
	e.Sim.Do(func(w *cloudsim.World) {
		for _, g := range w.AWS.Accounts[0].SecurityGroups {
			for _, r := range g.Ingress {
				if r.FromPort == 443 {
					office++
				}
			}
		}
	})
	if office != groups {
		t.Errorf("%d of the %d office rules left: a revoke took the wrong rule", office, groups)
	}
}

// checkAudit verifies the log, and that each intent of an action is followed by exactly
// one outcome before the next intent; an outcome without an intent made no call (a
// failed drift re-check, a fix found in place).
func checkAudit(t *testing.T, e *remediatetest.Env) {
	t.Helper()
	e.VerifyAudit(t)
	es, err := e.Log.EntriesOfKind(context.Background(), audit.KindActionIntent, audit.KindActionVerified, audit.KindActionFailed)
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

// sshOpen reports whether the group of uid still lets 0.0.0.0/0 in on port 22, as the
// simulator holds it (read without a call, so that the faults do not blind it).
func sshOpen(sim *cloudsim.Sim, uid string) bool {
	id := uid[strings.LastIndex(uid, "/")+1:]
	if i := strings.IndexByte(id, '#'); i >= 0 {
		id = id[:i]
	}
	open := false
	sim.Do(func(w *cloudsim.World) {
		for _, g := range w.AWS.Accounts[0].SecurityGroups {
			for _, r := range g.Ingress {
				if g.ID == id && r.FromPort == 22 && r.CIDR == "0.0.0.0/0" {
					open = true
				}
			}
		}
	})
	return open
}

// subjects counts the audit entries of kinds by subject.
func subjects(t *testing.T, e *remediatetest.Env, kinds ...string) map[string]int {
	t.Helper()
	es, err := e.Log.EntriesOfKind(context.Background(), kinds...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, en := range es {
		out[en.Subject]++
	}
	return out
}

func groupARN(i int) string {
	return "arn:aws:ec2:us-east-1:" + remediatetest.Account + ":security-group/sg-00000000000000a" + string(rune('0'+i))
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
