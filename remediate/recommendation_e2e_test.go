package remediate_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/recommender/apiv1/recommenderpb"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store/storetest"
)

// TestApplyRoleRecommendation_throughTheMachine: on both databases, Google's
// recommendation to replace carol's editor role with viewer is planned from the
// collected recommendation at high risk, waits for an approver, is applied through the
// official clients (the recommendation marked succeeded) and verified, and rolled back;
// the audit log verifies.
func TestApplyRoleRecommendation_throughTheMachine(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := &cloudsim.World{GCP: cloudsim.GCP{
				Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example"}},
				Projects: []*cloudsim.Project{{ID: gcpProject, Number: "111111111111", Parent: "organizations/123456789012",
					IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
						{Role: "roles/owner", Members: []string{"user:alice@acme.example"}},
						{Role: "roles/editor", Members: []string{"user:carol@acme.example"}},
					}},
					Networks: []*cloudsim.Network{{Name: "default"}},
					Recommendations: []*cloudsim.RoleRecommendation{{ID: "rec-carol", Member: "user:carol@acme.example", Role: "roles/editor",
						NewRoles: []string{"roles/viewer"}, ExercisedPermissions: []string{"resourcemanager.projects.get"}, TotalPermissions: 412,
						LastRefresh: time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)}},
				}},
			}}
			e := startGCPOn(t, w, gates.Config{Approvers: []string{"bob"}, UncheckedNames: true, Auto: []findings.Risk{}}, dsn(t), true)
			plan := e.plan(t)
			p := plan.Only(func(a remediate.PlannedAction) bool { return a.Remediator == "gcp.iam.apply_role_recommendation" })
			if len(p.Actions) != 1 || p.Actions[0].Risk != findings.RiskHigh || p.Actions[0].Part != "roles/editor/user:carol@acme.example" {
				t.Fatalf("plan: %+v", p.Actions)
			}
			id := p.Actions[0].ID
			res, err := e.machine.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			pending := itemOf(t, res, id)
			if pending.State != remediate.StatePending || pending.Request == "" {
				t.Fatalf("before approval: %+v", pending)
			}
			if _, err := e.gate.Decide(ctx, pending.Request, "bob", "cli", true, "CHG-21"); err != nil {
				t.Fatal(err)
			}
			if res, err = e.machine.Apply(ctx, p, true); err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, id); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("after approval: %+v", it)
			}
			policy := func() []string {
				t.Helper()
				pol, err := e.clients.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + gcpProject})
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, b := range pol.Bindings {
					out = append(out, b.Role+"="+strings.Join(b.Members, ","))
				}
				slices.Sort(out)
				return out
			}
			if got := policy(); !slices.Equal(got, []string{"roles/owner=user:alice@acme.example", "roles/viewer=user:carol@acme.example"}) {
				t.Errorf("policy after the fix: %q", got)
			}
			rec, err := e.clients.Recommender.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{
				Name: "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/rec-carol"})
			if err != nil || rec.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_SUCCEEDED {
				t.Errorf("recommendation after the fix: %v %v", rec.GetStateInfo().GetState(), err)
			}
			if it, err := e.machine.Rollback(ctx, id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			if got := policy(); !slices.Equal(got, []string{"roles/editor=user:carol@acme.example", "roles/owner=user:alice@acme.example"}) {
				t.Errorf("policy after rollback: %q", got)
			}
			if rep, err := e.log.Verify(ctx, nil); err != nil || rep.Entries == 0 {
				t.Fatalf("audit verify: %+v %v", rep, err)
			}
		})
	}
}
