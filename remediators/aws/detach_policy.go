package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// DetachPolicy takes one policy away from one principal (aws.iam.detach_policy): a
// managed policy from one user, group or role (on an aws.iam.policy resource, one target
// per attachment, or only the one the parameter attachment names), or, with the
// parameter inline_policy, one inline policy of a user, group or role, deleted with its
// document kept for Rollback.
type DetachPolicy struct{ c clients }

// NewDetachPolicy returns the fix; s may be nil for planning only.
func NewDetachPolicy(s *awsapi.Sessions) *DetachPolicy { return &DetachPolicy{clients{s}} }

// detachBefore is the part: a managed attachment (PolicyARN) or an inline policy
// (PolicyName and Document) of one principal.
type detachBefore struct {
	Kind       string          `json:"kind"` // user, group, role
	Name       string          `json:"name"`
	PolicyARN  string          `json:"policy_arn,omitempty"`
	PolicyName string          `json:"policy_name,omitempty"`
	Document   json.RawMessage `json:"document,omitempty"`
}

// principalKind is the kind IAM's calls name for a principal resource type ("user"),
// or "" for another type.
func principalKind(resourceType string) string {
	switch resourceType {
	case "aws.iam.user":
		return "user"
	case "aws.iam.group":
		return "group"
	case "aws.iam.role":
		return "role"
	}
	return ""
}

// Spec implements remediators.Remediator.
func (*DetachPolicy) Spec() remediators.Spec {
	// For users, groups and roles alike, a managed policy is detached (attached again by
	// rollback) after the principal's attachments are listed, and an inline one read,
	// deleted (put back by rollback).
	var perms []string
	for _, kind := range []string{"User", "Group", "Role"} {
		perms = append(perms, "iam:Attach"+kind+"Policy", "iam:Delete"+kind+"Policy", "iam:Detach"+kind+"Policy",
			"iam:Get"+kind+"Policy", "iam:ListAttached"+kind+"Policies", "iam:Put"+kind+"Policy")
	}
	return remediators.Spec{
		Action: "aws.iam.detach_policy",
		Params: []remediators.Param{
			{Name: "inline_policy", Doc: "the inline policy of a user, group or role to delete (the policy's name); without it, a managed policy is detached from each principal it is attached to"},
			{Name: "attachment", Doc: "on a managed policy: the one attachment to remove (user/NAME, group/NAME or role/NAME), for a violation per attachment; without it, every attachment"},
		},
		ResourceTypes: []string{"aws.iam.policy", "aws.iam.user", "aws.iam.group", "aws.iam.role"},
		Rollback:      remediators.Rollback{Possible: true},
		Permissions:   remediators.Permissions{AWS: perms},
	}
}

// Targets are the attachments of a managed policy ("user/alice", "role/deployer"), or the
// one inline policy named ("inline/NAME").
func (*DetachPolicy) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	inline, err := attr.Param(params, "inline_policy", false)
	if err != nil {
		return nil, err
	}
	attachment, err := attr.Param(params, "attachment", false)
	if err != nil {
		return nil, err
	}
	if res.Type == "aws.iam.policy" {
		if inline != "" {
			return nil, fmt.Errorf("policy %s: inline_policy names a policy of a user, group or role, not of a managed policy", res.UID)
		}
		ts, err := attachmentTargets(res)
		if err != nil {
			return nil, err
		}
		if n, _ := attr.Int(res.Attributes, "attachment_count"); len(ts) == 0 && n > 0 {
			// Attached, but to whom was not read: nothing to detach is not "fixed".
			return nil, fmt.Errorf("%w: policy %s is attached %d times but its attachments were not read", remediators.ErrNotApplicable, res.UID, n)
		}
		if attachment == "" {
			return ts, nil
		}
		// The attachment gone since is converged: no target.
		return slices.DeleteFunc(ts, func(t remediators.Target) bool { return t.Part != attachment }), nil
	}
	if attachment != "" {
		return nil, fmt.Errorf("%s: attachment names an attachment of a managed policy; on a user, group or role use inline_policy", res.UID)
	}
	kind := principalKind(res.Type)
	if kind == "" {
		return nil, fmt.Errorf("%s: detach_policy does not apply to %s", res.UID, res.Type)
	}
	if inline == "" {
		return nil, fmt.Errorf("%s %s: detach_policy needs inline_policy here (managed attachments are fixed on the aws.iam.policy resource)", kind, res.UID)
	}
	for _, p := range attr.Maps(res.Attributes, "inline_policies") {
		if attr.String(p, "name") != inline {
			continue
		}
		doc, err := attr.Canonical(p["document"])
		if err != nil {
			return nil, err
		}
		before, err := attr.Canonical(detachBefore{Kind: kind, Name: principalName(res), PolicyName: inline, Document: doc})
		if err != nil {
			return nil, err
		}
		return []remediators.Target{{Part: "inline/" + inline, Before: before}}, nil
	}
	return nil, nil
}

// attachmentTargets lists a managed policy's attachments, one target each.
func attachmentTargets(res snapshot.Resource) ([]remediators.Target, error) {
	to := attr.Map(res.Attributes, "attached_to")
	var out []remediators.Target
	for _, k := range []struct{ plural, kind string }{{"users", "user"}, {"groups", "group"}, {"roles", "role"}} {
		names := attr.Strings(to, k.plural)
		slices.Sort(names)
		for _, name := range names {
			before, err := attr.Canonical(detachBefore{Kind: k.kind, Name: name, PolicyARN: res.UID})
			if err != nil {
				return nil, err
			}
			out = append(out, remediators.Target{Part: k.kind + "/" + name, Before: before})
		}
	}
	return out, nil
}

// principalName is the name of a user, group or role: its name, else the end of its ARN.
func principalName(res snapshot.Resource) string {
	if res.Name != "" {
		return res.Name
	}
	return attr.LastSegment(res.UID)
}

// Apply detaches the managed policy or deletes the inline one; ErrConverged when it is
// no longer there (or the principal is gone).
func (r *DetachPolicy) Apply(ctx context.Context, a remediators.Action) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	if b.PolicyARN != "" {
		attached, err := isAttached(ctx, cl, b)
		if awsapi.IsNotFound(err) || err == nil && !attached {
			return remediators.ErrConverged
		}
		if err != nil {
			return err
		}
		err = detach(ctx, cl, b)
		if awsapi.IsNotFound(err) {
			return remediators.ErrConverged
		}
		return err
	}
	if _, err := getInline(ctx, cl, b); awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	} else if err != nil {
		return err
	}
	err = deleteInline(ctx, cl, b)
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	return err
}

// Rollback re-attaches the managed policy, or puts the stored document back under the
// inline policy's name.
func (r *DetachPolicy) Rollback(ctx context.Context, a remediators.Action) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	if b.PolicyARN != "" {
		if attached, err := isAttached(ctx, cl, b); err != nil {
			return err
		} else if attached {
			return nil
		}
		return attach(ctx, cl, b)
	}
	cur, err := getInline(ctx, cl, b)
	if err != nil && !awsapi.IsNotFound(err) {
		return err
	}
	if err == nil && sameJSON(cur, b.Document) {
		return nil
	}
	return putInline(ctx, cl, b)
}

func (r *DetachPolicy) open(ctx context.Context, a remediators.Action) (detachBefore, *iam.Client, error) {
	var b detachBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, nil, err
	}
	if b.Name == "" || (b.PolicyARN == "") == (b.PolicyName == "") {
		return b, nil, fmt.Errorf("action %s: before-state names no attachment or inline policy", a.ID)
	}
	if principalKind("aws.iam."+b.Kind) == "" {
		return b, nil, fmt.Errorf("action %s: before-state kind %q is not user, group or role", a.ID, b.Kind)
	}
	cl, err := r.c.iam(ctx, a)
	return b, cl, err
}

// isAttached reads whether the managed policy is attached to the principal.
func isAttached(ctx context.Context, cl *iam.Client, b detachBefore) (bool, error) {
	var marker *string
	for {
		var arns []string
		var next *string
		var err error
		switch b.Kind {
		case "user":
			var out *iam.ListAttachedUserPoliciesOutput
			if out, err = cl.ListAttachedUserPolicies(ctx, &iam.ListAttachedUserPoliciesInput{UserName: &b.Name, Marker: marker}); err == nil {
				for _, p := range out.AttachedPolicies {
					arns = append(arns, aws.ToString(p.PolicyArn))
				}
				next = truncated(out.IsTruncated, out.Marker)
			}
		case "group":
			var out *iam.ListAttachedGroupPoliciesOutput
			if out, err = cl.ListAttachedGroupPolicies(ctx, &iam.ListAttachedGroupPoliciesInput{GroupName: &b.Name, Marker: marker}); err == nil {
				for _, p := range out.AttachedPolicies {
					arns = append(arns, aws.ToString(p.PolicyArn))
				}
				next = truncated(out.IsTruncated, out.Marker)
			}
		default:
			var out *iam.ListAttachedRolePoliciesOutput
			if out, err = cl.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: &b.Name, Marker: marker}); err == nil {
				for _, p := range out.AttachedPolicies {
					arns = append(arns, aws.ToString(p.PolicyArn))
				}
				next = truncated(out.IsTruncated, out.Marker)
			}
		}
		if err != nil {
			return false, callErr(fmt.Sprintf("list the policies attached to %s %s", b.Kind, b.Name), err)
		}
		if slices.Contains(arns, b.PolicyARN) {
			return true, nil
		}
		if next == nil {
			return false, nil
		}
		marker = next
	}
}

func truncated(more bool, marker *string) *string {
	if !more || aws.ToString(marker) == "" {
		return nil
	}
	return marker
}

func detach(ctx context.Context, cl *iam.Client, b detachBefore) error {
	var err error
	switch b.Kind {
	case "user":
		_, err = cl.DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: &b.Name, PolicyArn: &b.PolicyARN})
	case "group":
		_, err = cl.DetachGroupPolicy(ctx, &iam.DetachGroupPolicyInput{GroupName: &b.Name, PolicyArn: &b.PolicyARN})
	default:
		_, err = cl.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: &b.Name, PolicyArn: &b.PolicyARN})
	}
	if err != nil {
		return callErr(fmt.Sprintf("detach %s from %s %s", b.PolicyARN, b.Kind, b.Name), err)
	}
	return nil
}

func attach(ctx context.Context, cl *iam.Client, b detachBefore) error {
	var err error
	switch b.Kind {
	case "user":
		_, err = cl.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: &b.Name, PolicyArn: &b.PolicyARN})
	case "group":
		_, err = cl.AttachGroupPolicy(ctx, &iam.AttachGroupPolicyInput{GroupName: &b.Name, PolicyArn: &b.PolicyARN})
	default:
		_, err = cl.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: &b.Name, PolicyArn: &b.PolicyARN})
	}
	if err != nil {
		return callErr(fmt.Sprintf("attach %s to %s %s", b.PolicyARN, b.Kind, b.Name), err)
	}
	return nil
}

// getInline reads the document of the inline policy, URL-decoded.
func getInline(ctx context.Context, cl *iam.Client, b detachBefore) (string, error) {
	var doc *string
	var err error
	switch b.Kind {
	case "user":
		var out *iam.GetUserPolicyOutput
		if out, err = cl.GetUserPolicy(ctx, &iam.GetUserPolicyInput{UserName: &b.Name, PolicyName: &b.PolicyName}); err == nil {
			doc = out.PolicyDocument
		}
	case "group":
		var out *iam.GetGroupPolicyOutput
		if out, err = cl.GetGroupPolicy(ctx, &iam.GetGroupPolicyInput{GroupName: &b.Name, PolicyName: &b.PolicyName}); err == nil {
			doc = out.PolicyDocument
		}
	default:
		var out *iam.GetRolePolicyOutput
		if out, err = cl.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: &b.Name, PolicyName: &b.PolicyName}); err == nil {
			doc = out.PolicyDocument
		}
	}
	if err != nil {
		return "", callErr(fmt.Sprintf("read inline policy %s of %s %s", b.PolicyName, b.Kind, b.Name), err)
	}
	return decodeDocument(aws.ToString(doc))
}

func deleteInline(ctx context.Context, cl *iam.Client, b detachBefore) error {
	var err error
	switch b.Kind {
	case "user":
		_, err = cl.DeleteUserPolicy(ctx, &iam.DeleteUserPolicyInput{UserName: &b.Name, PolicyName: &b.PolicyName})
	case "group":
		_, err = cl.DeleteGroupPolicy(ctx, &iam.DeleteGroupPolicyInput{GroupName: &b.Name, PolicyName: &b.PolicyName})
	default:
		_, err = cl.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: &b.Name, PolicyName: &b.PolicyName})
	}
	if err != nil {
		return callErr(fmt.Sprintf("delete inline policy %s of %s %s", b.PolicyName, b.Kind, b.Name), err)
	}
	return nil
}

func putInline(ctx context.Context, cl *iam.Client, b detachBefore) error {
	if len(b.Document) == 0 || string(b.Document) == "null" {
		return fmt.Errorf("put back inline policy %s of %s %s: the before-state holds no document", b.PolicyName, b.Kind, b.Name)
	}
	doc := string(b.Document)
	var err error
	switch b.Kind {
	case "user":
		_, err = cl.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: &b.Name, PolicyName: &b.PolicyName, PolicyDocument: &doc})
	case "group":
		_, err = cl.PutGroupPolicy(ctx, &iam.PutGroupPolicyInput{GroupName: &b.Name, PolicyName: &b.PolicyName, PolicyDocument: &doc})
	default:
		_, err = cl.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: &b.Name, PolicyName: &b.PolicyName, PolicyDocument: &doc})
	}
	if err != nil {
		return callErr(fmt.Sprintf("put back inline policy %s of %s %s", b.PolicyName, b.Kind, b.Name), err)
	}
	return nil
}

// decodeDocument URL-decodes a policy document as IAM returns it.
func decodeDocument(s string) (string, error) {
	d, err := url.QueryUnescape(s)
	if err != nil {
		return "", fmt.Errorf("policy document is not URL-encoded: %w", err)
	}
	return d, nil
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a string, b json.RawMessage) bool {
	ca, err1 := attr.Canonical(json.RawMessage(a))
	cb, err2 := attr.Canonical(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}
