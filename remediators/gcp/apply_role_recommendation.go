package gcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/recommender/apiv1/recommenderpb"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// ApplyRoleRecommendation applies one of Google's IAM recommendations to a project's
// policy (gcp.iam.apply_role_recommendation, parameters role, member, new_roles and
// recommendation, which WARDEN-GCP-IAM-021's finding carries): the member leaves the
// role's unconditional binding and, for a replacement, joins the smaller roles Google
// suggests. The recommendation must still be ACTIVE when the fix runs: it is marked
// claimed (with its current etag) before the write, then succeeded, or failed when the
// write fails. Rollback gives the member its role back and takes away the roles the fix
// added; the recommendation keeps its final state. The before-state is the binding's and
// the recommendation's name only, so that a rollback is judged by the binding alone.
type ApplyRoleRecommendation struct{ c *gcpapi.Clients }

// NewApplyRoleRecommendation returns the fix; c may be nil for planning only.
func NewApplyRoleRecommendation(c *gcpapi.Clients) *ApplyRoleRecommendation {
	return &ApplyRoleRecommendation{c}
}

// recommendationBefore is the part: one member's role in one project, the roles that
// replace it, which of them it already held, and the recommendation.
type recommendationBefore struct {
	Resource       string   `json:"resource"` // projects/P
	Role           string   `json:"role"`
	Member         string   `json:"member"`
	NewRoles       []string `json:"new_roles"`
	HeldNewRoles   []string `json:"held_new_roles"`
	Recommendation string   `json:"recommendation"`
}

// Spec implements remediators.Remediator.
func (*ApplyRoleRecommendation) Spec() remediators.Spec {
	return remediators.Spec{
		Action: "gcp.iam.apply_role_recommendation",
		Params: []remediators.Param{
			{Name: "role", Required: true, Doc: `the role the recommendation removes or replaces ("roles/editor")`},
			{Name: "member", Required: true, Doc: `the member it concerns ("serviceAccount:ci@p.iam.gserviceaccount.com")`},
			{Name: "new_roles", Doc: "the roles that replace it (a list; none: the role is removed)"},
			{Name: "recommendation", Required: true, Doc: "the recommendation's full name (projects/N/locations/global/recommenders/google.iam.policy.Recommender/recommendations/ID)"},
		},
		ResourceTypes: []string{"gcp.project.iam_policy"},
		Rollback:      remediators.Rollback{Possible: true},
		Permissions: remediators.Permissions{GCP: []string{
			"recommender.iamPolicyRecommendations.get", "recommender.iamPolicyRecommendations.update",
			"resourcemanager.projects.getIamPolicy", "resourcemanager.projects.setIamPolicy"}},
	}
}

// Targets is the member's unconditional binding of the role while it holds it:
// "ROLE/MEMBER".
func (*ApplyRoleRecommendation) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	role, err := attr.Param(params, "role", true)
	if err != nil {
		return nil, err
	}
	member, err := attr.Param(params, "member", true)
	if err != nil {
		return nil, err
	}
	name, err := attr.Param(params, "recommendation", true)
	if err != nil {
		return nil, err
	}
	newRoles := []string{}
	if v, ok := params["new_roles"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("new_roles: want a list of roles, got %T", v)
		}
		for _, x := range list {
			r, ok := x.(string)
			if !ok || r == "" {
				return nil, fmt.Errorf("new_roles: want role names, got %v", x)
			}
			newRoles = append(newRoles, r)
		}
	}
	resource, err := resourceName(res.UID, "cloudresourcemanager.googleapis.com")
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, b := range attr.Maps(res.Attributes, "bindings") {
		if attr.Map(b, "condition") == nil && slices.Contains(attr.Strings(b, "members"), member) {
			held[attr.String(b, "role")] = true
		}
	}
	if !held[role] {
		return nil, nil
	}
	b := recommendationBefore{Resource: resource, Role: role, Member: member, NewRoles: newRoles, HeldNewRoles: []string{}, Recommendation: name}
	for _, nr := range newRoles {
		if held[nr] {
			b.HeldNewRoles = append(b.HeldNewRoles, nr)
		}
	}
	before, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: role + "/" + member, Before: before}}, nil
}

// Apply claims the recommendation, changes the binding, and marks the outcome;
// ErrConverged when the member no longer holds the role and holds every new one.
func (r *ApplyRoleRecommendation) Apply(ctx context.Context, a remediators.Action) error {
	b, err := r.before(a)
	if err != nil {
		return err
	}
	scope := projectOf(b.Resource)
	// Converged is asked first, without a write: a second Apply must not claim a
	// recommendation already marked (its etag changed with the mark).
	p, err := readPolicy(ctx, r.c, b.Resource)
	if err != nil {
		return err
	}
	if !holds(p, b.Role, b.Member) && holdsAll(p, b.NewRoles, b.Member) {
		return remediators.ErrConverged
	}
	var current *recommenderpb.Recommendation
	err = call(ctx, r.c, scope, "recommender.GetRecommendation", func(ctx context.Context) (err error) {
		current, err = r.c.Recommender.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: b.Recommendation}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return fmt.Errorf("read recommendation %s: %w", b.Recommendation, err)
	}
	if st := current.GetStateInfo().GetState(); st != recommenderpb.RecommendationStateInfo_ACTIVE {
		return fmt.Errorf("recommendation %s is %s now, not ACTIVE: plan again", b.Recommendation, st)
	}
	var etag string
	err = call(ctx, r.c, scope, "recommender.MarkRecommendationClaimed", func(ctx context.Context) error {
		rec, err := r.c.Recommender.MarkRecommendationClaimed(ctx, &recommenderpb.MarkRecommendationClaimedRequest{Name: b.Recommendation, Etag: current.GetEtag()}, gcpapi.NoRetry())
		if err == nil {
			etag = rec.GetEtag()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("claim recommendation %s: %w", b.Recommendation, err)
	}
	werr := modifyPolicy(ctx, r.c, b.Resource, "apply "+b.Recommendation, func(p *iampb.Policy) bool {
		changed := removeMember(p, b.Role, nil, b.Member)
		for _, nr := range b.NewRoles {
			changed = addMember(p, nr, nil, b.Member) || changed
		}
		return changed
	}, true)
	mark, markName := "recommender.MarkRecommendationSucceeded", "succeeded"
	if werr != nil && werr != remediators.ErrConverged {
		mark, markName = "recommender.MarkRecommendationFailed", "failed"
	}
	merr := call(ctx, r.c, scope, mark, func(ctx context.Context) error {
		var err error
		if markName == "failed" {
			_, err = r.c.Recommender.MarkRecommendationFailed(ctx, &recommenderpb.MarkRecommendationFailedRequest{Name: b.Recommendation, Etag: etag}, gcpapi.NoRetry())
		} else {
			_, err = r.c.Recommender.MarkRecommendationSucceeded(ctx, &recommenderpb.MarkRecommendationSucceededRequest{Name: b.Recommendation, Etag: etag}, gcpapi.NoRetry())
		}
		return err
	})
	if werr != nil {
		return werr
	}
	if merr != nil {
		return fmt.Errorf("the binding is changed, but marking recommendation %s %s failed: %w", b.Recommendation, markName, merr)
	}
	return nil
}

// Rollback gives the member its role back and takes away the new roles it did not hold
// before.
func (r *ApplyRoleRecommendation) Rollback(ctx context.Context, a remediators.Action) error {
	b, err := r.before(a)
	if err != nil {
		return err
	}
	return modifyPolicy(ctx, r.c, b.Resource, "roll back "+b.Recommendation, func(p *iampb.Policy) bool {
		changed := addMember(p, b.Role, nil, b.Member)
		for _, nr := range b.NewRoles {
			if !slices.Contains(b.HeldNewRoles, nr) {
				changed = removeMember(p, nr, nil, b.Member) || changed
			}
		}
		return changed
	}, false)
}

func (r *ApplyRoleRecommendation) before(a remediators.Action) (recommendationBefore, error) {
	var b recommendationBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, err
	}
	if b.Resource == "" || b.Role == "" || b.Member == "" || b.Recommendation == "" {
		return b, fmt.Errorf("action %s: before-state names no binding or recommendation", a.ID)
	}
	if r.c == nil || r.c.Recommender == nil {
		return b, errNoClients
	}
	return b, nil
}

// projectOf is the pacing scope of a policy's resource name: "projects/P" → "P"; a
// folder's or organisation's name stays as it is.
func projectOf(resource string) string {
	if p, ok := strings.CutPrefix(resource, "projects/"); ok {
		return p
	}
	return resource
}

// readPolicy reads the IAM policy of resource. Version 3: conditional bindings are read
// as they are, and written back so.
func readPolicy(ctx context.Context, c *gcpapi.Clients, resource string) (*iampb.Policy, error) {
	get, _, err := policyCalls(c, resource)
	if err != nil {
		return nil, err
	}
	var p *iampb.Policy
	err = call(ctx, c, projectOf(resource), "cloudresourcemanager.GetIamPolicy", func(ctx context.Context) (err error) {
		p, err = get(ctx, &iampb.GetIamPolicyRequest{Resource: resource, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the IAM policy of %s: %w", resource, err)
	}
	return p, nil
}

// holds reports whether member is in role's unconditional binding.
func holds(p *iampb.Policy, role, member string) bool {
	for _, x := range p.Bindings {
		if x.GetRole() == role && x.GetCondition() == nil && slices.Contains(x.Members, member) {
			return true
		}
	}
	return false
}

func holdsAll(p *iampb.Policy, roles []string, member string) bool {
	for _, r := range roles {
		if !holds(p, r, member) {
			return false
		}
	}
	return true
}
