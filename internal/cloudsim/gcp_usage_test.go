package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	recommenderpb "cloud.google.com/go/recommender/apiv1/recommenderpb"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"
)

const (
	usageRecParent     = "projects/acme-prod/locations/global/recommenders/" + iamRecommender
	usageInsightParent = "projects/acme-prod/locations/global/insightTypes/" + iamInsightType
)

func usageWorld(recommend bool) *World {
	sa := func(name string) string { return "serviceAccount:" + name + "@acme-prod.iam.gserviceaccount.com" }
	return &World{Clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), GCP: GCP{EnforceIAM: true, RecommendFromUsage: recommend,
		Projects: []*Project{{ID: "acme-prod", Number: "111111111111",
			IAMPolicy: IAMPolicy{Bindings: []Binding{
				{Role: "roles/owner", Members: []string{"user:alice@acme.example"}},
				{Role: "roles/editor", Members: []string{sa("app"), sa("idle")}},
				{Role: "roles/compute.viewer", Members: []string{"user:carol@acme.example"}},
				{Role: "roles/compute.networkViewer", Members: []string{"user:erin@acme.example", "group:net@acme.example"}},
			}},
			ServiceAccounts: []*ServiceAccount{{Email: "app@acme-prod.iam.gserviceaccount.com"}, {Email: "idle@acme-prod.iam.gserviceaccount.com"}},
			Networks:        []*Network{{Name: "default"}},
			Firewalls:       []*Firewall{{Name: "allow-internal", Network: "default", SourceRanges: []string{"10.0.0.0/8"}, Allowed: []FirewallRule{{Protocol: "tcp"}}}},
			Recommendations: []*RoleRecommendation{{ID: "declared", Member: "user:alice@acme.example", Role: "roles/owner",
				NewRoles: []string{"roles/editor"}, LastRefresh: time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)}},
		}}}}
}

// recsByBinding lists the project's recommendations, keyed by "role member".
func recsByBinding(t *testing.T, c *gcpClients) map[string]*recommenderpb.Recommendation {
	t.Helper()
	out := map[string]*recommenderpb.Recommendation{}
	it := c.recommender.ListRecommendations(context.Background(), &recommenderpb.ListRecommendationsRequest{Parent: usageRecParent})
	for {
		r, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ov := r.GetContent().GetOverview().GetFields()
		out[ov["removedRole"].GetStringValue()+" "+ov["member"].GetStringValue()] = r
	}
}

func addedRoles(r *recommenderpb.Recommendation) []string {
	var out []string
	for _, v := range r.GetContent().GetOverview().GetFields()["addedRoles"].GetListValue().GetValues() {
		out = append(out, v.GetStringValue())
	}
	return out
}

// TestGCPRecommendFromUsage: after 90 days of observation the IAM recommender proposes,
// from what each member exercised through the official clients, to remove an unused role,
// to replace a role with the smallest one covering what was used, and nothing for a role
// used as a whole, a group, or a binding younger than 90 days; marking works as for the
// declared ones, and a marked recommendation stays while the ACTIVE ones follow the policy.
func TestGCPRecommendFromUsage(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, usageWorld(true))
	op := gcpClientsAs(t, srv, "")
	app := gcpClientsAs(t, srv, "serviceAccount:app@acme-prod.iam.gserviceaccount.com")
	carol := gcpClientsAs(t, srv, "user:carol@acme.example")
	erin := gcpClientsAs(t, srv, "user:erin@acme.example")
	day := 24 * time.Hour

	// Day 2: app uses its editor role once (a firewall rule), and never again.
	sim.Advance(2 * day)
	ins, err := app.firewalls.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
		Name: proto.String("app-once"), Network: proto.String("global/networks/default"), SourceRanges: []string{"10.1.0.0/16"},
		Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp"), Ports: []string{"443"}}}}})
	if err != nil || ins.Wait(ctx) != nil {
		t.Fatalf("app's early write: %v", err)
	}
	// Day 50: the operator grants newbie editor: too young for a recommendation at day 95.
	sim.Advance(48 * day)
	pol, err := op.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod"})
	if err != nil {
		t.Fatal(err)
	}
	pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/editor", Members: []string{"user:newbie@acme.example"}})
	if _, err := op.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: pol}); err != nil {
		t.Fatal(err)
	}
	if got := recsByBinding(t, op); len(got) != 1 || got["roles/owner user:alice@acme.example"] == nil {
		t.Fatalf("at day 50 only the declared recommendation, got %v", slices.Collect(maps.Keys(got)))
	}

	// Day 95: reads only.
	sim.Advance(45 * day)
	reads := []error{
		func() error {
			_, err := app.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: "acme-prod"}).Next()
			return err
		}(),
		func() error {
			_, err := app.iam.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/acme-prod"}).Next()
			return err
		}(),
		func() error {
			_, err := app.projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/acme-prod"})
			return err
		}(),
		func() error {
			_, err := carol.firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-internal"})
			return err
		}(),
		func() error {
			_, err := erin.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: "acme-prod"}).Next()
			return err
		}(),
	}
	if err := errors.Join(reads...); err != nil {
		t.Fatal(err)
	}

	// The admin API shows what was recorded: app's last write at day 2, its reads at day 95.
	resp, err := http.Get(srv.URL + "/_sim/gcp/usage")
	if err != nil {
		t.Fatal(err)
	}
	var usage map[string]map[string]map[string]time.Time
	err = json.NewDecoder(resp.Body).Decode(&usage)
	resp.Body.Close()
	appUse := usage["acme-prod"]["serviceAccount:app@acme-prod.iam.gserviceaccount.com"]
	if err != nil || appUse["compute.firewalls.list"].Sub(appUse["compute.firewalls.create"]) < 92*day {
		t.Errorf("usage: %v %v", appUse, err)
	}

	recs := recsByBinding(t, op)
	want := map[string][]string{ // "role member" → added roles (none: REMOVE_ROLE)
		"roles/owner user:alice@acme.example":                                {"roles/editor"}, // declared
		"roles/editor serviceAccount:app@acme-prod.iam.gserviceaccount.com":  {"roles/viewer"},
		"roles/editor serviceAccount:idle@acme-prod.iam.gserviceaccount.com": nil,
		"roles/compute.viewer user:carol@acme.example":                       {"roles/compute.networkViewer"},
	}
	if len(recs) != len(want) {
		t.Errorf("recommendations for %v, want %d", slices.Sorted(maps.Keys(recs)), len(want))
	}
	for key, roles := range want {
		r := recs[key]
		if r == nil {
			t.Errorf("no recommendation for %s", key)
			continue
		}
		subtype := "REMOVE_ROLE"
		if len(roles) > 0 {
			subtype = "REPLACE_ROLE"
		}
		if !slices.Equal(addedRoles(r), roles) || r.GetRecommenderSubtype() != subtype || r.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_ACTIVE {
			t.Errorf("%s: %s %v %v, want %s %v", key, r.GetRecommenderSubtype(), addedRoles(r), r.GetStateInfo().GetState(), subtype, roles)
		}
	}

	// The insight behind app's: the three permissions read at day 95, of editor's.
	appRec := recs["roles/editor serviceAccount:app@acme-prod.iam.gserviceaccount.com"]
	in, err := op.recommender.GetInsight(ctx, &recommenderpb.GetInsightRequest{Name: appRec.GetAssociatedInsights()[0].GetInsight()})
	if err != nil {
		t.Fatal(err)
	}
	var exercised []string
	for _, v := range in.GetContent().GetFields()["exercisedPermissions"].GetListValue().GetValues() {
		exercised = append(exercised, v.GetStructValue().GetFields()["permission"].GetStringValue())
	}
	slices.Sort(exercised)
	if !slices.Equal(exercised, []string{"compute.firewalls.list", "iam.serviceAccounts.list", "resourcemanager.projects.get"}) ||
		in.GetContent().GetFields()["currentTotalPermissionsCount"].GetStringValue() != fmt.Sprint(len(gcpRoles["roles/editor"])) ||
		!strings.HasPrefix(in.GetDescription(), "3 of the ") {
		t.Errorf("insight: %v %s", exercised, in.GetDescription())
	}

	// Stable: the same ids and etags when listed again.
	again := recsByBinding(t, op)
	for key, r := range recs {
		if a := again[key]; a.GetName() != r.GetName() || a.GetEtag() != r.GetEtag() {
			t.Errorf("%s changed between two lists: %s %s → %s %s", key, r.GetName(), r.GetEtag(), a.GetName(), a.GetEtag())
		}
	}

	// Applying app's: claimed, the policy changed, succeeded. It stays SUCCEEDED; idle's,
	// whose binding goes too, is dropped while ACTIVE.
	claimed, err := op.recommender.MarkRecommendationClaimed(ctx, &recommenderpb.MarkRecommendationClaimedRequest{Name: appRec.GetName(), Etag: appRec.GetEtag()})
	if err != nil {
		t.Fatal(err)
	}
	pol, err = op.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod"})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range pol.Bindings {
		if b.Role == "roles/editor" {
			b.Members = slices.DeleteFunc(b.Members, func(m string) bool { return strings.HasPrefix(m, "serviceAccount:") })
		}
	}
	pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"serviceAccount:app@acme-prod.iam.gserviceaccount.com"}})
	if _, err := op.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: pol}); err != nil {
		t.Fatal(err)
	}
	if _, err := op.recommender.MarkRecommendationSucceeded(ctx, &recommenderpb.MarkRecommendationSucceededRequest{Name: appRec.GetName(), Etag: claimed.GetEtag()}); err != nil {
		t.Fatal(err)
	}
	after := recsByBinding(t, op)
	if r := after["roles/editor serviceAccount:app@acme-prod.iam.gserviceaccount.com"]; r.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_SUCCEEDED || r.GetName() != appRec.GetName() {
		t.Errorf("app's after apply: %v", r)
	}
	if r := after["roles/editor serviceAccount:idle@acme-prod.iam.gserviceaccount.com"]; r != nil {
		t.Errorf("idle's binding is gone, its ACTIVE recommendation stayed: %v", r)
	}
	if r := after["roles/viewer serviceAccount:app@acme-prod.iam.gserviceaccount.com"]; r != nil {
		t.Errorf("a recommendation on app's new viewer binding, observed for minutes: %v", r)
	}
	// app reads still work with viewer; its editor write is refused.
	if _, err := app.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: "acme-prod"}).Next(); err != nil {
		t.Error(err)
	}
	if _, err := app.firewalls.Delete(ctx, &computepb.DeleteFirewallRequest{Project: "acme-prod", Firewall: "app-once"}); !denied(err, "compute.firewalls.delete") {
		t.Errorf("editor write with viewer: %v", err)
	}
}

// TestGCPRecommendFromUsageOff: without recommend_from_usage the recommender serves the
// declared recommendations only, however long the usage.
func TestGCPRecommendFromUsageOff(t *testing.T) {
	sim, srv := startGCP(t, usageWorld(false))
	sim.Advance(120 * 24 * time.Hour)
	if got := recsByBinding(t, gcpClientsAs(t, srv, "")); len(got) != 1 || got["roles/owner user:alice@acme.example"] == nil {
		t.Errorf("recommendations: %v", slices.Collect(maps.Keys(got)))
	}
}

func TestSmallestRoleCovering(t *testing.T) {
	for _, tc := range []struct {
		perms []string
		want  string
	}{
		{[]string{"compute.firewalls.list"}, "roles/compute.networkViewer"},
		{[]string{"compute.firewalls.list", "compute.sslCertificates.get"}, "roles/compute.viewer"},
		{[]string{"compute.firewalls.list", "iam.serviceAccounts.get"}, "roles/viewer"},
		{[]string{"compute.firewalls.create", "iam.serviceAccounts.get"}, "roles/editor"},
		{[]string{"resourcemanager.projects.setIamPolicy"}, "roles/resourcemanager.projectIamAdmin"},
		{[]string{"no.such.permission"}, ""},
	} {
		if got, _ := smallestRoleCovering(tc.perms); got != tc.want {
			t.Errorf("smallestRoleCovering(%v) = %s, want %s", tc.perms, got, tc.want)
		}
	}
	// Google's nesting: owner ⊇ editor ⊇ viewer, and setIamPolicy is owner's only.
	for _, p := range gcpRoles["roles/viewer"] {
		if !slices.Contains(gcpRoles["roles/editor"], p) {
			t.Errorf("editor lacks viewer's %s", p)
		}
	}
	for _, p := range gcpRoles["roles/editor"] {
		if !slices.Contains(gcpRoles["roles/owner"], p) {
			t.Errorf("owner lacks editor's %s", p)
		}
	}
	if slices.Contains(gcpRoles["roles/editor"], "resourcemanager.projects.setIamPolicy") || !slices.Contains(gcpRoles["roles/owner"], "resourcemanager.projects.setIamPolicy") {
		t.Error("setIamPolicy must be owner's, not editor's")
	}
}
