package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// UpdateTrustPolicy takes an open principal out of a role's trust policy
// (aws.iam.update_trust_policy, parameter principal: "*", or a public identity provider
// such as token.actions.githubusercontent.com). The principal is removed from each Allow
// statement without a Condition that names it; a statement left with no principal (or one
// that trusted everyone, Principal "*" or NotPrincipal) is removed whole. Other statements,
// and conditional ones, are kept as they are. Rollback puts the stored document back.
type UpdateTrustPolicy struct{ c clients }

// NewUpdateTrustPolicy returns the fix; s may be nil for planning only.
func NewUpdateTrustPolicy(s *awsapi.Sessions) *UpdateTrustPolicy {
	return &UpdateTrustPolicy{clients{s}}
}

// trustBefore is the part: the role's whole trust policy, and the principal taken out.
type trustBefore struct {
	Role      string          `json:"role"`
	Principal string          `json:"principal"`
	Document  json.RawMessage `json:"document"`
}

// noTrust is the trust policy of a role whose every statement was open: IAM wants a
// statement, and this one lets nobody assume the role.
const noTrust = `{"Version":"2012-10-17","Statement":[{"Sid":"WardenNoTrust","Effect":"Deny","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}`

// Spec implements remediators.Remediator.
func (*UpdateTrustPolicy) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.iam.update_trust_policy",
		Params:        []remediators.Param{{Name: "principal", Required: true, Doc: `the open principal to remove from the trust policy ("*", a public identity provider)`}},
		ResourceTypes: []string{"aws.iam.role"},
		Rollback:      remediators.Rollback{Possible: true},
		Permissions:   remediators.Permissions{AWS: []string{"iam:GetRole", "iam:UpdateAssumeRolePolicy"}},
	}
}

// Targets is the trust policy while it trusts the principal without a condition.
func (*UpdateTrustPolicy) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	principal, err := attr.Param(params, "principal", true)
	if err != nil {
		return nil, err
	}
	doc, ok := res.Attributes["assume_role_policy"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("role %s: no assume_role_policy document", res.UID)
	}
	if _, changed := withoutPrincipal(doc, principal); !changed {
		return nil, nil
	}
	raw, err := attr.Canonical(doc)
	if err != nil {
		return nil, err
	}
	before, err := attr.Canonical(trustBefore{Role: principalName(res), Principal: principal, Document: raw})
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: "trust/" + principal, Before: before}}, nil
}

// Apply writes the role's current trust policy without the principal; ErrConverged when
// it no longer trusts it (or the role is gone).
func (r *UpdateTrustPolicy) Apply(ctx context.Context, a remediators.Action) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	cur, err := trustPolicy(ctx, cl, b.Role)
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	if err != nil {
		return err
	}
	fixed, changed := withoutPrincipal(cur, b.Principal)
	if !changed {
		return remediators.ErrConverged
	}
	doc, err := json.Marshal(fixed)
	if err != nil {
		return fmt.Errorf("encode the trust policy of %s: %w", b.Role, err)
	}
	if isEmptyList(fixed["Statement"]) {
		doc = []byte(noTrust)
	}
	err = updateTrust(ctx, cl, b.Role, string(doc))
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	return err
}

func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

// Rollback puts the stored trust policy back.
func (r *UpdateTrustPolicy) Rollback(ctx context.Context, a remediators.Action) error {
	b, cl, err := r.open(ctx, a)
	if err != nil {
		return err
	}
	cur, err := trustPolicy(ctx, cl, b.Role)
	if err != nil {
		return err
	}
	if c, err := attr.Canonical(cur); err == nil && sameJSON(string(c), b.Document) {
		return nil
	}
	return updateTrust(ctx, cl, b.Role, string(b.Document))
}

func (r *UpdateTrustPolicy) open(ctx context.Context, a remediators.Action) (trustBefore, *iam.Client, error) {
	var b trustBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, nil, err
	}
	if b.Role == "" || b.Principal == "" || len(b.Document) == 0 {
		return b, nil, fmt.Errorf("action %s: before-state names no role, principal or document", a.ID)
	}
	cl, err := r.c.iam(ctx, a)
	return b, cl, err
}

// trustPolicy reads a role's trust policy as a JSON value.
func trustPolicy(ctx context.Context, cl *iam.Client, role string) (map[string]any, error) {
	out, err := cl.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
	if err != nil {
		return nil, callErr("read role "+role, err)
	}
	text, err := decodeDocument(aws.ToString(out.Role.AssumeRolePolicyDocument))
	if err != nil {
		return nil, fmt.Errorf("trust policy of %s: %w", role, err)
	}
	var doc map[string]any
	if err := attr.Decode(json.RawMessage(text), &doc); err != nil {
		return nil, fmt.Errorf("trust policy of %s: %w", role, err)
	}
	return doc, nil
}

func updateTrust(ctx context.Context, cl *iam.Client, role, doc string) error {
	if _, err := cl.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String(role), PolicyDocument: aws.String(doc)}); err != nil {
		return callErr("update the trust policy of "+role, err)
	}
	return nil
}

// withoutPrincipal returns a copy of the trust policy doc with principal taken out of
// every unconditional Allow statement, and whether anything changed. doc is not modified.
func withoutPrincipal(doc map[string]any, principal string) (map[string]any, bool) {
	var stmts []any
	single := false
	switch s := doc["Statement"].(type) {
	case []any:
		stmts = s
	case map[string]any:
		stmts, single = []any{s}, true
	default:
		return doc, false
	}
	changed := false
	var kept []any
	for _, e := range stmts {
		s, ok := e.(map[string]any)
		if !ok || s["Effect"] != "Allow" || len(attr.Map(s, "Condition")) > 0 {
			kept = append(kept, e)
			continue
		}
		next, drop, ch := statementWithout(s, principal)
		changed = changed || ch
		if !drop {
			kept = append(kept, next)
		}
	}
	if !changed {
		return doc, false
	}
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	switch {
	case single && len(kept) == 1:
		out["Statement"] = kept[0]
	case kept == nil:
		out["Statement"] = []any{}
	default:
		out["Statement"] = kept
	}
	return out, true
}

// statementWithout removes principal from one Allow statement: the statement returned,
// whether to drop it, and whether it changed.
func statementWithout(s map[string]any, principal string) (map[string]any, bool, bool) {
	if _, ok := s["NotPrincipal"]; ok {
		// Allow with NotPrincipal trusts everyone but the named.
		return s, principal == "*", principal == "*"
	}
	switch p := s["Principal"].(type) {
	case string:
		return s, p == principal, p == principal
	case map[string]any:
		np := map[string]any{}
		changed := false
		for kind, vals := range p {
			var list []any
			wasList := true
			switch v := vals.(type) {
			case []any:
				list = v
			default:
				list, wasList = []any{v}, false
			}
			rest := slices.DeleteFunc(slices.Clone(list), func(x any) bool { return x == principal })
			if len(rest) != len(list) {
				changed = true
			}
			switch {
			case len(rest) == 0:
			case !wasList:
				np[kind] = rest[0]
			default:
				np[kind] = rest
			}
		}
		if !changed {
			return s, false, false
		}
		if len(np) == 0 {
			return s, true, true
		}
		ns := make(map[string]any, len(s))
		for k, v := range s {
			ns[k] = v
		}
		ns["Principal"] = np
		return ns, false, true
	}
	return s, false, false
}
