package remediate_test

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store/storetest"
)

// A plan whose action changed while its approval was pending ends the old generation
// and starts a new one, in one transaction, audited in order: the plan, the voided
// request and action, then the new request.
func TestApply_changedActionEndsItsGenerationAfterThePlansEntry(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(1), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true})
			m := e.Machine("alice", remediate.Limits{})
			first := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
			if len(first.Actions) != 1 {
				t.Fatalf("%d actions, want 1", len(first.Actions))
			}
			id := first.Actions[0].ID
			res, err := m.Apply(ctx, first, true)
			if err != nil {
				t.Fatal(err)
			}
			old := itemOf(t, res, id)
			if old.State != remediate.StatePending {
				t.Fatalf("first plan's action: %+v", old)
			}
			e.Sim.Do(func(w *cloudsim.World) {
				w.AWS.Accounts[0].SecurityGroups[0].Ingress[0].Description = "changed by someone"
			})
			second := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1)
			if second.Actions[0].ID != id || second.Actions[0].Hash == first.Actions[0].Hash {
				t.Fatalf("second plan's action %s (hash %s): want %s with another content", second.Actions[0].ID, second.Actions[0].Hash, id)
			}
			res, err = m.Apply(ctx, second, true)
			if err != nil {
				t.Fatal(err)
			}
			now := itemOf(t, res, id)
			if now.State != remediate.StatePending || now.Request == "" || now.Request == old.Request {
				t.Fatalf("second plan's action: %+v (the first's request %s)", now, old.Request)
			}
			if r, err := m.Action(ctx, id); err != nil || r.Generation != 2 {
				t.Fatalf("recorded action: %+v, %v; want generation 2", r, err)
			}
			es, err := e.Log.EntriesOfKind(ctx, audit.KindPlanCreated, audit.KindApprovalVoided, audit.KindActionVoided, audit.KindApprovalRequested)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, en := range es {
				switch {
				case en.Kind == audit.KindPlanCreated && en.Subject == second.Hash,
					en.Kind == audit.KindApprovalVoided && en.Subject == old.Request,
					en.Kind == audit.KindActionVoided && en.Subject == id,
					en.Kind == audit.KindApprovalRequested && en.Subject == now.Request:
					got = append(got, en.Kind)
				}
			}
			want := []string{audit.KindPlanCreated, audit.KindApprovalVoided, audit.KindActionVoided, audit.KindApprovalRequested}
			if len(got) != len(want) {
				t.Fatalf("audit entries %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("audit entries %v, want %v", got, want)
				}
			}
			e.VerifyAudit(t)
		})
	}
}
