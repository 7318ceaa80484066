package remediate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store/storetest"
)

// one splits a plan into plans of one action each, as the daemon's jobs carry them.
func one(p *remediate.Plan) []*remediate.Plan {
	var out []*remediate.Plan
	for _, a := range p.Actions {
		out = append(out, p.Only(func(x remediate.PlannedAction) bool { return x.ID == a.ID }))
	}
	return out
}

// The hourly budget bounds what many runs of one action each do — the daemon's way of
// applying — where the caps per run cannot.
func TestApply_hourlyBudgetAcrossRuns(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(4), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
			now := time.Now().UTC()
			e.SetNow(func() time.Time { return now })
			plans := one(only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 4))
			if len(plans) != 4 {
				t.Fatalf("%d actions, want 4", len(plans))
			}
			m := e.Machine("warden", remediate.Limits{PerHour: 3, PerAccountPerHour: 2})
			var states []remediate.State
			var outcomes []string
			for _, p := range plans {
				res, err := m.Apply(ctx, p, true)
				if err != nil {
					t.Fatal(err)
				}
				it := itemOf(t, res, p.Actions[0].ID)
				states, outcomes = append(states, it.State), append(outcomes, it.Outcome)
				now = now.Add(time.Minute)
			}
			// remediatetest's world has one account: its budget of 2 is spent first.
			if states[0] != remediate.StateVerified || states[1] != remediate.StateVerified ||
				states[2] != remediate.StatePlanned || !strings.Contains(outcomes[2], "hourly budget of account") {
				t.Fatalf("states %v, outcomes %q", states, outcomes)
			}
			if n := e.Sim.WriteCount(); n != 2 {
				t.Fatalf("%d writes to the cloud, want 2", n)
			}
			now = now.Add(time.Hour)
			res, err := m.Apply(ctx, plans[2], true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, plans[2].Actions[0].ID); it.State != remediate.StateVerified {
				t.Fatalf("an hour later: %+v", it)
			}
			e.VerifyAudit(t)
		})
	}
}

// Fixes failing in a row across runs pause remediation; a resume starts the count anew.
func TestApply_failuresInARowAcrossRunsPause(t *testing.T) {
	ctx := context.Background()
	e := start(t, storetest.Backends(t)["sqlite"](t), world(5), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
	plans := one(only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 5))
	if err := e.Sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	m := e.Machine("warden", remediate.Limits{PauseAfterFailures: 2})
	apply := func(p *remediate.Plan) (*remediate.Result, error) { return m.Apply(ctx, p, true) }
	for i := range 2 {
		res, err := apply(plans[i])
		if err != nil {
			t.Fatal(err)
		}
		if it := itemOf(t, res, plans[i].Actions[0].ID); it.State != remediate.StateFailed {
			t.Fatalf("fix %d: %+v, want failed", i, it)
		}
		if i == 1 && !strings.Contains(res.Stopped, "breaker: the last 2 fixes failed (aws.ec2.revoke_ingress)") {
			t.Fatalf("after two failures: stopped %q", res.Stopped)
		}
	}
	pause, err := m.Paused(ctx)
	if err != nil || !pause.Paused || !strings.HasPrefix(pause.Reason, "breaker:") {
		t.Fatalf("pause = %+v, %v; want paused by the breaker", pause, err)
	}
	if _, err := apply(plans[2]); !errors.Is(err, remediate.ErrPaused) {
		t.Fatalf("a run while paused: %v, want ErrPaused", err)
	}
	if err := m.SetPause(ctx, false, ""); err != nil {
		t.Fatal(err)
	}
	// One more failure after the resume is one, not three.
	res, err := apply(plans[2])
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "" {
		t.Fatalf("first failure after the resume stopped the run: %q", res.Stopped)
	}
	if pause, _ := m.Paused(ctx); pause.Paused {
		t.Fatal("paused again by one failure after the resume")
	}
	e.VerifyAudit(t)
}
