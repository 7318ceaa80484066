package gcp

import (
	"context"
	"fmt"
	"strconv"

	recommenderpb "cloud.google.com/go/recommender/apiv1/recommenderpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/warden-sec/warden/internal/gcpapi"
)

// The IAM recommender: role removals and replacements Google derives from 90 days of a
// principal's use of its role bindings, and the permissions-usage insights behind them.
const (
	iamRecommender = "google.iam.policy.Recommender"
	iamInsightType = "google.iam.policy.Insight"
)

// recommendationsFor reads the ACTIVE IAM recommendations of a project as the policy
// resource's attributes.recommendations (issue 29), each with the usage its insight
// counts. A failed list leaves recommendations_error instead, so that nothing is concluded
// from an empty list, and is returned for the scope to report. Failed insight reads leave
// the counts null and are returned likewise.
func (c *Collector) recommendationsFor(ctx context.Context, cl *clients, project string) (attrs map[string]any, errs []error) {
	recs, err := gcpapi.Pages(ctx, cl.api, "recommender.ListRecommendations", func(ctx context.Context, token string, items *[]*recommenderpb.Recommendation) (string, error) {
		it := cl.api.Recommender.ListRecommendations(ctx, &recommenderpb.ListRecommendationsRequest{
			Parent: "projects/" + project + "/locations/global/recommenders/" + iamRecommender,
			Filter: "stateInfo.state = ACTIVE"}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, c.pageSize(1000), token, items)
	})
	if err != nil {
		return map[string]any{"recommendations_error": err.Error()}, []error{err}
	}
	var insights map[string]*recommenderpb.Insight
	if len(recs) > 0 {
		found, err := gcpapi.Pages(ctx, cl.api, "recommender.ListInsights", func(ctx context.Context, token string, items *[]*recommenderpb.Insight) (string, error) {
			it := cl.api.Recommender.ListInsights(ctx, &recommenderpb.ListInsightsRequest{
				Parent: "projects/" + project + "/locations/global/insightTypes/" + iamInsightType}, gcpapi.NoRetry())
			return gcpapi.NextPage(it, c.pageSize(1000), token, items)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("IAM recommendations' insights: %w", err))
		}
		insights = make(map[string]*recommenderpb.Insight, len(found))
		for _, in := range found {
			insights[in.GetName()] = in
		}
	}
	list := make([]any, 0, len(recs))
	for _, r := range recs {
		list = append(list, recommendationAttr(r, insights))
	}
	return map[string]any{"recommendations": list}, errs
}

// recommendationAttr is one recommendation as the resource model holds it. Member, role
// and new roles come from its operations (the overview is descriptive); the permission
// counts from its first insight that gives them, null when none does.
func recommendationAttr(r *recommenderpb.Recommendation, insights map[string]*recommenderpb.Insight) map[string]any {
	member, role, newRoles := "", "", []any{}
	for _, g := range r.GetContent().GetOperationGroups() {
		for _, op := range g.GetOperations() {
			f := op.GetPathFilters()
			switch op.GetAction() {
			case "remove":
				member = f["/iamPolicy/bindings/*/members/*"].GetStringValue()
				role = f["/iamPolicy/bindings/*/role"].GetStringValue()
			case "add":
				newRoles = append(newRoles, f["/iamPolicy/bindings/*/role"].GetStringValue())
			}
		}
	}
	var exercised, total, inferred any
	for _, ref := range r.GetAssociatedInsights() {
		in := insights[ref.GetInsight()]
		if in == nil {
			continue
		}
		content := in.GetContent().GetFields()
		if v, ok := content["exercisedPermissions"]; ok {
			exercised = len(v.GetListValue().GetValues())
		}
		if v, ok := content["inferredPermissions"]; ok {
			inferred = len(v.GetListValue().GetValues())
		}
		total = count(content["currentTotalPermissionsCount"])
		break
	}
	var refreshed any
	if r.GetLastRefreshTime() != nil {
		refreshed = rfc3339(r.GetLastRefreshTime().AsTime())
	}
	return map[string]any{
		"name": r.GetName(), "etag": r.GetEtag(), "state": r.GetStateInfo().GetState().String(),
		"subtype": r.GetRecommenderSubtype(), "member": member, "role": role, "new_roles": newRoles,
		"description": r.GetDescription(), "last_refresh": refreshed,
		"exercised_permissions": exercised, "inferred_permissions": inferred, "total_permissions": total,
	}
}

// count reads an int64 Google writes as a JSON string ("412") or a number; nil when
// absent or unreadable.
func count(v *structpb.Value) any {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		if n, err := strconv.Atoi(k.StringValue); err == nil {
			return n
		}
	case *structpb.Value_NumberValue:
		return int(k.NumberValue)
	}
	return nil
}

// recommenderPermissions are the IAM permissions of this file's reads.
func recommenderPermissions() []string {
	return []string{"recommender.iamPolicyInsights.list", "recommender.iamPolicyRecommendations.list"}
}
