package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// CIS AWS Foundations 3.0, 1.8 and 1.9: passwords of at least 14 characters, and none of
// the last 24 reused.
const (
	cisMinLength = 14
	cisReuse     = 24
)

// SetPasswordPolicy raises the account password policy to the CIS values
// (aws.iam.set_password_policy): the minimum length to 14 and the reuse prevention to 24
// where they are lower, every other setting kept. An account without a policy gets one
// with the CIS values, every character class required and users allowed to change their
// password. Rollback puts the stored policy back, or deletes the policy when there was
// none.
type SetPasswordPolicy struct{ c clients }

// NewSetPasswordPolicy returns the fix; s may be nil for planning only.
func NewSetPasswordPolicy(s *awsapi.Sessions) *SetPasswordPolicy {
	return &SetPasswordPolicy{clients{s}}
}

// passwordPolicy is the part, as the resource's attributes hold it.
type passwordPolicy struct {
	Exists           bool `json:"exists"`
	MinLength        int  `json:"minimum_password_length"`
	ReusePrevention  int  `json:"password_reuse_prevention"`
	RequireSymbols   bool `json:"require_symbols"`
	RequireNumbers   bool `json:"require_numbers"`
	RequireUppercase bool `json:"require_uppercase_characters"`
	RequireLowercase bool `json:"require_lowercase_characters"`
	AllowChange      bool `json:"allow_users_to_change_password"`
	MaxAge           int  `json:"max_password_age"`
	// hardExpiry is read from IAM, not from the snapshot (which does not hold it): kept
	// as it is when the policy is rewritten.
	hardExpiry bool
}

func (p passwordPolicy) meetsCIS() bool {
	return p.Exists && p.MinLength >= cisMinLength && p.ReusePrevention >= cisReuse
}

// cis is p raised to the CIS values.
func (p passwordPolicy) cis() passwordPolicy {
	if !p.Exists {
		return passwordPolicy{Exists: true, MinLength: cisMinLength, ReusePrevention: cisReuse, RequireSymbols: true,
			RequireNumbers: true, RequireUppercase: true, RequireLowercase: true, AllowChange: true}
	}
	p.MinLength = max(p.MinLength, cisMinLength)
	p.ReusePrevention = max(p.ReusePrevention, cisReuse)
	return p
}

// Action implements remediators.Remediator.
func (*SetPasswordPolicy) Action() string { return "aws.iam.set_password_policy" }

// Params implements remediators.Remediator.
func (*SetPasswordPolicy) Params() []remediators.Param { return nil }

// ResourceTypes implements remediators.Remediator.
func (*SetPasswordPolicy) ResourceTypes() []string { return []string{"aws.iam.password_policy"} }

// CanRollback implements remediators.Remediator.
func (*SetPasswordPolicy) CanRollback() remediators.Rollback {
	return remediators.Rollback{Possible: true}
}

// Targets is the password policy while it is absent or below the CIS values.
func (*SetPasswordPolicy) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	at := res.Attributes
	exists, ok := attr.Bool(at, "exists")
	if !ok {
		return nil, fmt.Errorf("password policy %s: no exists attribute", res.UID)
	}
	p := passwordPolicy{Exists: exists}
	if exists {
		p.MinLength, _ = attr.Int(at, "minimum_password_length")
		p.ReusePrevention, _ = attr.Int(at, "password_reuse_prevention")
		p.RequireSymbols, _ = attr.Bool(at, "require_symbols")
		p.RequireNumbers, _ = attr.Bool(at, "require_numbers")
		p.RequireUppercase, _ = attr.Bool(at, "require_uppercase_characters")
		p.RequireLowercase, _ = attr.Bool(at, "require_lowercase_characters")
		p.AllowChange, _ = attr.Bool(at, "allow_users_to_change_password")
		p.MaxAge, _ = attr.Int(at, "max_password_age")
	}
	if p.meetsCIS() {
		return nil, nil
	}
	before, err := attr.Canonical(p)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: "password_policy", Before: before}}, nil
}

// Apply raises the policy as IAM holds it now; ErrConverged when it already meets CIS.
func (r *SetPasswordPolicy) Apply(ctx context.Context, a remediators.Action) error {
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	cur, err := readPasswordPolicy(ctx, cl)
	if err != nil {
		return err
	}
	if cur.meetsCIS() {
		return remediators.ErrConverged
	}
	return writePasswordPolicy(ctx, cl, cur.cis())
}

// Rollback restores the stored policy (its hard expiry as IAM holds it now: the
// snapshot does not record it and Apply keeps it), or deletes the policy Apply created.
func (r *SetPasswordPolicy) Rollback(ctx context.Context, a remediators.Action) error {
	var b passwordPolicy
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	cur, err := readPasswordPolicy(ctx, cl)
	if err != nil {
		return err
	}
	if !b.Exists {
		if !cur.Exists {
			return nil
		}
		_, err := cl.DeleteAccountPasswordPolicy(ctx, &iam.DeleteAccountPasswordPolicyInput{})
		if err != nil && !awsapi.IsNotFound(err) {
			return callErr("delete the account password policy", err)
		}
		return nil
	}
	b.hardExpiry = cur.hardExpiry
	if cur == b {
		return nil
	}
	return writePasswordPolicy(ctx, cl, b)
}

// readPasswordPolicy reads the account's policy; Exists false when it has none.
func readPasswordPolicy(ctx context.Context, cl *iam.Client) (passwordPolicy, error) {
	out, err := cl.GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
	if awsapi.IsNotFound(err) {
		return passwordPolicy{}, nil
	}
	if err != nil {
		return passwordPolicy{}, callErr("read the account password policy", err)
	}
	pp := out.PasswordPolicy
	return passwordPolicy{Exists: true, MinLength: int(aws.ToInt32(pp.MinimumPasswordLength)),
		ReusePrevention: int(aws.ToInt32(pp.PasswordReusePrevention)), RequireSymbols: pp.RequireSymbols,
		RequireNumbers: pp.RequireNumbers, RequireUppercase: pp.RequireUppercaseCharacters,
		RequireLowercase: pp.RequireLowercaseCharacters, AllowChange: pp.AllowUsersToChangePassword,
		MaxAge: int(aws.ToInt32(pp.MaxPasswordAge)), hardExpiry: aws.ToBool(pp.HardExpiry)}, nil
}

// writePasswordPolicy replaces the whole policy with p: IAM resets what a call leaves
// out, so every setting is sent.
func writePasswordPolicy(ctx context.Context, cl *iam.Client, p passwordPolicy) error {
	in := &iam.UpdateAccountPasswordPolicyInput{
		MinimumPasswordLength: aws.Int32(int32(p.MinLength)), RequireSymbols: p.RequireSymbols,
		RequireNumbers: p.RequireNumbers, RequireUppercaseCharacters: p.RequireUppercase,
		RequireLowercaseCharacters: p.RequireLowercase, AllowUsersToChangePassword: p.AllowChange,
		HardExpiry: aws.Bool(p.hardExpiry),
	}
	// Zero means "not set" for these: IAM refuses 0 (their ranges start at 1).
	if p.ReusePrevention > 0 {
		in.PasswordReusePrevention = aws.Int32(int32(p.ReusePrevention))
	}
	if p.MaxAge > 0 {
		in.MaxPasswordAge = aws.Int32(int32(p.MaxAge))
	}
	if _, err := cl.UpdateAccountPasswordPolicy(ctx, in); err != nil {
		return callErr("update the account password policy", err)
	}
	return nil
}
