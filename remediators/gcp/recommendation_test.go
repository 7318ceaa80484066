package gcp_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/recommender/apiv1/recommenderpb"

	"github.com/warden-sec/warden/collectors"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediators"
	gcpfix "github.com/warden-sec/warden/remediators/gcp"
)

// recommendedWorld is world() where Google recommends replacing carol's roles/editor
// with roles/viewer.
func recommendedWorld() *cloudsim.World {
	w := world()
	w.GCP.Projects[0].Recommendations = []*cloudsim.RoleRecommendation{{ID: "rec-carol", Member: "user:carol@acme.example",
		Role: "roles/editor", NewRoles: []string{"roles/viewer"}, ExercisedPermissions: []string{"resourcemanager.projects.get"},
		TotalPermissions: 412, LastRefresh: time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)}}
	return w
}

// recommendationAction collects the project with recommendations on and plans the fix.
func recommendationAction(t *testing.T, e *env, rem remediators.Remediator) remediators.Action {
	t.Helper()
	c := gcpcollector.New(gcpcollector.Config{Projects: []string{project}, Endpoint: e.url, RateLimit: 1000, Recommendations: true,
		MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"role": "roles/editor", "member": "user:carol@acme.example", "new_roles": []any{"roles/viewer"},
		"recommendation": "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/rec-carol"}
	for _, r := range sink.Resources {
		if r.UID != projectUID {
			continue
		}
		ts, err := rem.Targets(r, params)
		if err != nil || len(ts) != 1 || ts[0].Part != "roles/editor/user:carol@acme.example" {
			t.Fatalf("Targets: %+v %v", ts, err)
		}
		return action(rem, r, params, ts[0])
	}
	t.Fatalf("%s was not collected", projectUID)
	return remediators.Action{}
}

func recommendationState(t *testing.T, e *env) string {
	t.Helper()
	r, err := e.clients.Recommender.GetRecommendation(context.Background(), &recommenderpb.GetRecommendationRequest{
		Name: "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/rec-carol"})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetStateInfo().GetState().String()
}

// The recommendation is claimed, applied and marked succeeded; the policy read back
// holds carol as viewer, not editor, and nothing else moved; a second Apply is converged
// without a write; Rollback gives carol editor back and takes viewer away.
func TestApplyRoleRecommendation_lifecycle(t *testing.T) {
	ctx := context.Background()
	e := start(t, recommendedWorld())
	rem := gcpfix.NewApplyRoleRecommendation(e.clients)
	a := recommendationAction(t, e, rem)
	before := bindings(t, e, "projects/"+project)
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []string{ownerLine, "roles/editor=user:bob@gmail.com", tempLine, "roles/viewer=user:carol@acme.example"}
	if got := bindings(t, e, "projects/"+project); !slices.Equal(got, want) {
		t.Errorf("policy after Apply:\n%q\nwant\n%q", got, want)
	}
	if s := recommendationState(t, e); s != "SUCCEEDED" {
		t.Errorf("recommendation %s, want SUCCEEDED", s)
	}
	e.sim.ResetCalls()
	if err := rem.Apply(ctx, a); !errors.Is(err, remediators.ErrConverged) {
		t.Errorf("second Apply: %v, want ErrConverged", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("second Apply wrote %v", w)
	}
	if err := rem.Rollback(ctx, a); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	after := bindings(t, e, "projects/"+project)
	slices.Sort(after)
	slices.Sort(before)
	if !slices.Equal(after, before) {
		t.Errorf("policy after Rollback:\n%q\nwant the members of\n%q", after, before)
	}
	e.sim.ResetCalls()
	if err := rem.Rollback(ctx, a); err != nil || len(e.sim.Writes()) != 0 {
		t.Errorf("second Rollback: %v, wrote %v", err, e.sim.Writes())
	}
}

// A recommendation someone claimed since the plan (no longer ACTIVE) is not applied,
// and the policy is not touched.
func TestApplyRoleRecommendation_staleRecommendationChangesNothing(t *testing.T) {
	ctx := context.Background()
	e := start(t, recommendedWorld())
	rem := gcpfix.NewApplyRoleRecommendation(e.clients)
	a := recommendationAction(t, e, rem)
	name := "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/rec-carol"
	r, err := e.clients.Recommender.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.clients.Recommender.MarkRecommendationClaimed(ctx, &recommenderpb.MarkRecommendationClaimedRequest{Name: name, Etag: r.GetEtag()}); err != nil {
		t.Fatal(err)
	}
	before := bindings(t, e, "projects/"+project)
	if err := rem.Apply(ctx, a); err == nil || errors.Is(err, remediators.ErrConverged) {
		t.Fatalf("Apply with a stale etag: %v, want an error", err)
	}
	if got := bindings(t, e, "projects/"+project); !slices.Equal(got, before) {
		t.Errorf("the policy changed:\n%q\nwas\n%q", got, before)
	}
}
