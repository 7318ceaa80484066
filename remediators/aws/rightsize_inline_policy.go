package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// RightsizeInlinePolicy rewrites an inline policy of a user, group or role without what
// the principal's usage (attributes.usage, IAM Access Advisor) shows unused for the
// window (aws.iam.rightsize_inline_policy, parameter window_days, default 90): the
// patterns of unused services, the literal actions AWS tracks and reports unused, and
// "*" narrowed to the used services. Deny statements, NotAction, conditions and resources
// stay as they were; the new document must allow a subset of the old (checked before the
// write); a policy left without statements is deleted. Rollback puts the exact old
// document back.
type RightsizeInlinePolicy struct{ c clients }

// NewRightsizeInlinePolicy returns the fix; s may be nil for planning only.
func NewRightsizeInlinePolicy(s *awsapi.Sessions) *RightsizeInlinePolicy {
	return &RightsizeInlinePolicy{clients{s}}
}

// rightsizeBefore is the part: one inline policy, its document before and after, and
// what was removed. It holds nothing that moves with each read of the usage data (its
// date, the evidence's day counts), so that the drift check before the write (which reads
// the usage again) sees a change only when what would be removed changed; the finding's
// message carries the evidence.
type rightsizeBefore struct {
	Kind       string          `json:"kind"` // user, group, role
	Name       string          `json:"name"`
	PolicyName string          `json:"policy_name"`
	Document   json.RawMessage `json:"document"`
	After      json.RawMessage `json:"after"` // null: the policy is deleted
	Removed    []string        `json:"removed"`
	WindowDays int             `json:"window_days"`
}

// Spec implements remediators.Remediator.
func (*RightsizeInlinePolicy) Spec() remediators.Spec {
	var perms []string
	for _, kind := range []string{"User", "Group", "Role"} {
		perms = append(perms, "iam:Delete"+kind+"Policy", "iam:Get"+kind+"Policy", "iam:Put"+kind+"Policy")
	}
	return remediators.Spec{
		Action: "aws.iam.rightsize_inline_policy",
		Params: []remediators.Param{{Name: "window_days",
			Doc: "how many days a service or action must have gone unused, as of the usage data's date, to be removed (default 90)"}},
		ResourceTypes: []string{"aws.iam.user", "aws.iam.group", "aws.iam.role"},
		Rollback:      remediators.Rollback{Possible: true},
		Permissions:   remediators.Permissions{AWS: perms},
	}
}

// windowDays reads the window_days parameter (a number or its text).
func windowDays(params map[string]any) (int, error) {
	v, ok := params["window_days"]
	if !ok || v == nil {
		return usage.DefaultWindowDays, nil
	}
	n, ok := attr.ToInt(v)
	if !ok {
		if s, isStr := v.(string); isStr {
			var err error
			if n, err = strconv.Atoi(s); err == nil {
				ok = true
			}
		}
	}
	if !ok || n < 1 {
		return 0, fmt.Errorf("window_days %v: want a whole number of days, at least 1", v)
	}
	return n, nil
}

// Targets are the principal's inline policies that would change ("inline/NAME"): none
// when the usage data cannot speak for the window.
func (*RightsizeInlinePolicy) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	kind := principalKind(res.Type)
	if kind == "" {
		return nil, fmt.Errorf("%s: not a user, group or role", res.UID)
	}
	days, err := windowDays(params)
	if err != nil {
		return nil, err
	}
	u, err := usage.Unused(attr.Map(res.Attributes, "usage"), time.Duration(days)*24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, res.UID, err)
	}
	if u.Empty() {
		return nil, nil
	}
	var out []remediators.Target
	for _, p := range attr.Maps(res.Attributes, "inline_policies") {
		doc, ok := p["document"].(map[string]any)
		if !ok {
			continue // text that is no JSON document: nothing to narrow safely
		}
		r := rightsize(doc, u)
		if !r.changed {
			continue
		}
		if err := subsetOf(r.doc, doc); err != nil {
			return nil, fmt.Errorf("%s %s: inline policy %s: %w", kind, res.UID, attr.String(p, "name"), err)
		}
		b := rightsizeBefore{Kind: kind, Name: principalName(res), PolicyName: attr.String(p, "name"), Removed: r.removed, WindowDays: days}
		if b.Document, err = attr.Canonical(doc); err != nil {
			return nil, err
		}
		if r.doc != nil {
			if b.After, err = attr.Canonical(r.doc); err != nil {
				return nil, err
			}
		} else {
			b.After = json.RawMessage("null")
		}
		before, err := attr.Canonical(b)
		if err != nil {
			return nil, err
		}
		out = append(out, remediators.Target{Part: "inline/" + b.PolicyName, Before: before})
	}
	return out, nil
}

// Apply writes the narrowed document, after re-reading the policy: ErrConverged when it
// is already narrowed (or gone), an error when it changed since the plan in another way.
func (r *RightsizeInlinePolicy) Apply(ctx context.Context, a remediators.Action) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	d := detachBefore{Kind: b.Kind, Name: b.Name, PolicyName: b.PolicyName, Document: b.After}
	cur, err := getInline(ctx, cl, d)
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	if err != nil {
		return err
	}
	switch {
	case sameJSON(cur, b.After):
		return remediators.ErrConverged
	case !sameJSON(cur, b.Document):
		return fmt.Errorf("inline policy %s of %s %s changed since the plan: plan again", b.PolicyName, b.Kind, b.Name)
	}
	var oldDoc, newDoc map[string]any
	if err := json.Unmarshal(b.Document, &oldDoc); err != nil {
		return fmt.Errorf("action %s: the before-state's document: %w", a.ID, err)
	}
	if err := json.Unmarshal(b.After, &newDoc); err != nil {
		return fmt.Errorf("action %s: the before-state's new document: %w", a.ID, err)
	}
	if err := subsetOf(newDoc, oldDoc); err != nil {
		return fmt.Errorf("action %s: refused: %w", a.ID, err)
	}
	if newDoc == nil {
		return deleteInline(ctx, cl, d)
	}
	return putInlineDoc(ctx, cl, d, "narrow")
}

// Rollback puts the old document back, unless it is there already.
func (r *RightsizeInlinePolicy) Rollback(ctx context.Context, a remediators.Action) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	d := detachBefore{Kind: b.Kind, Name: b.Name, PolicyName: b.PolicyName, Document: b.Document}
	cur, err := getInline(ctx, cl, d)
	if err != nil && !awsapi.IsNotFound(err) {
		return err
	}
	if err == nil && sameJSON(cur, b.Document) {
		return nil
	}
	return putInline(ctx, cl, d)
}

func (r *RightsizeInlinePolicy) open(ctx context.Context, a remediators.Action) (rightsizeBefore, *iam.Client, error) {
	var b rightsizeBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, nil, err
	}
	if b.Kind == "" || b.Name == "" || b.PolicyName == "" || len(b.Document) == 0 || len(b.After) == 0 {
		return b, nil, fmt.Errorf("action %s: before-state names no principal, policy or documents", a.ID)
	}
	cl, err := r.c.iam(ctx, a)
	return b, cl, err
}

// putInlineDoc writes d.Document as the inline policy; what names the step in errors.
func putInlineDoc(ctx context.Context, cl *iam.Client, d detachBefore, what string) error {
	if err := putInline(ctx, cl, d); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
