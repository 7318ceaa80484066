package gcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/type/expr"

	"github.com/warden-sec/warden/internal/backoff"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// RemoveBindingMember removes one member from one binding of the IAM policy of a
// project, folder or organisation (gcp.iam.remove_binding_member, parameters role and
// member, and optionally condition: the expression or title of the one conditional
// binding meant). Without a condition, each binding of the role that holds the member is
// a target of its own, conditional or not.
//
// It is a read-modify-write under the policy's etag: a concurrent change makes Google
// answer ABORTED, and the whole read-modify-write starts again. Other members, other
// bindings and every condition are left exactly as they are; a binding left without
// members is dropped, as Google does. Rollback adds the member back to its binding.
type RemoveBindingMember struct{ c *gcpapi.Clients }

// NewRemoveBindingMember returns the fix; c may be nil for planning only.
func NewRemoveBindingMember(c *gcpapi.Clients) *RemoveBindingMember {
	return &RemoveBindingMember{c}
}

// maxPolicyAttempts bounds the read-modify-writes of one policy that lose a race.
const maxPolicyAttempts = 6

// bindingBefore is the part: one member of the binding of one role (and condition) in
// one resource's policy.
type bindingBefore struct {
	Resource  string     `json:"resource"` // projects/P, folders/N, organizations/N
	Role      string     `json:"role"`
	Member    string     `json:"member"`
	Condition *condition `json:"condition"`
}

// condition is a binding's condition as the snapshot holds it. Bindings are told apart
// by role and condition, the condition by its expression and title.
type condition struct {
	Title      string `json:"title,omitempty"`
	Expression string `json:"expression"`
}

func (c *condition) matches(x *expr.Expr) bool {
	if c == nil || x == nil {
		return c == nil && x == nil
	}
	return c.Expression == x.GetExpression() && c.Title == x.GetTitle()
}

// Spec implements remediators.Remediator.
func (*RemoveBindingMember) Spec() remediators.Spec {
	return remediators.Spec{
		Action: "gcp.iam.remove_binding_member",
		Params: []remediators.Param{
			{Name: "role", Required: true, Doc: `the role of the binding ("roles/editor")`},
			{Name: "member", Required: true, Doc: `the member to remove ("user:bob@example.com")`},
			{Name: "condition", Doc: "the expression or title of the condition of the one binding meant; without it, every binding of the role holding the member"},
		},
		ResourceTypes: []string{"gcp.project.iam_policy", "gcp.folder.iam_policy", "gcp.organization.iam_policy"},
		Rollback:      remediators.Rollback{Possible: true},
		// A project's, folder's or organisation's policy is read, then written back with
		// its etag.
		Permissions: remediators.Permissions{GCP: []string{
			"resourcemanager.folders.getIamPolicy", "resourcemanager.folders.setIamPolicy",
			"resourcemanager.organizations.getIamPolicy", "resourcemanager.organizations.setIamPolicy",
			"resourcemanager.projects.getIamPolicy", "resourcemanager.projects.setIamPolicy"}},
	}
}

// Targets are the bindings of the role that hold the member (only the one whose
// condition is named, with condition): "ROLE/MEMBER", and for a conditional binding
// "ROLE/MEMBER?condition=EXPRESSION".
func (*RemoveBindingMember) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	role, err := attr.Param(params, "role", true)
	if err != nil {
		return nil, err
	}
	member, err := attr.Param(params, "member", true)
	if err != nil {
		return nil, err
	}
	cond, err := attr.Param(params, "condition", false)
	if err != nil {
		return nil, err
	}
	resource, err := resourceName(res.UID, "cloudresourcemanager.googleapis.com")
	if err != nil {
		return nil, err
	}
	var out []remediators.Target
	for _, b := range attr.Maps(res.Attributes, "bindings") {
		if attr.String(b, "role") != role || !slices.Contains(attr.Strings(b, "members"), member) {
			continue
		}
		var c *condition
		if m := attr.Map(b, "condition"); m != nil {
			c = &condition{Title: attr.String(m, "title"), Expression: attr.String(m, "expression")}
		}
		if cond != "" && (c == nil || cond != c.Expression && cond != c.Title) {
			continue
		}
		before, err := attr.Canonical(bindingBefore{Resource: resource, Role: role, Member: member, Condition: c})
		if err != nil {
			return nil, err
		}
		part := role + "/" + member
		if c != nil {
			part += "?condition=" + c.Expression
		}
		out = append(out, remediators.Target{Part: part, Before: before})
	}
	return out, nil
}

// Apply removes the member from its binding; ErrConverged when the binding no longer
// holds it.
func (r *RemoveBindingMember) Apply(ctx context.Context, a remediators.Action) error {
	return r.modify(ctx, a, func(p *iampb.Policy, b bindingBefore) bool { return removeMember(p, b.Role, b.Condition, b.Member) }, true)
}

// Rollback adds the member back to the binding of its role and condition, which is
// created again if the removal emptied it (a condition's description, which snapshots do
// not hold, is then lost).
func (r *RemoveBindingMember) Rollback(ctx context.Context, a remediators.Action) error {
	return r.modify(ctx, a, func(p *iampb.Policy, b bindingBefore) bool { return addMember(p, b.Role, b.Condition, b.Member) }, false)
}

// removeMember takes member out of the binding of role and condition c (nil: the
// unconditional one), dropping a binding left empty, as Google does; it reports whether
// it changed p.
func removeMember(p *iampb.Policy, role string, c *condition, member string) bool {
	for i, x := range p.Bindings {
		if x.GetRole() != role || !c.matches(x.GetCondition()) || !slices.Contains(x.Members, member) {
			continue
		}
		x.Members = slices.DeleteFunc(x.Members, func(m string) bool { return m == member })
		if len(x.Members) == 0 {
			p.Bindings = slices.Delete(p.Bindings, i, i+1)
		}
		return true
	}
	return false
}

// addMember puts member in the binding of role and condition c (nil: the unconditional
// one), made again when there is none (a condition's description, which snapshots do not
// hold, is then lost); it reports whether it changed p.
func addMember(p *iampb.Policy, role string, c *condition, member string) bool {
	for _, x := range p.Bindings {
		if x.GetRole() != role || !c.matches(x.GetCondition()) {
			continue
		}
		if slices.Contains(x.Members, member) {
			return false
		}
		x.Members = append(x.Members, member)
		return true
	}
	nb := &iampb.Binding{Role: role, Members: []string{member}}
	if c != nil {
		nb.Condition = &expr.Expr{Title: c.Title, Expression: c.Expression}
	}
	p.Bindings = append(p.Bindings, nb)
	return true
}

// modify runs one read-modify-write of the policy: change edits the policy read and says
// whether it changed it. No change is ErrConverged when converged is asked for, nil
// otherwise. A write that lost a race (ABORTED) starts again from the read.
func (r *RemoveBindingMember) modify(ctx context.Context, a remediators.Action, change func(*iampb.Policy, bindingBefore) bool, converged bool) error {
	var b bindingBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	if b.Resource == "" || b.Role == "" || b.Member == "" {
		return fmt.Errorf("action %s: before-state names no binding member", a.ID)
	}
	return modifyPolicy(ctx, r.c, b.Resource, b.Role+" "+b.Member, func(p *iampb.Policy) bool { return change(p, b) }, converged)
}

// modifyPolicy runs one read-modify-write of the IAM policy of resource (a project,
// folder or organisation): change edits the policy read and says whether it changed it.
// No change is ErrConverged when converged is asked for, nil otherwise. A write that
// lost a race (ABORTED) starts again from the read; what names the change in errors.
func modifyPolicy(ctx context.Context, c *gcpapi.Clients, resource, what string, change func(*iampb.Policy) bool, converged bool) error {
	_, set, err := policyCalls(c, resource)
	if err != nil {
		return err
	}
	scope := projectOf(resource)
	for attempt := 1; ; attempt++ {
		p, err := readPolicy(ctx, c, resource)
		if err != nil {
			return err
		}
		if !change(p) {
			if converged {
				return remediators.ErrConverged
			}
			return nil
		}
		p.Version = 1
		for _, x := range p.Bindings {
			if x.GetCondition() != nil {
				p.Version = 3
			}
		}
		// p carries the etag it was read with: a change made since is refused, not lost.
		err = call(ctx, c, scope, "cloudresourcemanager.SetIamPolicy", func(ctx context.Context) error {
			_, err := set(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p})
			return err
		})
		if err == nil {
			return nil
		}
		if !gcpapi.IsConflict(err) || attempt >= maxPolicyAttempts {
			return fmt.Errorf("write the IAM policy of %s (%s): %w", resource, what, err)
		}
		d := backoff.FullJitter(20*time.Millisecond, time.Second, attempt)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

type (
	getPolicy func(context.Context, *iampb.GetIamPolicyRequest) (*iampb.Policy, error)
	setPolicy func(context.Context, *iampb.SetIamPolicyRequest) (*iampb.Policy, error)
)

// policyCalls picks the Resource Manager client of the resource's kind.
func policyCalls(c *gcpapi.Clients, resource string) (getPolicy, setPolicy, error) {
	if c == nil {
		return nil, nil, errNoClients
	}
	switch {
	case strings.HasPrefix(resource, "projects/"):
		return func(ctx context.Context, q *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
				return c.Projects.GetIamPolicy(ctx, q, gcpapi.NoRetry())
			}, func(ctx context.Context, q *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
				return c.Projects.SetIamPolicy(ctx, q, gcpapi.NoRetry())
			}, nil
	case strings.HasPrefix(resource, "folders/"):
		return func(ctx context.Context, q *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
				return c.Folders.GetIamPolicy(ctx, q, gcpapi.NoRetry())
			}, func(ctx context.Context, q *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
				return c.Folders.SetIamPolicy(ctx, q, gcpapi.NoRetry())
			}, nil
	case strings.HasPrefix(resource, "organizations/"):
		return func(ctx context.Context, q *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
				return c.Organizations.GetIamPolicy(ctx, q, gcpapi.NoRetry())
			}, func(ctx context.Context, q *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
				return c.Organizations.SetIamPolicy(ctx, q, gcpapi.NoRetry())
			}, nil
	}
	return nil, nil, fmt.Errorf("%s is not a project, folder or organisation", resource)
}
