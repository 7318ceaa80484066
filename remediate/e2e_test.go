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
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

const acct = "111111111111"

var t0 = time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)

// world is one account with a weak password policy (a low-risk fix), SSH open to the
// internet on several groups and unused keys (medium-risk fixes).
func world(openGroups int) *cloudsim.World {
	oldUse := time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)
	a := &cloudsim.Account{
		ID: acct, Regions: []string{"us-east-1"},
		PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, RequireNumbers: true, MaxPasswordAge: 90},
		Users: []*cloudsim.User{{Name: "alice", Created: t0, AccessKeys: []*cloudsim.AccessKey{
			{ID: "AKIA111111ALICE0001", Created: t0, LastUsed: &oldUse, LastUsedService: "s3", LastUsedRegion: "us-east-1"}}}},
	}
	for i := range openGroups {
		id := "sg-00000000000000" + string(rune('a'+i/10)) + string(rune('0'+i%10))
		a.SecurityGroups = append(a.SecurityGroups, &cloudsim.SecurityGroup{ID: id, Name: "web-" + id, Region: "us-east-1", VPC: "vpc-1",
			Description: "web", Ingress: []cloudsim.Rule{
				{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"},
				{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "10.0.0.0/8", Description: "office"},
			}})
	}
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{a}}}
}

// env is a simulator, the real AWS SDK clients through warden's sessions, the built-in
// pack checked against the registry, and a store with its audit log and gate.
type env struct {
	sim      *cloudsim.Sim
	sdk      aws.Config
	reader   *awscollector.Collector
	reg      *remediators.Registry
	eng      *engine.Engine
	st       *store.Store
	log      *audit.Log
	gcfg     gates.Config
	gate     *gates.Gate
	now      func() time.Time
	accounts []string
}

func start(t testing.TB, dsn string, w *cloudsim.World, gcfg gates.Config) *env {
	t.Helper()
	return startPaced(t, dsn, w, gcfg, 0)
}

// startPaced is start with warden's clients paced at limit calls per second per service
// (0: unpaced).
func startPaced(t testing.TB, dsn string, w *cloudsim.World, gcfg gates.Config, limit float64) *env {
	t.Helper()
	ctx := context.Background()
	sim, err := cloudsim.New(w, cloudsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	base := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	sessions, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: srv.URL, AWS: &base,
		RateLimits:  map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit, "organizations": limit},
		MaxAttempts: 2, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := builtin.Registry(sessions, nil)
	if err != nil {
		t.Fatal(err)
	}
	catalog := map[string][]engine.ActionParam{}
	for name, ps := range reg.Catalog() {
		for _, p := range ps {
			catalog[name] = append(catalog[name], engine.ActionParam{Name: p.Name, Required: p.Required})
		}
		if _, ok := catalog[name]; !ok {
			catalog[name] = nil
		}
	}
	eng, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Actions: catalog})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t, dsn)
	e := &env{sim: sim, reg: reg, eng: eng, st: st, gcfg: gcfg, now: time.Now, accounts: []string{acct}}
	e.sdk = base.Copy()
	e.sdk.BaseEndpoint = aws.String(srv.URL)
	e.sdk.RetryMaxAttempts = 1
	e.reader = awscollector.New(awscollector.Config{Sessions: sessions, Endpoint: srv.URL, AWS: &base, Regions: []string{"us-east-1"},
		BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	e.log = audit.New(st, audit.Options{Now: func() time.Time { return e.now() }})
	e.gate = gates.New(st, e.log, gcfg, func() time.Time { return e.now() })
	return e
}

// plan collects the account, evaluates it and plans its findings.
func (e *env) plan(t testing.TB, actor string) *remediate.Plan {
	t.Helper()
	ctx := context.Background()
	var sink collectors.MemorySink
	if err := e.reader.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	h := snapshot.Header{Version: 1, CollectedAt: now, Accounts: e.accounts, Scopes: sink.Scopes}
	res, err := e.eng.Evaluate(ctx, h, now, sink.Resources)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.EvalErrors) > 0 {
		t.Fatalf("eval errors: %v", res.EvalErrors)
	}
	byUID := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		byUID[r.UID] = r
	}
	p, err := remediate.NewPlan(remediate.PlanInput{Header: h, Name: "test", Findings: res.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { r, ok := byUID[uid]; return r, ok },
		Complete: func(string) bool { return true }, Registry: e.reg, Gates: e.gcfg, Actor: actor, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) machine(actor string, l remediate.Limits) *remediate.Machine {
	return remediate.New(remediate.Options{Store: e.st, Log: e.log, Gate: e.gate, Gates: e.gcfg, Registry: e.reg,
		Observer: remediate.Readers{e.reader}, Engine: e.eng, Actor: actor, Limits: l, Now: func() time.Time { return e.now() }})
}

func only(p *remediate.Plan, remediator string, n int) *remediate.Plan {
	i := 0
	return p.Only(func(a remediate.PlannedAction) bool {
		if a.Remediator != remediator || i >= n {
			return false
		}
		i++
		return true
	})
}

func itemOf(t *testing.T, res *remediate.Result, id string) remediate.Item {
	t.Helper()
	for _, it := range res.Items {
		if it.Action == id {
			return it
		}
	}
	t.Fatalf("no item for %s in %+v", id, res.Items)
	return remediate.Item{}
}

// sshOpen reports whether the group still lets 0.0.0.0/0 in on port 22, read through the SDK.
func (e *env) sshOpen(t testing.TB, groupARN string) (bool, string) {
	t.Helper()
	id := groupARN[strings.LastIndex(groupARN, "/")+1:]
	out, err := ec2.NewFromConfig(e.sdk).DescribeSecurityGroups(context.Background(), &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.SecurityGroups[0].IpPermissions {
		if aws.ToInt32(p.FromPort) != 22 {
			continue
		}
		for _, r := range p.IpRanges {
			if aws.ToString(r.CidrIp) == "0.0.0.0/0" {
				return true, aws.ToString(r.Description)
			}
		}
	}
	return false, ""
}

func verifyAudit(t *testing.T, e *env) {
	t.Helper()
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	log := audit.New(e.st, audit.Options{Signer: signer})
	if _, err := log.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Verify(context.Background(), verifier); err != nil {
		t.Fatalf("audit verify: %v", err)
	}
}

func TestApply_wholePath(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(1), gates.Config{Approvers: []string{"bob", "carol"}})
			p := e.plan(t, "alice")
			low := only(p, "aws.iam.set_password_policy", 1)
			med := only(p, "aws.ec2.revoke_ingress", 1)
			if len(low.Actions) != 1 || len(med.Actions) != 1 {
				t.Fatalf("plan: %d password-policy and %d revoke actions, want 1 each", len(low.Actions), len(med.Actions))
			}
			both := p.Only(func(a remediate.PlannedAction) bool { return a.ID == low.Actions[0].ID || a.ID == med.Actions[0].ID })
			lowID, medID := low.Actions[0].ID, med.Actions[0].ID
			alice := e.machine("alice", remediate.Limits{})

			// Dry run: nothing written, to the cloud or the store.
			e.sim.ResetCalls()
			dry, err := alice.Apply(ctx, both, false)
			if err != nil {
				t.Fatal(err)
			}
			if n := e.sim.WriteCount(); n != 0 || !dry.DryRun {
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
			pol, err := iam.NewFromConfig(e.sdk).GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
			if err != nil || aws.ToInt32(pol.PasswordPolicy.MinimumPasswordLength) < 14 {
				t.Fatalf("password policy after the fix: %+v %v", pol, err)
			}
			pending := itemOf(t, res, medID)
			if pending.State != remediate.StatePending || pending.Request == "" {
				t.Fatalf("medium-risk fix: %+v", pending)
			}
			if open, _ := e.sshOpen(t, med.Actions[0].Target); !open {
				t.Fatal("the pending fix was applied")
			}

			// The requester may not approve; another approver may.
			if _, err := e.gate.Decide(ctx, pending.Request, "alice", "cli", true, ""); !errors.Is(err, gates.ErrSelfApproval) {
				t.Fatalf("self-approval: %v", err)
			}
			if _, err := e.gate.Decide(ctx, pending.Request, "bob", "cli", true, "ok"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.gate.Decide(ctx, pending.Request, "bob", "cli", true, "again"); !errors.Is(err, gates.ErrAlreadyDecided) {
				t.Fatalf("double approval: %v", err)
			}

			// Apply again: the approved fix runs, is verified, and the low one is not redone.
			e.sim.ResetCalls()
			res, err = alice.Apply(ctx, both, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, medID); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("approved fix: %+v", it)
			}
			if open, _ := e.sshOpen(t, med.Actions[0].Target); open {
				t.Fatal("the rule is still open after the verified fix")
			}
			if w := e.sim.Writes(); len(w) != 1 {
				t.Fatalf("second apply wrote %v, want only the revoke", w)
			}

			// Roll back: the rule is back, with its description.
			it, err := alice.Rollback(ctx, medID)
			if err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			if open, desc := e.sshOpen(t, med.Actions[0].Target); !open || desc != "anywhere" {
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
			verifyAudit(t, e)
		})
	}
}

func TestApply_driftBetweenPlanAndApplyVoidsTheAction(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(1), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
	e.sim.Do(func(w *cloudsim.World) {
		w.AWS.Accounts[0].SecurityGroups[0].Ingress[0].Description = "changed by someone"
	})
	e.sim.ResetCalls()
	res, err := e.machine("alice", remediate.Limits{}).Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVoided || it.Wrote {
		t.Fatalf("drifted action: %+v", it)
	}
	if n := e.sim.WriteCount(); n != 0 {
		t.Fatalf("a voided action made %d writes", n)
	}
	verifyAudit(t, e)
}

func TestApply_pausedRefuses(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(1), gates.Config{})
	m := e.machine("alice", remediate.Limits{})
	if err := m.SetPause(ctx, true, "incident 42"); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	if _, err := m.Apply(ctx, e.plan(t, "alice"), true); !errors.Is(err, remediate.ErrPaused) || !strings.Contains(err.Error(), "incident 42") {
		t.Fatalf("apply while paused: %v", err)
	}
	if n := e.sim.WriteCount(); n != 0 {
		t.Fatalf("paused apply made %d writes", n)
	}
	if err := m.SetPause(ctx, false, ""); err != nil {
		t.Fatal(err)
	}
	verifyAudit(t, e)
}

func TestApply_expiredRequestIsNotApplied(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(1), gates.Config{Approvers: []string{"bob"}, Expiry: time.Hour})
	p := only(e.plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
	m := e.machine("alice", remediate.Limits{})
	res, err := m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	req := itemOf(t, res, p.Actions[0].ID).Request
	later := time.Now().Add(2 * time.Hour)
	e.now = func() time.Time { return later }
	if _, err := e.gate.Decide(ctx, req, "bob", "cli", true, ""); !errors.Is(err, gates.ErrExpired) {
		t.Fatalf("decision on an expired request: %v", err)
	}
	e.sim.ResetCalls()
	res, err = m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVoided || e.sim.WriteCount() != 0 {
		t.Fatalf("expired request: %+v, %d writes", it, e.sim.WriteCount())
	}
}

func TestApply_breakerStopsAfterConsecutiveFailures(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(8), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.plan(t, "alice"), "aws.ec2.revoke_ingress", 8)
	if err := e.sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.machine("alice", remediate.Limits{MaxPerAccount: 100}).Apply(ctx, p, true)
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
	verifyAudit(t, e)
}

func TestApply_canaryWaveStopsTheRest(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(12), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.plan(t, "alice"), "aws.ec2.revoke_ingress", 12)
	if len(p.Actions) != 12 {
		t.Fatalf("%d actions, want 12", len(p.Actions))
	}
	if err := e.sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	res, err := e.machine("alice", remediate.Limits{MaxPerAccount: 100}).Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 1 || !strings.Contains(res.Stopped, "canary") {
		t.Fatalf("failed %d, stopped %q: want the canary to stop the rest", res.Failed(), res.Stopped)
	}
	if n := e.sim.WriteCount(); n != 1 {
		t.Fatalf("%d write attempts, want the canary's one", n)
	}
}

// Two approvers deciding one request at the same moment give one decision: the other is
// told it was already decided, and the fix is applied once.
func TestApply_concurrentApprovalsGiveOneDecision(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(1), gates.Config{Approvers: []string{"bob", "carol"}})
			p := only(e.plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
			alice := e.machine("alice", remediate.Limits{})
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
					_, err := e.gate.Decide(ctx, pending.Request, who, "cli", true, "")
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
			e.sim.ResetCalls()
			res, err = alice.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVerified {
				t.Fatalf("approved fix: %+v", it)
			}
			if w := e.sim.Writes(); len(w) != 1 {
				t.Fatalf("writes %v, want one revoke", w)
			}
			verifyAudit(t, e)
		})
	}
}

// The dry run applies the blast-radius caps as the confirmed run does: the actions it
// says would run now are the ones that run, the others wait for the next run.
func TestApply_dryRunShowsTheCaps(t *testing.T) {
	ctx := context.Background()
	e := start(t, filepath.Join(t.TempDir(), "w.db"), world(5), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	p := only(e.plan(t, "alice"), "aws.ec2.revoke_ingress", 5)
	m := e.machine("alice", remediate.Limits{MaxActions: 3})
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
	if len(wouldRun) != 3 || len(wouldWait) != 2 || !strings.Contains(dry.Stopped, "2 actions would be deferred") {
		t.Fatalf("dry run: %d would run, %d would wait, stopped %q", len(wouldRun), len(wouldWait), dry.Stopped)
	}
	if n := e.sim.WriteCount(); n != 0 {
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
}
