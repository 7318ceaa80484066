package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// The steps of narrowing a managed policy, each recorded by the caller before the next.
const (
	// stepManagedChecked: the policy is as planned and the narrowing a subset; the
	// version to delete to make room (AWS keeps five) is chosen and recorded with its
	// document, before anything is written.
	stepManagedChecked = "checked"
	// stepManagedVersioned: the narrowed document is the default version. Done.
	stepManagedVersioned = "versioned"
)

// maxPolicyVersions is IAM's quota of versions per managed policy.
const maxPolicyVersions = 5

// RightsizeManagedPolicy narrows a customer-managed policy to what the principals it is
// attached to used (aws.iam.rightsize_managed_policy, parameter window_days, default 90),
// from the policy's usage attribute (the collector's aggregate over every attached
// principal): the patterns of unused services, the literal actions AWS tracks and reports
// unused, and "*" narrowed to the used services, as rightsize_inline_policy does. The
// narrowed document becomes a new default version; the old default stays, so Rollback
// makes it the default again and deletes the version the fix created.
//
// It runs in two steps (remediators.Stepper) so that its one destructive call is
// recorded first: AWS keeps at most five versions, and at five the oldest non-default
// one is deleted to make room. The first step chooses it and records its id, creation
// time and document in the progress (the caller keeps it in the action's record and its
// audit entry), before the second deletes it and creates the new version. A deleted
// version cannot be restored under its id; its document is in that record.
type RightsizeManagedPolicy struct{ c clients }

var _ remediators.Stepper = (*RightsizeManagedPolicy)(nil)

// NewRightsizeManagedPolicy returns the fix; s may be nil for planning only.
func NewRightsizeManagedPolicy(s *awsapi.Sessions) *RightsizeManagedPolicy {
	return &RightsizeManagedPolicy{clients{s}}
}

// managedRightsizeBefore is the part: the policy's default version as planned, its
// document before and after, and what was removed. As for inline policies, nothing in it
// moves with each read of the usage data, so that the drift check before the first step
// sees a change only when what would be removed changed.
type managedRightsizeBefore struct {
	PolicyARN  string          `json:"policy_arn"`
	VersionID  string          `json:"version_id"`
	Document   json.RawMessage `json:"document"`
	After      json.RawMessage `json:"after"`
	Removed    []string        `json:"removed"`
	WindowDays int             `json:"window_days"`
}

// managedRightsizeRecord is what the steps record (Progress.Data).
type managedRightsizeRecord struct {
	// Pruned is the version deleted to make room for the new one, if the policy had
	// five: chosen by the first step, deleted by the second.
	Pruned *prunedVersion `json:"pruned,omitempty"`
	// NewVersion is the version the fix created and made the default.
	NewVersion string `json:"new_version,omitempty"`
	// Converged is set when the first step found the policy narrowed already: nothing
	// was written.
	Converged bool `json:"converged,omitempty"`
	// Existing are the versions the policy had at the first step. Undo never deletes
	// them: one holding the narrowed document already (narrowed once by hand, then
	// widened) is the customer's, and nothing could restore it.
	Existing []string `json:"existing,omitempty"`
}

// prunedVersion is a deleted policy version, as it was.
type prunedVersion struct {
	VersionID string          `json:"version_id"`
	Created   time.Time       `json:"created,omitzero"`
	Document  json.RawMessage `json:"document"`
}

// Spec implements remediators.Remediator.
func (*RightsizeManagedPolicy) Spec() remediators.Spec {
	return remediators.Spec{
		Action: "aws.iam.rightsize_managed_policy",
		Params: []remediators.Param{{Name: "window_days",
			Doc: "how many days a service or action must have gone unused by every principal the policy is attached to, as of the usage data's date, to be removed (default 90)"}},
		ResourceTypes: []string{"aws.iam.policy"},
		Rollback: remediators.Rollback{Possible: true, Reason: "the version planned as default becomes the default again and the narrowed version is deleted; " +
			"a version deleted to stay within AWS's five is not restored (its document is in the action's record)"},
		// The steps read the default version and the versions, delete the oldest
		// non-default one at five, and create the narrowed default; Undo sets the old
		// default back and deletes the narrowed version.
		Permissions: remediators.Permissions{AWS: []string{"iam:CreatePolicyVersion", "iam:DeletePolicyVersion", "iam:GetPolicy",
			"iam:GetPolicyVersion", "iam:ListPolicyVersions", "iam:SetDefaultPolicyVersion"}},
	}
}

// Targets is the policy's default version ("version") when the usage of the principals
// it is attached to shows some of it unused for the window. An AWS-managed policy, data
// that cannot speak for the window (see judgedUsage; every principal attached must be
// covered and old enough), and a policy that would be left without statements (a
// version cannot be empty: detach or delete the policy instead) are not applicable:
// the plan shows why.
func (*RightsizeManagedPolicy) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	if res.Type != "aws.iam.policy" {
		return nil, fmt.Errorf("%s: not a managed policy", res.UID)
	}
	if m, _ := attr.Bool(res.Attributes, "aws_managed"); m {
		return nil, fmt.Errorf("%w: %s is AWS-managed: only AWS writes its versions (aws.iam.replace_managed_attachment replaces it on a principal)", remediators.ErrNotApplicable, res.UID)
	}
	days, err := windowDays(params)
	if err != nil {
		return nil, err
	}
	u := attr.Map(res.Attributes, "usage")
	ages, err := attachedAges(res, u)
	if err != nil {
		return nil, err
	}
	g, err := judgedUsage(u, days, ages)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", res.UID, err)
	}
	if g.Empty() {
		return nil, nil
	}
	doc, ok := res.Attributes["document"].(map[string]any)
	version := attr.String(res.Attributes, "default_version_id")
	if !ok || version == "" {
		return nil, fmt.Errorf("%w: policy %s: its default version or document was not read", remediators.ErrNotApplicable, res.UID)
	}
	r := rightsize(doc, g)
	if !r.changed {
		return nil, nil
	}
	if r.doc == nil {
		return nil, fmt.Errorf("%w: policy %s: every grant went unused (%s), and a policy version cannot be empty: detach or delete the policy instead",
			remediators.ErrNotApplicable, res.UID, strings.Join(r.removed, ", "))
	}
	if err := subsetOf(r.doc, doc); err != nil {
		return nil, fmt.Errorf("policy %s: %w", res.UID, err)
	}
	b := managedRightsizeBefore{PolicyARN: res.UID, VersionID: version, Removed: r.removed, WindowDays: days}
	if b.Document, err = attr.Canonical(doc); err != nil {
		return nil, err
	}
	if b.After, err = attr.Canonical(r.doc); err != nil {
		return nil, err
	}
	before, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: "version", Before: before}}, nil
}

// attachedAges are the principals the policy's usage aggregates, with their creation
// times: each principal of attached_to must be among usage.principals (matched by kind
// and name in its ARN), or the data does not cover it.
func attachedAges(res snapshot.Resource, u map[string]any) ([]principalAge, error) {
	if u == nil {
		return nil, nil // judgedUsage says there is no data
	}
	known := map[string]map[string]any{}
	for _, p := range attr.Maps(u, "principals") {
		arn := attr.String(p, "arn")
		_, rest, _ := strings.Cut(arn, ":iam::")
		_, rest, _ = strings.Cut(rest, ":") // account
		kind, _, _ := strings.Cut(rest, "/")
		known[kind+"/"+attr.LastSegment(arn)] = p
	}
	to := attr.Map(res.Attributes, "attached_to")
	var out []principalAge
	for _, k := range []struct{ plural, kind string }{{"users", "user"}, {"groups", "group"}, {"roles", "role"}} {
		for _, name := range attr.Strings(to, k.plural) {
			p, ok := known[k.kind+"/"+name]
			if !ok {
				return nil, fmt.Errorf("%w: policy %s: its usage does not cover %s %s, which it is attached to", remediators.ErrNotApplicable, res.UID, k.kind, name)
			}
			out = append(out, principalAge{what: k.kind + " " + name, created: attr.String(p, "created"), group: k.kind == "group"})
		}
	}
	return out, nil
}

// Apply is not used: the caller runs the steps.
func (*RightsizeManagedPolicy) Apply(context.Context, remediators.Action) error {
	return errors.New("aws.iam.rightsize_managed_policy runs in steps (remediators.Stepper), not as one call")
}

// Rollback is not used: the caller undoes the steps (Undo).
func (*RightsizeManagedPolicy) Rollback(context.Context, remediators.Action) error {
	return errors.New("aws.iam.rightsize_managed_policy is undone from its progress (remediators.Stepper), not as one call")
}

// Step implements remediators.Stepper. Each step re-reads the default version first: the
// narrowed document already the default is done (converged when found so by the first
// step, without a write); anything but the planned default version is an error.
func (r *RightsizeManagedPolicy) Step(ctx context.Context, a remediators.Action, p remediators.Progress, _ time.Time) (remediators.Progress, error) {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return p, err
	}
	var rec managedRightsizeRecord
	if len(p.Data) > 0 {
		if err := json.Unmarshal(p.Data, &rec); err != nil {
			return p, fmt.Errorf("narrowing of %s: read progress: %w", b.PolicyARN, err)
		}
	}
	next := func(step string) (remediators.Progress, error) {
		data, err := json.Marshal(rec)
		if err != nil {
			return p, err
		}
		return remediators.Progress{Step: step, Data: data, Done: step == stepManagedVersioned}, nil
	}
	cur, curDoc, err := policyDefault(ctx, cl, b.PolicyARN)
	if err != nil {
		return p, err
	}
	switch {
	case sameJSON(curDoc, b.After):
		// Narrowed already: by this fix's interrupted step, or before it.
		if rec.NewVersion == "" {
			rec.NewVersion, rec.Converged = cur, p.Step == ""
		}
		return next(stepManagedVersioned)
	case cur != b.VersionID || !sameJSON(curDoc, b.Document):
		return p, fmt.Errorf("policy %s changed since the plan (default version %s, planned %s): plan again", b.PolicyARN, cur, b.VersionID)
	}
	if err := checkNarrowing(a, b); err != nil {
		return p, err
	}
	versions, err := policyVersions(ctx, cl, b.PolicyARN)
	if err != nil {
		return p, err
	}
	if p.Step == "" {
		for _, v := range versions {
			rec.Existing = append(rec.Existing, aws.ToString(v.VersionId))
		}
		if len(versions) >= maxPolicyVersions {
			for _, v := range versions {
				if v.IsDefaultVersion {
					continue
				}
				id := aws.ToString(v.VersionId)
				doc, err := policyVersionDoc(ctx, cl, b.PolicyARN, id)
				if err != nil {
					return p, err
				}
				pv := &prunedVersion{VersionID: id, Created: aws.ToTime(v.CreateDate).UTC(), Document: json.RawMessage(doc)}
				if c, err := attr.Canonical(json.RawMessage(doc)); err == nil {
					pv.Document = c
				}
				rec.Pruned = pv
				break
			}
		}
		return next(stepManagedChecked)
	}
	if rec.Pruned != nil && hasVersion(versions, rec.Pruned.VersionID) {
		if len(versions) < maxPolicyVersions {
			rec.Pruned = nil // room was made meanwhile: nothing to delete
		} else {
			if err := deletePolicyVersion(ctx, cl, b.PolicyARN, rec.Pruned.VersionID); err != nil {
				return p, err
			}
			if versions, err = policyVersions(ctx, cl, b.PolicyARN); err != nil {
				return p, err
			}
		}
	}
	if len(versions) >= maxPolicyVersions {
		return p, fmt.Errorf("policy %s has %d versions again since the first step: plan again", b.PolicyARN, len(versions))
	}
	out, err := cl.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: &b.PolicyARN, PolicyDocument: docText(b.After), SetAsDefault: true})
	if err != nil {
		return p, callErr("create the narrowed version of policy "+b.PolicyARN, err)
	}
	rec.NewVersion = aws.ToString(out.PolicyVersion.VersionId)
	return next(stepManagedVersioned)
}

// checkNarrowing checks again, before the write, that the new document allows a subset
// of the old.
func checkNarrowing(a remediators.Action, b managedRightsizeBefore) error {
	var oldDoc, newDoc map[string]any
	if err := json.Unmarshal(b.Document, &oldDoc); err != nil {
		return fmt.Errorf("action %s: the before-state's document: %w", a.ID, err)
	}
	if err := json.Unmarshal(b.After, &newDoc); err != nil || newDoc == nil {
		return fmt.Errorf("action %s: the before-state's new document is not one: %v", a.ID, err)
	}
	if err := subsetOf(newDoc, oldDoc); err != nil {
		return fmt.Errorf("action %s: refused: %w", a.ID, err)
	}
	return nil
}

func hasVersion(vs []iamtypes.PolicyVersion, id string) bool {
	for _, v := range vs {
		if aws.ToString(v.VersionId) == id {
			return true
		}
	}
	return false
}

// Undo implements remediators.Stepper, whatever step was reached (a step interrupted in
// its middle included): the planned default version becomes the default again, unless
// it is already, and every non-default version holding the narrowed document that the
// policy did not have at the first step (the one the fix created; progress recorded
// before Existing was: every such version) is deleted. A default that is neither the
// planned version nor the narrowed document was set by someone else since: it is not
// overridden.
func (r *RightsizeManagedPolicy) Undo(ctx context.Context, a remediators.Action, p remediators.Progress) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	var rec managedRightsizeRecord
	if len(p.Data) > 0 {
		if err := json.Unmarshal(p.Data, &rec); err != nil {
			return fmt.Errorf("undo the narrowing of %s: read progress: %w", b.PolicyARN, err)
		}
	}
	cur, curDoc, err := policyDefault(ctx, cl, b.PolicyARN)
	if err != nil {
		return err
	}
	if cur != b.VersionID {
		if !sameJSON(curDoc, b.After) {
			return fmt.Errorf("policy %s: its default version %s is neither the planned %s nor the narrowed document: someone changed it since; not rolled back", b.PolicyARN, cur, b.VersionID)
		}
		if _, err := policyVersionDoc(ctx, cl, b.PolicyARN, b.VersionID); awsapi.IsNotFound(err) {
			return fmt.Errorf("policy %s: version %s, the default before the fix, no longer exists: it cannot be made the default again; restore its document as a new version by hand: %w", b.PolicyARN, b.VersionID, err)
		} else if err != nil {
			return err
		}
		if _, err := cl.SetDefaultPolicyVersion(ctx, &iam.SetDefaultPolicyVersionInput{PolicyArn: &b.PolicyARN, VersionId: &b.VersionID}); err != nil {
			return callErr(fmt.Sprintf("make version %s of policy %s the default again", b.VersionID, b.PolicyARN), err)
		}
	}
	if rec.Converged {
		// Someone else made the narrowed version between the plan and the first step:
		// the old default is back, and their version is theirs to delete.
		return nil
	}
	versions, err := policyVersions(ctx, cl, b.PolicyARN)
	if err != nil {
		return err
	}
	for _, v := range versions {
		id := aws.ToString(v.VersionId)
		if id == b.VersionID || slices.Contains(rec.Existing, id) {
			continue
		}
		doc, err := policyVersionDoc(ctx, cl, b.PolicyARN, id)
		if awsapi.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if sameJSON(doc, b.After) {
			if err := deletePolicyVersion(ctx, cl, b.PolicyARN, id); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *RightsizeManagedPolicy) open(ctx context.Context, a remediators.Action) (managedRightsizeBefore, *iam.Client, error) {
	var b managedRightsizeBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, nil, err
	}
	if b.PolicyARN == "" || b.VersionID == "" || len(b.Document) == 0 || len(b.After) == 0 || string(b.After) == "null" {
		return b, nil, fmt.Errorf("action %s: before-state names no policy, version or documents", a.ID)
	}
	cl, err := r.c.iam(ctx, a)
	return b, cl, err
}
