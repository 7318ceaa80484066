package remediate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// TestApplyDue_findsWhatHappenedToWaitingRequests: warden serve's pass (ApplyDue) leaves
// alone the pending actions whose request nothing happened to (issue 30: a pass costs
// what changed), yet still finds each thing that can happen to one: a decision written
// into the database by hand without touching the request (audited as forged, nothing
// written to the cloud), a signed approval (applied, read back from the simulator), and
// gates that stop asking for the action's risk (applied at once). The passes read every
// pending action, or, with a cursor as warden serve keeps one, what changed since the
// previous pass (after a first that reads all).
func TestApplyDue_findsWhatHappenedToWaitingRequests(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		for _, cursor := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cursor=%v", name, cursor), func(t *testing.T) {
				testApplyDueFinds(t, dsn, cursor)
			})
		}
	}
}

func testApplyDueFinds(t *testing.T, dsn func(testing.TB) string, cursor bool) {
	ctx := context.Background()
	bob, cfg := bobSigns(t)
	e := start(t, dsn(t), world(3), cfg)
	revokes := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 3)
	if len(revokes.Actions) != 3 {
		t.Fatalf("plan: %d revoke actions, want 3", len(revokes.Actions))
	}
	forged := 0
	m := countingForgeries(e, &forged)
	res, err := m.Apply(ctx, revokes, true)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]string{}
	for _, pa := range revokes.Actions {
		if req[pa.ID] = itemOf(t, res, pa.ID).Request; req[pa.ID] == "" {
			t.Fatalf("%s does not wait for approval: %+v", pa.ID, res.Items)
		}
	}
	hand, signed, third := revokes.Actions[0], revokes.Actions[1], revokes.Actions[2]

	var cur gates.Looks
	pass := func(why string) *remediate.Result {
		t.Helper()
		e.Sim.ResetCalls()
		var c *gates.Looks
		if cursor {
			c = &cur
		}
		res, err := m.ApplyDueFrom(ctx, c)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		return res
	}
	if res := pass("nothing happened"); len(res.Items) != 0 || e.Sim.WriteCount() != 0 {
		t.Fatalf("nothing happened: items %+v, %d writes", res.Items, e.Sim.WriteCount())
	}

	// A decision row written by hand, the request left pending.
	db, driver := storetest.RawDB(t, e.DSN)
	q := `INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at, signature, signer) VALUES (?, 'bob', 'cli', 'approve', 'by hand', ?, '', '')`
	if driver == "postgres" {
		q = strings.NewReplacer("(?, 'bob'", "($1, 'bob'", "'by hand', ?", "'by hand', $2").Replace(q)
	}
	if _, err := db.Exec(q, req[hand.ID], store.FormatTime(e.Now())); err != nil {
		t.Fatal(err)
	}
	pass("a decision written by hand")
	if forged != 1 || len(forgeries(t, e, req[hand.ID])) != 1 {
		t.Fatalf("the hand-written decision: counted %d, audited %v", forged, forgeries(t, e, req[hand.ID]))
	}
	if n := e.Sim.WriteCount(); n != 0 {
		t.Fatalf("the hand-written decision: %d writes to the cloud (%v)", n, e.Sim.Writes())
	}

	// bob's signed approval of the second: the next pass applies it.
	if _, err := e.Gate.WithSigner(bob).Decide(ctx, req[signed.ID], "bob", string(gates.ChannelCLI), true, ""); err != nil {
		t.Fatal(err)
	}
	res = pass("a signed approval")
	if it := itemOf(t, res, signed.ID); it.State != remediate.StateVerified {
		t.Fatalf("the signed approval: %+v", it)
	}
	if open, _ := e.SSHOpen(t, signed.Target); open {
		t.Fatal("the signed approval: SSH still open in the simulator")
	}
	for _, pa := range []remediate.PlannedAction{hand, third} {
		if open, _ := e.SSHOpen(t, pa.Target); !open {
			t.Fatalf("%s was revoked without an approval", pa.ID)
		}
	}

	// The gates stop asking for critical fixes: the third runs without a decision.
	auto := gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium, findings.RiskHigh, findings.RiskCritical},
		UncheckedNames: true}
	if err := auto.Validate(); err != nil {
		t.Fatal(err)
	}
	m2 := remediate.New(remediate.Options{Store: e.Store, Log: e.Log, Gate: gates.New(e.Store, e.Log, auto, e.Now), Gates: auto,
		Registry: e.Registry, Observer: remediate.Readers{e.Reader}, Engine: e.Engine, Actor: "alice", Now: e.Now})
	e.Sim.ResetCalls()
	res, err = m2.ApplyDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, res, third.ID); it.State != remediate.StateVerified {
		t.Fatalf("with the gates no longer asking: %+v", it)
	}
	if open, _ := e.SSHOpen(t, third.Target); open {
		t.Fatal("with the gates no longer asking: SSH still open in the simulator")
	}
	e.VerifyAudit(t)
}

// BenchmarkApplyDue_waiting is one warden serve pass over 200 actions waiting for
// their approval, nothing having happened to their requests (BENCHMARKS.md, "Cost
// proportional to change").
func BenchmarkApplyDue_waiting(b *testing.B) {
	ctx := context.Background()
	cfg := gates.Config{Approvers: []string{"bob"}, Quorum: map[findings.Risk]int{findings.RiskCritical: 1}, UncheckedNames: true}
	e := start(b, storetest.Backends(b)["sqlite"](b), world(200), cfg)
	revokes := only(e.Plan(b, "alice"), "aws.ec2.revoke_ingress", 200)
	m := e.Machine("alice", remediate.Limits{})
	if _, err := m.Apply(ctx, revokes, true); err != nil {
		b.Fatal(err)
	}
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.ApplyDue(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	// As warden serve passes: each reads what changed since the previous one, and every
	// twelfth reads all.
	b.Run("cursor", func(b *testing.B) {
		var cur gates.Looks
		for b.Loop() {
			if _, err := m.ApplyDueFrom(ctx, &cur); err != nil {
				b.Fatal(err)
			}
		}
	})
}
