package gcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

const prodPolicy = "//cloudresourcemanager.googleapis.com/projects/acme-prod"

// recommendedWorld is world() with IAM recommendations on grants of acme-prod's policy: a
// replacement with its usage, a removal without a known total, and one already applied.
func recommendedWorld() *cloudsim.World {
	w := world()
	p := w.GCP.Projects[0]
	refreshed := time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)
	p.Recommendations = []*cloudsim.RoleRecommendation{
		{ID: "r1", Member: "serviceAccount:111111111111-compute@developer.gserviceaccount.com", Role: "roles/editor",
			NewRoles:             []string{"roles/storage.objectViewer"},
			ExercisedPermissions: []string{"storage.objects.get", "storage.objects.list", "storage.buckets.get"},
			InferredPermissions:  []string{"storage.objects.getIamPolicy"}, TotalPermissions: 412, LastRefresh: refreshed},
		{ID: "r2", Member: "user:alice@acme.example", Role: "roles/owner", LastRefresh: refreshed},
		{ID: "r3", Member: "domain:acme.example", Role: "roles/viewer", State: "SUCCEEDED", LastRefresh: refreshed},
	}
	return w
}

// decoded is v as the policies see it: through JSON.
func decoded(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCollect_recommendations: with Config.Recommendations the project's policy holds its
// ACTIVE recommendations with their usage, a project without any an empty list; without
// it, no attribute and no Recommender call at all.
func TestCollect_recommendations(t *testing.T) {
	got := collect(t, recommendedWorld(), nil, gcp.Config{Recommendations: true})
	if sc := got.scopes["gcp/acme-prod/iam"]; sc.Status != "ok" {
		t.Fatalf("scope: %+v", sc)
	}
	recs := decoded(t, got.resources[prodPolicy].Attributes["recommendations"])
	want := decoded(t, []map[string]any{
		{"name": "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/r1",
			"state": "ACTIVE", "subtype": "REPLACE_ROLE", "member": "serviceAccount:111111111111-compute@developer.gserviceaccount.com",
			"role": "roles/editor", "new_roles": []string{"roles/storage.objectViewer"},
			"description":  "Replace the current role with a smaller role to cover the permissions needed.",
			"last_refresh": "2026-12-05T07:00:00Z", "exercised_permissions": 3, "inferred_permissions": 1, "total_permissions": 412},
		{"name": "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/r2",
			"state": "ACTIVE", "subtype": "REMOVE_ROLE", "member": "user:alice@acme.example", "role": "roles/owner", "new_roles": []string{},
			"description":  "This role has not been used during the observation window.",
			"last_refresh": "2026-12-05T07:00:00Z", "exercised_permissions": 0, "inferred_permissions": 0, "total_permissions": nil},
	})
	list, _ := recs.([]any)
	if len(list) != 2 {
		t.Fatalf("recommendations: %v", recs)
	}
	for i, r := range list {
		m := r.(map[string]any)
		if etag, _ := m["etag"].(string); etag == "" {
			t.Errorf("recommendation %d has no etag", i)
		}
		delete(m, "etag")
		if g, w := jsonString(t, m), jsonString(t, want.([]any)[i]); g != w {
			t.Errorf("recommendation %d:\ngot  %s\nwant %s", i, g, w)
		}
	}
	if r, ok := got.resources["//cloudresourcemanager.googleapis.com/projects/acme-dev"].Attributes["recommendations"].([]any); !ok || len(r) != 0 {
		t.Errorf("acme-dev recommendations = %#v, want []", got.resources["//cloudresourcemanager.googleapis.com/projects/acme-dev"].Attributes["recommendations"])
	}

	off := collect(t, recommendedWorld(), nil, gcp.Config{})
	if _, ok := off.resources[prodPolicy].Attributes["recommendations"]; ok {
		t.Error("recommendations collected without Config.Recommendations")
	}
	for k := range off.sim.Calls() {
		if strings.HasPrefix(k, "recommender:") {
			t.Errorf("called %s without Config.Recommendations", k)
		}
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCollect_recommendationsFailures: a recommendation list that fails leaves
// recommendations_error and no list (nothing can be concluded) and the scope partial, its
// other resources read; failed insights leave the counts null.
func TestCollect_recommendationsFailures(t *testing.T) {
	got := collect(t, recommendedWorld(), []cloudsim.Fault{{Service: "recommender", Action: "ListRecommendations", Account: "acme-prod", AccessDenied: true}},
		gcp.Config{Recommendations: true})
	sc := got.scopes["gcp/acme-prod/iam"]
	if sc.Status != "partial" || !strings.Contains(sc.Error, "recommender.ListRecommendations") {
		t.Fatalf("scope = %+v, want partial on ListRecommendations", sc)
	}
	attrs := got.resources[prodPolicy].Attributes
	if _, ok := attrs["recommendations"]; ok {
		t.Errorf("a failed list still reported recommendations: %v", attrs["recommendations"])
	}
	if msg, _ := attrs["recommendations_error"].(string); !strings.Contains(msg, "PermissionDenied") {
		t.Errorf("recommendations_error = %q", msg)
	}
	if _, ok := got.resources["//iam.googleapis.com/projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"]; !ok {
		t.Error("the partial scope lost its service accounts")
	}

	got = collect(t, recommendedWorld(), []cloudsim.Fault{{Service: "recommender", Action: "ListInsights", AccessDenied: true}},
		gcp.Config{Recommendations: true})
	if sc := got.scopes["gcp/acme-prod/iam"]; sc.Status != "partial" {
		t.Fatalf("scope = %+v, want partial on ListInsights", sc)
	}
	list, _ := got.resources[prodPolicy].Attributes["recommendations"].([]any)
	if len(list) != 2 {
		t.Fatalf("recommendations without insights: %v", list)
	}
	for _, r := range list {
		m := r.(map[string]any)
		if m["exercised_permissions"] != nil || m["total_permissions"] != nil || m["member"] == "" {
			t.Errorf("without insights: %v", m)
		}
	}
}

// TestRead_recommendations: a project policy re-read alone keeps its recommendations, as
// Collect reported them.
func TestRead_recommendations(t *testing.T) {
	got := collect(t, recommendedWorld(), nil, gcp.Config{Recommendations: true})
	_, url := simtest.Start(t, recommendedWorld(), cloudsim.Options{})
	c := gcp.New(gcp.Config{Endpoint: url, RateLimit: 1000, MaxAttempts: 2, BaseBackoff: time.Millisecond, Recommendations: true})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.Read(ctx, prodPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := jsonOf(t, r), jsonOf(t, got.resources[prodPolicy]); g != w {
		t.Errorf("Read differs from Collect:\nread    %s\ncollect %s", g, w)
	}
}
