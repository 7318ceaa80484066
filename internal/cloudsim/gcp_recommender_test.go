package cloudsim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	recapi "cloud.google.com/go/recommender/apiv1"
	recommenderpb "cloud.google.com/go/recommender/apiv1/recommenderpb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const recParent = "projects/acme-prod/locations/global/recommenders/google.iam.policy.Recommender"

// recommenderWorld is the GCP test world with IAM recommendations on acme-prod: a removal,
// a replacement, a conditional binding's removal and ones no longer active.
func recommenderWorld() *World {
	w := gcpTestWorld()
	p := w.GCP.Projects[0]
	p.IAMPolicy.Bindings = append(p.IAMPolicy.Bindings, Binding{Role: "roles/storage.admin",
		Members: []string{"user:bob@acme.example"}, Condition: &Expr{Title: "t", Expression: "request.time < timestamp('2030-01-01T00:00:00Z')"}})
	t0 := time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)
	p.Recommendations = []*RoleRecommendation{
		{ID: "r-editor", Member: "serviceAccount:111111111111-compute@developer.gserviceaccount.com", Role: "roles/editor",
			NewRoles: []string{"roles/compute.viewer", "roles/logging.logWriter"}, ExercisedPermissions: []string{"compute.instances.get", "compute.instances.list", "logging.logEntries.create"},
			TotalPermissions: 412, LastRefresh: t0},
		{ID: "r-owner", Member: "user:alice@acme.example", Role: "roles/owner", TotalPermissions: 9800, LastRefresh: t0},
		{ID: "r-storage", Member: "user:bob@acme.example", Role: "roles/storage.admin", LastRefresh: t0},
		{ID: "r-done", Member: "user:carol@acme.example", Role: "roles/viewer", State: "SUCCEEDED", LastRefresh: t0},
		{ID: "r-no", Member: "user:dan@acme.example", Role: "roles/viewer", State: "DISMISSED", LastRefresh: t0},
	}
	for i := range 3 { // enough ACTIVE ones for several pages
		p.Recommendations = append(p.Recommendations, &RoleRecommendation{ID: fmt.Sprintf("r-extra-%d", i),
			Member: fmt.Sprintf("user:u%d@acme.example", i), Role: "roles/viewer", LastRefresh: t0})
	}
	return w
}

func recommenderClient(t *testing.T, srv *Server) *recapi.Client {
	t.Helper()
	c, err := recapi.NewClient(context.Background(), option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func listRecs(ctx context.Context, c *recapi.Client, req *recommenderpb.ListRecommendationsRequest) ([]*recommenderpb.Recommendation, error) {
	var out []*recommenderpb.Recommendation
	it := c.ListRecommendations(ctx, req)
	for {
		r, err := it.Next()
		if err == iterator.Done {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

func recIDs(recs []*recommenderpb.Recommendation) []string {
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.GetName()[strings.LastIndexByte(r.GetName(), '/')+1:])
	}
	return ids
}

// TestGCPRecommenderList lists with the official client: pages of two, the state and
// subtype filters, and the errors of a bad parent, filter or page token.
func TestGCPRecommenderList(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, recommenderWorld())
	c := recommenderClient(t, srv)

	// Page by page through the token the server hands out: 6 ACTIVE ones, 2 a page.
	pager := iterator.NewPager(c.ListRecommendations(ctx, &recommenderpb.ListRecommendationsRequest{Parent: recParent,
		Filter: `stateInfo.state = ACTIVE`}), 2, "")
	var active []*recommenderpb.Recommendation
	pages := 0
	for {
		var page []*recommenderpb.Recommendation
		next, err := pager.NextPage(&page)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("page of %d, asked for 2", len(page))
		}
		pages++
		active = append(active, page...)
		if next == "" {
			break
		}
	}
	if pages != 3 {
		t.Errorf("%d pages, want 3", pages)
	}
	if got, want := recIDs(active), []string{"r-editor", "r-owner", "r-storage", "r-extra-0", "r-extra-1", "r-extra-2"}; !slices.Equal(got, want) {
		t.Fatalf("ACTIVE recommendations %v, want %v", got, want)
	}

	tests := []struct {
		filter string
		want   []string
	}{
		{"", []string{"r-editor", "r-owner", "r-storage", "r-done", "r-no", "r-extra-0", "r-extra-1", "r-extra-2"}},
		{`stateInfo.state = "SUCCEEDED" OR stateInfo.state = DISMISSED`, []string{"r-done", "r-no"}},
		{`stateInfo.state = ACTIVE AND recommenderSubtype = REPLACE_ROLE`, []string{"r-editor"}},
		{`state_info.state = ACTIVE AND (priority = P1 OR priority = P4) AND recommenderSubtype = REMOVE_ROLE`,
			[]string{"r-owner", "r-storage", "r-extra-0", "r-extra-1", "r-extra-2"}},
	}
	for _, tc := range tests {
		got, err := listRecs(ctx, c, &recommenderpb.ListRecommendationsRequest{Parent: recParent, Filter: tc.filter})
		if err != nil || !slices.Equal(recIDs(got), tc.want) {
			t.Errorf("filter %q: %v %v, want %v", tc.filter, recIDs(got), err, tc.want)
		}
	}
	// The project number names the same project.
	if got, err := listRecs(ctx, c, &recommenderpb.ListRecommendationsRequest{
		Parent: "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender", Filter: "stateInfo.state = ACTIVE"}); err != nil || len(got) != 6 {
		t.Errorf("by project number: %d %v", len(got), err)
	}

	errs := []struct {
		name string
		req  *recommenderpb.ListRecommendationsRequest
		want codes.Code
	}{
		{"unknown project", &recommenderpb.ListRecommendationsRequest{Parent: "projects/nope/locations/global/recommenders/google.iam.policy.Recommender"}, codes.PermissionDenied},
		{"other recommender", &recommenderpb.ListRecommendationsRequest{Parent: "projects/acme-prod/locations/global/recommenders/google.iam.nope"}, codes.NotFound},
		{"regional", &recommenderpb.ListRecommendationsRequest{Parent: "projects/acme-prod/locations/us-east1/recommenders/google.iam.policy.Recommender"}, codes.NotFound},
		{"malformed parent", &recommenderpb.ListRecommendationsRequest{Parent: "projects/acme-prod/recommenders/google.iam.policy.Recommender"}, codes.InvalidArgument},
		{"unknown filter field", &recommenderpb.ListRecommendationsRequest{Parent: recParent, Filter: "member = x"}, codes.InvalidArgument},
		{"broken filter", &recommenderpb.ListRecommendationsRequest{Parent: recParent, Filter: "stateInfo.state = ACTIVE AND"}, codes.InvalidArgument},
		{"bad token", &recommenderpb.ListRecommendationsRequest{Parent: recParent, PageToken: "zz"}, codes.InvalidArgument},
	}
	for _, tc := range errs {
		if _, err := listRecs(ctx, c, tc.req); status.Code(err) != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestGCPRecommenderShape: a replacement and a removal render as Google's IAM
// recommender does: subtype, operations on the project's policy (the binding's condition
// in the filters), overview, security impact, the insight behind it.
func TestGCPRecommenderShape(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, recommenderWorld())
	c := recommenderClient(t, srv)

	r, err := c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: recParent + "/recommendations/r-editor"})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetName() != "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/r-editor" ||
		r.GetRecommenderSubtype() != "REPLACE_ROLE" || r.GetPrimaryImpact().GetCategory() != recommenderpb.Impact_SECURITY ||
		r.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_ACTIVE || r.GetEtag() == "" ||
		!r.GetLastRefreshTime().AsTime().Equal(time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC)) {
		t.Fatalf("recommendation: %v", r)
	}
	ops := r.GetContent().GetOperationGroups()[0].GetOperations()
	if len(ops) != 3 {
		t.Fatalf("operations: %v", ops)
	}
	for i, want := range []struct{ action, path, role string }{
		{"add", "/iamPolicy/bindings/*/members/-", "roles/compute.viewer"},
		{"add", "/iamPolicy/bindings/*/members/-", "roles/logging.logWriter"},
		{"remove", "/iamPolicy/bindings/*/members/*", "roles/editor"},
	} {
		op := ops[i]
		if op.GetAction() != want.action || op.GetPath() != want.path || op.GetResource() != "//cloudresourcemanager.googleapis.com/projects/acme-prod" ||
			op.GetResourceType() != "cloudresourcemanager.googleapis.com/Project" ||
			op.GetPathFilters()["/iamPolicy/bindings/*/role"].GetStringValue() != want.role {
			t.Errorf("operation %d: %v, want %+v", i, op, want)
		}
	}
	member := "serviceAccount:111111111111-compute@developer.gserviceaccount.com"
	if ops[0].GetValue().GetStringValue() != member || ops[2].GetPathFilters()["/iamPolicy/bindings/*/members/*"].GetStringValue() != member {
		t.Errorf("member: %v", ops)
	}
	ov := r.GetContent().GetOverview().AsMap()
	if ov["removedRole"] != "roles/editor" || ov["member"] != member || len(ov["addedRoles"].([]any)) != 2 {
		t.Errorf("overview: %v", ov)
	}

	// The insight behind it: 3 of 412 permissions used.
	in, err := c.GetInsight(ctx, &recommenderpb.GetInsightRequest{Name: r.GetAssociatedInsights()[0].GetInsight()})
	if err != nil {
		t.Fatal(err)
	}
	content := in.GetContent().AsMap()
	if in.GetInsightSubtype() != "PERMISSIONS_USAGE" || len(content["exercisedPermissions"].([]any)) != 3 ||
		content["currentTotalPermissionsCount"] != "412" || in.GetObservationPeriod().AsDuration() != 90*24*time.Hour ||
		in.GetAssociatedRecommendations()[0].GetRecommendation() != r.GetName() ||
		in.GetDescription() != "3 of the 412 permissions in this role binding were used in the past 90 days." {
		t.Errorf("insight: %v", in)
	}
	insights := c.ListInsights(ctx, &recommenderpb.ListInsightsRequest{
		Parent: "projects/acme-prod/locations/global/insightTypes/google.iam.policy.Insight", Filter: "stateInfo.state = ACTIVE"})
	n := 0
	for {
		_, err := insights.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 6 { // the SUCCEEDED one's insight is ACCEPTED, the DISMISSED one's DISMISSED
		t.Errorf("%d ACTIVE insights, want 6", n)
	}

	// A removal from a conditional binding filters on the condition.
	r, err = c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: recParent + "/recommendations/r-storage"})
	if err != nil {
		t.Fatal(err)
	}
	ops = r.GetContent().GetOperationGroups()[0].GetOperations()
	if r.GetRecommenderSubtype() != "REMOVE_ROLE" || len(ops) != 1 || ops[0].GetAction() != "remove" ||
		ops[0].GetPathFilters()["/iamPolicy/bindings/*/condition/expression"].GetStringValue() != "request.time < timestamp('2030-01-01T00:00:00Z')" {
		t.Errorf("conditional removal: %v", r)
	}
	for name, want := range map[string]codes.Code{
		recParent + "/recommendations/nope": codes.NotFound,
		"projects/nope/locations/global/recommenders/google.iam.policy.Recommender/recommendations/r-owner": codes.PermissionDenied,
		"projects/acme-prod/locations/global/recommenders/google.iam.nope/recommendations/r-owner":          codes.NotFound,
		recParent + "/r-owner": codes.InvalidArgument,
	} {
		if _, err := c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: name}); status.Code(err) != want {
			t.Errorf("get %s: %v, want %v", name, err, want)
		}
	}
}

// TestGCPRecommenderMark walks a recommendation ACTIVE → CLAIMED → SUCCEEDED → FAILED,
// each mark with the etag the last one returned; a stale or missing etag, and marks
// from states Google refuses them in, are refused without changing anything.
func TestGCPRecommenderMark(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, recommenderWorld())
	c := recommenderClient(t, srv)
	name := recParent + "/recommendations/r-owner"

	r, err := c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	first := r.GetEtag()
	meta := map[string]string{"warden": "run-1"}
	claimed, err := c.MarkRecommendationClaimed(ctx, &recommenderpb.MarkRecommendationClaimedRequest{Name: name, Etag: first, StateMetadata: meta})
	if err != nil || claimed.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_CLAIMED ||
		claimed.GetEtag() == first || claimed.GetStateInfo().GetStateMetadata()["warden"] != "run-1" {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	// Stale: the etag from before the claim.
	if _, err := c.MarkRecommendationSucceeded(ctx, &recommenderpb.MarkRecommendationSucceededRequest{Name: name, Etag: first}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("succeeded with a stale etag: %v, want FailedPrecondition", err)
	}
	if _, err := c.MarkRecommendationSucceeded(ctx, &recommenderpb.MarkRecommendationSucceededRequest{Name: name}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("succeeded without an etag: %v, want InvalidArgument", err)
	}
	done, err := c.MarkRecommendationSucceeded(ctx, &recommenderpb.MarkRecommendationSucceededRequest{Name: name, Etag: claimed.GetEtag()})
	if err != nil || done.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_SUCCEEDED || done.GetEtag() == claimed.GetEtag() {
		t.Fatalf("succeeded: %v %v", done, err)
	}
	// Google lets a SUCCEEDED recommendation be marked FAILED (and back), never DISMISSED.
	if _, err := c.MarkRecommendationDismissed(ctx, &recommenderpb.MarkRecommendationDismissedRequest{Name: name, Etag: done.GetEtag()}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("dismissed after success: %v, want FailedPrecondition", err)
	}
	failed, err := c.MarkRecommendationFailed(ctx, &recommenderpb.MarkRecommendationFailedRequest{Name: name, Etag: done.GetEtag()})
	if err != nil || failed.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_FAILED {
		t.Fatalf("failed: %v %v", failed, err)
	}
	got, err := c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: name})
	if err != nil || got.GetEtag() != failed.GetEtag() || got.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_FAILED {
		t.Fatalf("get after marks: %v %v", got, err)
	}
	// No longer ACTIVE: out of the ACTIVE list, its insight ACCEPTED.
	active, err := listRecs(ctx, c, &recommenderpb.ListRecommendationsRequest{Parent: recParent, Filter: "stateInfo.state = ACTIVE"})
	if err != nil || slices.Contains(recIDs(active), "r-owner") {
		t.Fatalf("ACTIVE list after marks: %v %v", recIDs(active), err)
	}
	in, err := c.GetInsight(ctx, &recommenderpb.GetInsightRequest{Name: got.GetAssociatedInsights()[0].GetInsight()})
	if err != nil || in.GetStateInfo().GetState() != recommenderpb.InsightStateInfo_ACCEPTED {
		t.Fatalf("insight after marks: %v %v", in, err)
	}
	// A DISMISSED one cannot be claimed.
	no, err := c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: recParent + "/recommendations/r-no"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MarkRecommendationClaimed(ctx, &recommenderpb.MarkRecommendationClaimedRequest{Name: no.GetName(), Etag: no.GetEtag()}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("claim a dismissed one: %v, want FailedPrecondition", err)
	}
	if n := sim.Calls()["recommender:MarkRecommendationClaimed"].Calls; n != 2 {
		t.Errorf("recommender:MarkRecommendationClaimed counted %d times, want 2", n)
	}
}

// TestGCPRecommenderWorld reads recommendations from a world file and refuses malformed
// ones with their place.
func TestGCPRecommenderWorld(t *testing.T) {
	const head = "gcp:\n  projects:\n    - id: p\n      number: \"1\"\n      iam_policy: {}\n      recommendations:\n"
	w, err := ParseWorld([]byte(head + `        - id: r1
          member: serviceAccount:ci@p.iam.gserviceaccount.com
          role: roles/editor
          new_roles: [roles/viewer]
          exercised_permissions: [resourcemanager.projects.get]
          total_permissions: 412
          last_refresh: 2026-12-05T07:00:00Z
`))
	if err != nil {
		t.Fatal(err)
	}
	r := w.GCP.Projects[0].Recommendations[0]
	if r.subtype() != "REPLACE_ROLE" || r.state() != "ACTIVE" || r.TotalPermissions != 412 || len(r.ExercisedPermissions) != 1 {
		t.Errorf("recommendation: %+v", r)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"        - {id: r1, member: user:a@x, role: roles/owner, state: DONE}\n", `state: "DONE"`},
		{"        - {id: r1, member: user:a@x, role: owner}\n", "member and role"},
		{"        - {id: r1, member: user:a@x, role: roles/owner}\n        - {id: r1, member: user:b@x, role: roles/owner}\n", "appears twice"},
	} {
		if _, err := ParseWorld([]byte(head + tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

// TestGCPRecommenderFaults: a fault on the recommender of a project applies to names
// under its number too, as Google's names are; the IAM admin API is not affected.
func TestGCPRecommenderFaults(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, recommenderWorld())
	if err := sim.SetFaults([]Fault{{Service: "recommender", Account: "acme-prod", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	c := recommenderClient(t, srv)
	name := "projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/r-owner"
	if _, err := c.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: name}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("get under the project number: %v, want PermissionDenied", err)
	}
	if _, err := listRecs(ctx, c, &recommenderpb.ListRecommendationsRequest{Parent: recParent}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("list: %v, want PermissionDenied", err)
	}
	if got := sim.Calls()["recommender:GetRecommendation"].AccessDenied; got != 1 {
		t.Errorf("denied GetRecommendation counted %d times, want 1", got)
	}
}
