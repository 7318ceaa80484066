package remediate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store/storetest"
)

// A dry run that asks (warden serve --dry-run) turns gated fixes into approval requests
// and applies nothing, approved or not; once the dry run is lifted, the approved fix
// applies and the other still waits.
func TestAsk_requestsApprovalsAndNeverApplies(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(2), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true})
			p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 2)
			m := e.Machine("alice", remediate.Limits{})
			res, err := m.Ask(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if !res.DryRun {
				t.Error("an ask is a dry run")
			}
			requests := map[string]string{}
			for _, a := range p.Actions {
				it := itemOf(t, res, a.ID)
				if it.State != remediate.StatePending || it.Request == "" {
					t.Fatalf("action %s: %+v, want pending with a request", a.ID, it)
				}
				requests[a.ID] = it.Request
			}
			again, err := m.Ask(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range p.Actions {
				if it := itemOf(t, again, a.ID); it.Request != requests[a.ID] {
					t.Errorf("asked again: request %s, want the same %s", it.Request, requests[a.ID])
				}
			}
			first := p.Actions[0].ID
			if _, err := e.Gate.Decide(ctx, requests[first], "bob", "cli", true, ""); err != nil {
				t.Fatal(err)
			}
			res, err = m.Ask(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, first); it.State != remediate.StateApproved || !strings.HasPrefix(it.Outcome, "approved; would apply") {
				t.Fatalf("approved action in a dry run: %+v", it)
			}
			if n := e.Sim.WriteCount(); n != 0 {
				t.Fatalf("the dry run wrote %d times to the cloud", n)
			}
			res, err = m.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, first); it.State != remediate.StateVerified {
				t.Errorf("approved action once the dry run is lifted: %+v", it)
			}
			if it := itemOf(t, res, p.Actions[1].ID); it.State != remediate.StatePending {
				t.Errorf("undecided action: %+v", it)
			}
			if w := e.Sim.Writes(); len(w) != 1 {
				t.Errorf("writes %v, want the one approved revoke", w)
			}
			e.VerifyAudit(t)
		})
	}
}
