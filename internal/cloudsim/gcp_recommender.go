package cloudsim

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	recommenderpb "cloud.google.com/go/recommender/apiv1/recommenderpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The IAM recommender and the insight type its recommendations come from.
const (
	iamRecommender = "google.iam.policy.Recommender"
	iamInsightType = "google.iam.policy.Insight"
	// iamObservationDays is the usage window of IAM role recommendations.
	iamObservationDays = 90
)

// recommender implements google.cloud.recommender.v1.Recommender for the IAM recommender
// of projects: recommendations and their insights, read and marked; the other methods
// (configs, other recommenders' data) answer Unimplemented or NotFound.
type recommender struct {
	recommenderpb.UnimplementedRecommenderServer
	s *Sim
}

// validateRecommendations checks a project's recommendations: ids unique, a member and a
// role each, a state Google knows.
func validateRecommendations(p *Project) error {
	ids := map[string]bool{}
	for i, r := range p.Recommendations {
		if r.ID == "" || ids[r.ID] || strings.Contains(r.ID, "/") {
			return fmt.Errorf("recommendations[%d].id: %q is empty, holds a slash or appears twice", i, r.ID)
		}
		ids[r.ID] = true
		if r.Member == "" || !strings.HasPrefix(r.Role, "roles/") && !strings.Contains(r.Role, "/roles/") {
			return fmt.Errorf("recommendations[%d] (%s): member and role (roles/… or …/roles/…) are required", i, r.ID)
		}
		if _, ok := recommenderpb.RecommendationStateInfo_State_value[r.state()]; !ok || r.state() == "STATE_UNSPECIFIED" {
			return fmt.Errorf("recommendations[%d] (%s).state: %q is not ACTIVE, CLAIMED, SUCCEEDED, FAILED or DISMISSED", i, r.ID, r.State)
		}
	}
	return nil
}

func (r *RoleRecommendation) state() string {
	if r.State == "" {
		return "ACTIVE"
	}
	return r.State
}

func (r *RoleRecommendation) etag() string {
	if r.Etag == "" {
		sum := sha1.Sum([]byte("recommendation/" + r.ID))
		r.Etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	}
	return r.Etag
}

func (r *RoleRecommendation) subtype() string {
	if len(r.NewRoles) > 0 {
		return "REPLACE_ROLE"
	}
	return "REMOVE_ROLE"
}

// insightID is the id of the permissions-usage insight a recommendation comes from.
func (r *RoleRecommendation) insightID() string {
	sum := sha1.Sum([]byte("insight/" + r.ID))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// recommenderParent resolves "projects/P/locations/global/recommenders/R" (kind
// "recommenders") or ".../insightTypes/T" (kind "insightTypes"). A malformed name is
// InvalidArgument; a project the caller cannot see PermissionDenied, as elsewhere; a
// location other than global, or a recommender or insight type other than IAM's,
// NotFound.
func (s *Sim) recommenderParent(name, kind, want string) (*Project, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 6 || parts[0] != "projects" || parts[2] != "locations" || parts[4] != kind || parts[5] == "" {
		return nil, errf(kindInvalid, "", "Invalid resource name %q: want projects/PROJECT/locations/LOCATION/%s/ID.", name, kind)
	}
	p, err := s.projectFor(name)
	if err != nil {
		return nil, err
	}
	if parts[3] != "global" || parts[5] != want {
		return nil, errf(kindNotFound, "", "Requested entity was not found: %s.", name)
	}
	s.refreshUsageRecommendations(p) // those derived from usage, when the world asks for them (gcp_usage.go)
	return p, nil
}

// recommendationFor resolves ".../recommenders/google.iam.policy.Recommender/recommendations/ID".
func (s *Sim) recommendationFor(name string) (*Project, *RoleRecommendation, error) {
	parent, id, ok := strings.Cut(name, "/recommendations/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, nil, errf(kindInvalid, "", "Invalid recommendation name %q.", name)
	}
	p, err := s.recommenderParent(parent, "recommenders", iamRecommender)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range p.Recommendations {
		if r.ID == id {
			return p, r, nil
		}
	}
	return nil, nil, errf(kindNotFound, "", "Requested entity was not found: recommendation %s.", id)
}

// conditionOf is the condition expression of the binding that grants role to member on
// p ("" when unconditional or no longer granted), which Google's operations filter on.
func conditionOf(p *Project, member, role string) string {
	for _, b := range p.IAMPolicy.Bindings {
		if b.Role == role && slices.Contains(b.Members, member) && b.Condition != nil {
			return b.Condition.Expression
		}
	}
	return ""
}

// recommendationProto renders r as Google does: operations on the project's IAM policy
// (add the member to each new role's binding, remove it from the old one), an overview,
// a security impact and the insight behind it. Names are under the project number.
func recommendationProto(p *Project, r *RoleRecommendation) *recommenderpb.Recommendation {
	resource := "//cloudresourcemanager.googleapis.com/projects/" + p.ID
	cond := conditionOf(p, r.Member, r.Role)
	op := func(action, path string, value *structpb.Value, filters map[string]*structpb.Value) *recommenderpb.Operation {
		o := &recommenderpb.Operation{Action: action, ResourceType: "cloudresourcemanager.googleapis.com/Project",
			Resource: resource, Path: path, PathFilters: filters}
		if value != nil {
			o.PathValue = &recommenderpb.Operation_Value{Value: value}
		}
		return o
	}
	var ops []*recommenderpb.Operation
	for _, nr := range r.NewRoles {
		ops = append(ops, op("add", "/iamPolicy/bindings/*/members/-", structpb.NewStringValue(r.Member), map[string]*structpb.Value{
			"/iamPolicy/bindings/*/role":                 structpb.NewStringValue(nr),
			"/iamPolicy/bindings/*/condition/expression": structpb.NewStringValue(cond),
		}))
	}
	ops = append(ops, op("remove", "/iamPolicy/bindings/*/members/*", nil, map[string]*structpb.Value{
		"/iamPolicy/bindings/*/role":                 structpb.NewStringValue(r.Role),
		"/iamPolicy/bindings/*/members/*":            structpb.NewStringValue(r.Member),
		"/iamPolicy/bindings/*/condition/expression": structpb.NewStringValue(cond),
	}))
	added := make([]any, len(r.NewRoles))
	for i, nr := range r.NewRoles {
		added[i] = nr
	}
	overview, _ := structpb.NewStruct(map[string]any{
		"member": r.Member, "removedRole": r.Role, "addedRoles": added, "resourceName": resource,
		"minimumObservationPeriodInDays": fmt.Sprint(iamObservationDays),
	})
	desc := "This role has not been used during the observation window."
	if len(r.NewRoles) > 0 {
		desc = "Replace the current role with a smaller role to cover the permissions needed."
	}
	impact := &recommenderpb.Impact{Category: recommenderpb.Impact_SECURITY}
	if r.TotalPermissions > 0 {
		details, _ := structpb.NewStruct(map[string]any{
			"revokedIamPermissionsCount": max(0, r.TotalPermissions-len(r.ExercisedPermissions)-len(r.InferredPermissions))})
		impact.Projection = &recommenderpb.Impact_SecurityProjection{SecurityProjection: &recommenderpb.SecurityProjection{Details: details}}
	}
	base := "projects/" + p.Number + "/locations/global/"
	return &recommenderpb.Recommendation{
		Name:               base + "recommenders/" + iamRecommender + "/recommendations/" + r.ID,
		Description:        desc,
		RecommenderSubtype: r.subtype(),
		LastRefreshTime:    timestamppb.New(r.LastRefresh),
		PrimaryImpact:      impact,
		Priority:           recommenderpb.Recommendation_P4,
		Content: &recommenderpb.RecommendationContent{
			OperationGroups: []*recommenderpb.OperationGroup{{Operations: ops}},
			Overview:        overview,
		},
		StateInfo: &recommenderpb.RecommendationStateInfo{
			State:         recommenderpb.RecommendationStateInfo_State(recommenderpb.RecommendationStateInfo_State_value[r.state()]),
			StateMetadata: maps.Clone(r.StateMetadata),
		},
		Etag: r.etag(),
		AssociatedInsights: []*recommenderpb.Recommendation_InsightReference{
			{Insight: base + "insightTypes/" + iamInsightType + "/insights/" + r.insightID()}},
		TargetResources: []string{resource},
	}
}

// insightProto is the permissions-usage insight behind r: which of the role's
// permissions were exercised or are inferred, out of how many. Once r is claimed,
// succeeded or failed, Google freezes it as ACCEPTED.
func insightProto(p *Project, r *RoleRecommendation) *recommenderpb.Insight {
	perms := func(names []string) []any {
		out := make([]any, len(names))
		for i, n := range names {
			out[i] = map[string]any{"permission": n}
		}
		return out
	}
	content := map[string]any{
		"member": r.Member, "role": r.Role,
		"exercisedPermissions": perms(r.ExercisedPermissions), "inferredPermissions": perms(r.InferredPermissions),
		"condition": map[string]any{"expression": conditionOf(p, r.Member, r.Role), "title": "", "description": "", "location": ""},
	}
	desc := fmt.Sprintf("%d of the permissions in this role binding were used in the past %d days.", len(r.ExercisedPermissions), iamObservationDays)
	if r.TotalPermissions > 0 {
		// Google writes the count as a string (an int64 in JSON).
		content["currentTotalPermissionsCount"] = fmt.Sprint(r.TotalPermissions)
		desc = fmt.Sprintf("%d of the %d permissions in this role binding were used in the past %d days.",
			len(r.ExercisedPermissions), r.TotalPermissions, iamObservationDays)
	}
	st, _ := structpb.NewStruct(content)
	state := recommenderpb.InsightStateInfo_ACTIVE
	switch r.state() {
	case "CLAIMED", "SUCCEEDED", "FAILED":
		state = recommenderpb.InsightStateInfo_ACCEPTED
	case "DISMISSED":
		state = recommenderpb.InsightStateInfo_DISMISSED
	}
	sum := sha1.Sum([]byte(r.etag() + "/insight"))
	base := "projects/" + p.Number + "/locations/global/"
	return &recommenderpb.Insight{
		Name:              base + "insightTypes/" + iamInsightType + "/insights/" + r.insightID(),
		Description:       desc,
		TargetResources:   []string{"//cloudresourcemanager.googleapis.com/projects/" + p.ID},
		InsightSubtype:    "PERMISSIONS_USAGE",
		Content:           st,
		LastRefreshTime:   timestamppb.New(r.LastRefresh),
		ObservationPeriod: durationpb.New(iamObservationDays * 24 * time.Hour),
		StateInfo:         &recommenderpb.InsightStateInfo{State: state},
		Category:          recommenderpb.Insight_SECURITY,
		Severity:          recommenderpb.Insight_LOW,
		Etag:              `"` + hex.EncodeToString(sum[:8]) + `"`,
		AssociatedRecommendations: []*recommenderpb.Insight_RecommendationReference{
			{Recommendation: base + "recommenders/" + iamRecommender + "/recommendations/" + r.ID}},
	}
}

// ListRecommendations pages through a project's IAM recommendations that match filter
// (see parseRecFilter), 50 a page by default.
func (a *recommender) ListRecommendations(_ context.Context, req *recommenderpb.ListRecommendationsRequest) (*recommenderpb.ListRecommendationsResponse, error) {
	p, err := a.s.recommenderParent(req.GetParent(), "recommenders", iamRecommender)
	if err != nil {
		return nil, err
	}
	match, err := parseRecFilter(req.GetFilter(), []string{"stateInfo.state", "state_info.state", "recommenderSubtype", "priority"})
	if err != nil {
		return nil, err
	}
	var all []*recommenderpb.Recommendation
	for _, r := range p.Recommendations {
		rp := recommendationProto(p, r)
		if match(map[string]string{"stateInfo.state": r.state(), "state_info.state": r.state(),
			"recommenderSubtype": rp.RecommenderSubtype, "priority": rp.Priority.String()}) {
			all = append(all, rp)
		}
	}
	start, end, next, err := pageBounds(req.GetPageToken(), int(req.GetPageSize()), 50, 1000, len(all))
	if err != nil {
		return nil, err
	}
	return &recommenderpb.ListRecommendationsResponse{Recommendations: all[start:end], NextPageToken: next}, nil
}

// GetRecommendation returns one recommendation, in any state.
func (a *recommender) GetRecommendation(_ context.Context, req *recommenderpb.GetRecommendationRequest) (*recommenderpb.Recommendation, error) {
	p, r, err := a.s.recommendationFor(req.GetName())
	if err != nil {
		return nil, err
	}
	return recommendationProto(p, r), nil
}

// mark moves a recommendation to state when its current state is one of from and etag is
// its current etag (Google requires it), replacing the etag and the state metadata.
func (a *recommender) mark(name, etag string, metadata map[string]string, state string, from ...string) (*recommenderpb.Recommendation, error) {
	p, r, err := a.s.recommendationFor(name)
	if err != nil {
		return nil, err
	}
	if etag == "" {
		return nil, errf(kindInvalid, "", "Field etag is required.")
	}
	if etag != r.etag() {
		return nil, status.Errorf(codes.FailedPrecondition, "Etag %s does not match the current etag %s of recommendation %s.", etag, r.etag(), r.ID)
	}
	if !slices.Contains(from, r.state()) {
		return nil, status.Errorf(codes.FailedPrecondition, "Recommendation %s is %s: it cannot be marked %s.", r.ID, r.state(), state)
	}
	r.State, r.StateMetadata = state, maps.Clone(metadata)
	sum := sha1.Sum(fmt.Appendf(nil, "%s/%s/%d", r.Etag, state, a.s.nextID()))
	r.Etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	return recommendationProto(p, r), nil
}

// MarkRecommendationClaimed: someone is applying it (from ACTIVE, CLAIMED, SUCCEEDED or FAILED).
func (a *recommender) MarkRecommendationClaimed(_ context.Context, req *recommenderpb.MarkRecommendationClaimedRequest) (*recommenderpb.Recommendation, error) {
	return a.mark(req.GetName(), req.GetEtag(), req.GetStateMetadata(), "CLAIMED", "ACTIVE", "CLAIMED", "SUCCEEDED", "FAILED")
}

// MarkRecommendationSucceeded: it was applied (from ACTIVE, CLAIMED, SUCCEEDED or FAILED).
func (a *recommender) MarkRecommendationSucceeded(_ context.Context, req *recommenderpb.MarkRecommendationSucceededRequest) (*recommenderpb.Recommendation, error) {
	return a.mark(req.GetName(), req.GetEtag(), req.GetStateMetadata(), "SUCCEEDED", "ACTIVE", "CLAIMED", "SUCCEEDED", "FAILED")
}

// MarkRecommendationFailed: applying it failed (from ACTIVE, CLAIMED, SUCCEEDED or FAILED).
func (a *recommender) MarkRecommendationFailed(_ context.Context, req *recommenderpb.MarkRecommendationFailedRequest) (*recommenderpb.Recommendation, error) {
	return a.mark(req.GetName(), req.GetEtag(), req.GetStateMetadata(), "FAILED", "ACTIVE", "CLAIMED", "SUCCEEDED", "FAILED")
}

// MarkRecommendationDismissed: it will not be applied (from ACTIVE only).
func (a *recommender) MarkRecommendationDismissed(_ context.Context, req *recommenderpb.MarkRecommendationDismissedRequest) (*recommenderpb.Recommendation, error) {
	return a.mark(req.GetName(), req.GetEtag(), nil, "DISMISSED", "ACTIVE")
}

// ListInsights pages through a project's IAM permissions-usage insights (those behind its
// recommendations) that match filter on stateInfo.state or severity.
func (a *recommender) ListInsights(_ context.Context, req *recommenderpb.ListInsightsRequest) (*recommenderpb.ListInsightsResponse, error) {
	p, err := a.s.recommenderParent(req.GetParent(), "insightTypes", iamInsightType)
	if err != nil {
		return nil, err
	}
	match, err := parseRecFilter(req.GetFilter(), []string{"stateInfo.state", "state_info.state", "insightSubtype", "severity"})
	if err != nil {
		return nil, err
	}
	var all []*recommenderpb.Insight
	for _, r := range p.Recommendations {
		in := insightProto(p, r)
		st := in.GetStateInfo().GetState().String()
		if match(map[string]string{"stateInfo.state": st, "state_info.state": st, "insightSubtype": in.InsightSubtype, "severity": in.Severity.String()}) {
			all = append(all, in)
		}
	}
	start, end, next, err := pageBounds(req.GetPageToken(), int(req.GetPageSize()), 50, 1000, len(all))
	if err != nil {
		return nil, err
	}
	return &recommenderpb.ListInsightsResponse{Insights: all[start:end], NextPageToken: next}, nil
}

// GetInsight returns one insight.
func (a *recommender) GetInsight(_ context.Context, req *recommenderpb.GetInsightRequest) (*recommenderpb.Insight, error) {
	parent, id, ok := strings.Cut(req.GetName(), "/insights/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, errf(kindInvalid, "", "Invalid insight name %q.", req.GetName())
	}
	p, err := a.s.recommenderParent(parent, "insightTypes", iamInsightType)
	if err != nil {
		return nil, err
	}
	for _, r := range p.Recommendations {
		if r.insightID() == id {
			return insightProto(p, r), nil
		}
	}
	return nil, errf(kindNotFound, "", "Requested entity was not found: insight %s.", id)
}

// parseRecFilter reads a Recommender list filter, the part of AIP-160 the API documents:
// FIELD = VALUE comparisons of the given fields (values bare or quoted), joined by AND
// and OR (OR binding tighter, as AIP-160 has it) and grouped by parentheses. It returns
// the filter as a test of an item's field values; an empty filter matches everything.
func parseRecFilter(filter string, fields []string) (func(map[string]string) bool, error) {
	if strings.TrimSpace(filter) == "" {
		return func(map[string]string) bool { return true }, nil
	}
	toks := tokenizeFilter(filter)
	pos := 0
	bad := func(format string, args ...any) error {
		return errf(kindInvalid, "", "Invalid filter %q: %s", filter, fmt.Sprintf(format, args...))
	}
	peek := func() string {
		if pos < len(toks) {
			return toks[pos]
		}
		return ""
	}
	type test = func(map[string]string) bool
	var conj func() (test, error)
	factor := func() (test, error) {
		if peek() == "(" {
			pos++
			t, err := conj()
			if err != nil {
				return nil, err
			}
			if peek() != ")" {
				return nil, bad("missing )")
			}
			pos++
			return t, nil
		}
		if pos+3 > len(toks) {
			return nil, bad("want FIELD = VALUE")
		}
		field, op, value := toks[pos], toks[pos+1], strings.Trim(toks[pos+2], `"`)
		if !slices.Contains(fields, field) {
			return nil, bad("unsupported field %q", field)
		}
		if op != "=" {
			return nil, bad("unsupported operator %q", op)
		}
		pos += 3
		return func(v map[string]string) bool { return v[field] == value }, nil
	}
	disj := func() (test, error) {
		t, err := factor()
		for err == nil && peek() == "OR" {
			pos++
			var u test
			if u, err = factor(); err == nil {
				prev := t
				t = func(v map[string]string) bool { return prev(v) || u(v) }
			}
		}
		return t, err
	}
	conj = func() (test, error) {
		t, err := disj()
		for err == nil && peek() == "AND" {
			pos++
			var u test
			if u, err = disj(); err == nil {
				prev := t
				t = func(v map[string]string) bool { return prev(v) && u(v) }
			}
		}
		return t, err
	}
	t, err := conj()
	if err == nil && pos < len(toks) {
		err = bad("unexpected %q", toks[pos])
	}
	return t, err
}

// tokenizeFilter splits a filter into words, quoted strings, parentheses and "=".
func tokenizeFilter(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '(' || c == ')' || c == '=':
			toks = append(toks, string(c))
			i++
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				j = len(s) - i - 1
			}
			toks = append(toks, s[i:i+j+2])
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n()=\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}
