package remediate_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// start starts an Env with unpaced clients.
func start(t testing.TB, dsn string, w *cloudsim.World, gcfg gates.Config) *remediatetest.Env {
	t.Helper()
	return remediatetest.Start(t, dsn, w, gcfg, remediatetest.Options{})
}

var (
	world  = remediatetest.World
	only   = remediatetest.Only
	itemOf = remediatetest.ItemOf
)

const acct = remediatetest.Account

func TestApply_wholePath(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(1), gates.Config{Approvers: []string{"bob", "carol"}, UncheckedNames: true})
			p := e.Plan(t, "alice")
			low := only(p, "aws.iam.set_password_policy", 1)
			med := only(p, "aws.ec2.revoke_ingress", 1)
			if len(low.Actions) != 1 || len(med.Actions) != 1 {
				t.Fatalf("plan: %d password-policy and %d revoke actions, want 1 each", len(low.Actions), len(med.Actions))
			}
			both := p.Only(func(a remediate.PlannedAction) bool { return a.ID == low.Actions[0].ID || a.ID == med.Actions[0].ID })
			lowID, medID := low.Actions[0].ID, med.Actions[0].ID
			alice := e.Machine("alice", remediate.Limits{})

			// Dry run: nothing written, to the cloud or the store.
			e.Sim.ResetCalls()
			dry, err := alice.Apply(ctx, both, false)
			if err != nil {
				t.Fatal(err)
			}
			if n := e.Sim.WriteCount(); n != 0 || !dry.DryRun {
				t.Fatalf("dry run made %d writes", n)
			}
			if rs, _ := alice.Actions(ctx); len(rs) != 0 {
				t.Fatalf("dry run recorded %d actions", len(rs))
			}

			// Confirmed: the low-risk fix runs, the medium one waits for approval.
			res, err := alice.Apply(ctx, both, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, lowID); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("low-risk fix: %+v", it)
			}
			pol, err := iam.NewFromConfig(e.SDK).GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
			if err != nil || aws.ToInt32(pol.PasswordPolicy.MinimumPasswordLength) < 14 {
				t.Fatalf("password policy after the fix: %+v %v", pol, err)
			}
			pending := itemOf(t, res, medID)
			if pending.State != remediate.StatePending || pending.Request == "" {
				t.Fatalf("medium-risk fix: %+v", pending)
			}
			if open, _ := e.SSHOpen(t, med.Actions[0].Target); !open {
				t.Fatal("the pending fix was applied")
			}

			// The requester may not approve; another approver may.
			if _, err := e.Gate.Decide(ctx, pending.Request, "alice", "cli", true, ""); !errors.Is(err, gates.ErrSelfApproval) {
				t.Fatalf("self-approval: %v", err)
			}
			if _, err := e.Gate.Decide(ctx, pending.Request, "bob", "cli", true, "ok"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Gate.Decide(ctx, pending.Request, "bob", "cli", true, "again"); !errors.Is(err, gates.ErrAlreadyDecided) {
				t.Fatalf("double approval: %v", err)
			}

			// Apply again: the approved fix runs, is verified, and the low one is not redone.
			e.Sim.ResetCalls()
			res, err = alice.Apply(ctx, both, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, medID); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("approved fix: %+v", it)
			}
			if open, _ := e.SSHOpen(t, med.Actions[0].Target); open {
				t.Fatal("the rule is still open after the verified fix")
			}
			if w := e.Sim.Writes(); len(w) != 1 {
				t.Fatalf("second apply wrote %v, want only the revoke", w)
			}

			// Roll back: the rule is back, with its description.
			it, err := alice.Rollback(ctx, medID)
			if err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			if open, desc := e.SSHOpen(t, med.Actions[0].Target); !open || desc != "anywhere" {
				t.Fatalf("after rollback: open %v, description %q", open, desc)
			}
			rs, err := alice.Actions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.ID == medID {
					states := []remediate.State{}
					for _, h := range r.History {
						states = append(states, h.State)
					}
					want := []remediate.State{remediate.StatePlanned, remediate.StatePending, remediate.StateApproved, remediate.StateApplying, remediate.StateVerified, remediate.StateRolledBack}
					if !slices.Equal(states, want) {
						t.Errorf("history %v, want %v", states, want)
					}
				}
			}
			e.VerifyAudit(t)
		})
	}
}

func TestApply_driftBetweenPlanAndApplyVoidsTheAction(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(1), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
	e.Sim.Do(func(w *cloudsim.World) {
		w.AWS.Accounts[0].SecurityGroups[0].Ingress[0].Description = "changed by someone"
	})
	e.Sim.ResetCalls()
	res, err := e.Machine("alice", remediate.Limits{}).Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVoided || it.Wrote {
		t.Fatalf("drifted action: %+v", it)
	}
	if n := e.Sim.WriteCount(); n != 0 {
		t.Fatalf("a voided action made %d writes", n)
	}
	e.VerifyAudit(t)
}

func TestApply_pausedRefuses(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(1), gates.Config{})
	m := e.Machine("alice", remediate.Limits{})
	if err := m.SetPause(ctx, true, "incident 42"); err != nil {
		t.Fatal(err)
	}
	e.Sim.ResetCalls()
	if _, err := m.Apply(ctx, e.Plan(t, "alice"), true); !errors.Is(err, remediate.ErrPaused) || !strings.Contains(err.Error(), "incident 42") {
		t.Fatalf("apply while paused: %v", err)
	}
	if n := e.Sim.WriteCount(); n != 0 {
		t.Fatalf("paused apply made %d writes", n)
	}
	if err := m.SetPause(ctx, false, ""); err != nil {
		t.Fatal(err)
	}
	e.VerifyAudit(t)
}

func TestApply_expiredRequestIsNotApplied(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(1), gates.Config{Approvers: []string{"bob"}, Expiry: time.Hour, UncheckedNames: true})
	p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
	m := e.Machine("alice", remediate.Limits{})
	res, err := m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	req := itemOf(t, res, p.Actions[0].ID).Request
	later := time.Now().Add(2 * time.Hour)
	e.SetNow(func() time.Time { return later })
	if _, err := e.Gate.Decide(ctx, req, "bob", "cli", true, ""); !errors.Is(err, gates.ErrExpired) {
		t.Fatalf("decision on an expired request: %v", err)
	}
	e.Sim.ResetCalls()
	res, err = m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVoided || e.Sim.WriteCount() != 0 {
		t.Fatalf("expired request: %+v, %d writes", it, e.Sim.WriteCount())
	}
}

func TestApply_breakerStopsAfterConsecutiveFailures(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(8), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 8)
	if err := e.Sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.Machine("alice", remediate.Limits{MaxPerAccount: 100}).Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 5 || !strings.Contains(res.Stopped, "5 consecutive failures") {
		t.Fatalf("failed %d, stopped %q: want the breaker after 5", res.Failed(), res.Stopped)
	}
	for _, it := range res.Items[5:] {
		if it.State != remediate.StatePlanned || it.Wrote {
			t.Errorf("after the breaker: %+v", it)
		}
	}
	e.VerifyAudit(t)
}

func TestApply_canaryWaveStopsTheRest(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(12), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 12)
	if len(p.Actions) != 12 {
		t.Fatalf("%d actions, want 12", len(p.Actions))
	}
	if err := e.Sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	e.Sim.ResetCalls()
	res, err := e.Machine("alice", remediate.Limits{MaxPerAccount: 100}).Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 1 || !strings.Contains(res.Stopped, "canary") {
		t.Fatalf("failed %d, stopped %q: want the canary to stop the rest", res.Failed(), res.Stopped)
	}
	if n := e.Sim.WriteCount(); n != 1 {
		t.Fatalf("%d write attempts, want the canary's one", n)
	}
}

// Two approvers deciding one request at the same moment give one decision: the other is
// told it was already decided, and the fix is applied once.
func TestApply_concurrentApprovalsGiveOneDecision(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(1), gates.Config{Approvers: []string{"bob", "carol"}, UncheckedNames: true})
			p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
			alice := e.Machine("alice", remediate.Limits{})
			res, err := alice.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			pending := itemOf(t, res, p.Actions[0].ID)
			if pending.State != remediate.StatePending {
				t.Fatalf("fix: %+v, want pending", pending)
			}
			errs := make(chan error, 2)
			var ready sync.WaitGroup
			ready.Add(2)
			gate := make(chan struct{})
			for _, who := range []string{"bob", "carol"} {
				go func() {
					ready.Done()
					<-gate
					_, err := e.Gate.Decide(ctx, pending.Request, who, "cli", true, "")
					errs <- err
				}()
			}
			ready.Wait()
			close(gate)
			var ok, already int
			for range 2 {
				switch err := <-errs; {
				case err == nil:
					ok++
				case errors.Is(err, gates.ErrAlreadyDecided):
					already++
				default:
					t.Errorf("decision: %v", err)
				}
			}
			if ok != 1 || already != 1 {
				t.Fatalf("%d decisions recorded and %d refused as already decided, want 1 and 1", ok, already)
			}
			e.Sim.ResetCalls()
			res, err = alice.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVerified {
				t.Fatalf("approved fix: %+v", it)
			}
			if w := e.Sim.Writes(); len(w) != 1 {
				t.Fatalf("writes %v, want one revoke", w)
			}
			e.VerifyAudit(t)
		})
	}
}

// The dry run applies the blast-radius caps as the confirmed run does: the actions it
// says would run now are the ones that run, the others wait for the next run.
func TestApply_dryRunShowsTheCaps(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(5), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 5)
	m := e.Machine("alice", remediate.Limits{MaxActions: 3})
	states := func(res *remediate.Result, prefix string) []string {
		var ids []string
		for _, it := range res.Items {
			if strings.HasPrefix(it.Outcome, prefix) {
				ids = append(ids, it.Action)
			}
		}
		return ids
	}
	dry, err := m.Apply(ctx, p, false)
	if err != nil {
		t.Fatal(err)
	}
	wouldRun, wouldWait := states(dry, "would apply"), states(dry, "would wait for the next run")
	if len(wouldRun) != 3 || len(wouldWait) != 2 || !strings.Contains(dry.Deferred, "2 actions would be deferred") {
		t.Fatalf("dry run: %d would run, %d would wait, deferred %q", len(wouldRun), len(wouldWait), dry.Deferred)
	}
	if n := e.Sim.WriteCount(); n != 0 {
		t.Fatalf("dry run wrote %d times", n)
	}
	res, err := m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, it := range res.Items {
		if it.State == remediate.StateVerified {
			ran = append(ran, it.Action)
		}
	}
	slices.Sort(ran)
	slices.Sort(wouldRun)
	if !slices.Equal(ran, wouldRun) || !slices.Equal(states(res, "deferred"), wouldWait) {
		t.Errorf("ran %v and deferred %v; the dry run said %v and %v", ran, states(res, "deferred"), wouldRun, wouldWait)
	}
	// A deferral is no failure and no safety stop.
	if !strings.Contains(res.Deferred, "2 actions deferred") || res.Stopped != "" || res.Err() != nil {
		t.Errorf("deferred %q, stopped %q, err %v: want a deferral and no error", res.Deferred, res.Stopped, res.Err())
	}
}
