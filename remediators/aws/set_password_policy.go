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

// SetPasswordPolicy raises the account password policy (aws.iam.set_password_policy).
// Without the parameter setting, it raises the minimum length to 14 and the reuse
// prevention to 24 (CIS) where they are lower, every other setting kept; an account
// without a policy gets one with the CIS values, every character class required and
// users allowed to change their password. Rollback puts the stored policy back, or
// deletes the policy when there was none.
//
// With setting, it raises that one setting of an existing policy and nothing else: a
// character class (require_symbols, require_numbers, require_uppercase_characters,
// require_lowercase_characters) becomes required, or max_password_age is lowered to the
// parameter max_password_age (default 90 days) when passwords never expire or live
// longer. Each setting is its own part, whose before-state holds that setting alone, so
// fixes of different settings of one policy neither void each other's approvals nor undo
// each other on rollback.
type SetPasswordPolicy struct{ c clients }

// defaultMaxPasswordAge is the expiry a max_password_age fix sets when the violation
// names none.
const defaultMaxPasswordAge = 90

// settingBefore is the before-state of a one-setting part: the setting's observed value.
type settingBefore struct {
	Exists  bool   `json:"exists"`
	Setting string `json:"setting"`
	Bool    bool   `json:"value_bool,omitempty"`
	Int     int    `json:"value_int,omitempty"`
}

// classFlag is the field of p that holds a character-class setting, or nil for any other
// setting name.
func (p *passwordPolicy) classFlag(setting string) *bool {
	switch setting {
	case "require_symbols":
		return &p.RequireSymbols
	case "require_numbers":
		return &p.RequireNumbers
	case "require_uppercase_characters":
		return &p.RequireUppercase
	case "require_lowercase_characters":
		return &p.RequireLowercase
	}
	return nil
}

// settingBefore is the part of p that a fix of setting relies on.
func (p passwordPolicy) settingBefore(setting string) settingBefore {
	b := settingBefore{Exists: p.Exists, Setting: setting}
	if f := p.classFlag(setting); f != nil {
		b.Bool = *f
	} else {
		b.Int = p.MaxAge
	}
	return b
}

// meets reports whether p already has setting where the fix puts it (maxAge: the
// longest expiry allowed).
func (p passwordPolicy) meets(setting string, maxAge int) bool {
	if f := p.classFlag(setting); f != nil {
		return *f
	}
	return p.MaxAge > 0 && p.MaxAge <= maxAge
}

// raised is p with setting where the fix puts it.
func (p passwordPolicy) raised(setting string, maxAge int) passwordPolicy {
	if f := p.classFlag(setting); f != nil {
		*f = true
	} else {
		p.MaxAge = maxAge
	}
	return p
}

// restored is p with setting as b held it.
func (p passwordPolicy) restored(b settingBefore) passwordPolicy {
	if f := p.classFlag(b.Setting); f != nil {
		*f = b.Bool
	} else {
		p.MaxAge = b.Int
	}
	return p
}

// settingParams reads the parameters setting and max_password_age; setting "" asks for
// the CIS length and reuse.
func settingParams(params map[string]any) (setting string, maxAge int, err error) {
	setting, err = attr.Param(params, "setting", false)
	if err != nil {
		return "", 0, err
	}
	maxAge = defaultMaxPasswordAge
	if v, ok := params["max_password_age"]; ok && v != nil {
		n, ok := attr.ToInt(v)
		if !ok || n < 1 || n > 1095 {
			return "", 0, fmt.Errorf("parameter max_password_age: want a whole number of days from 1 to 1095 (IAM's range), got %v", v)
		}
		maxAge = n
	}
	if setting == "" || setting == "max_password_age" || (&passwordPolicy{}).classFlag(setting) != nil {
		return setting, maxAge, nil
	}
	return "", 0, fmt.Errorf("parameter setting: %q is not a password policy setting this fix raises (require_symbols, require_numbers, require_uppercase_characters, require_lowercase_characters, max_password_age)", setting)
}

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

// Spec implements remediators.Remediator.
func (*SetPasswordPolicy) Spec() remediators.Spec {
	return remediators.Spec{
		Action: "aws.iam.set_password_policy",
		Params: []remediators.Param{
			{Name: "setting", Doc: "the one setting to raise (require_symbols, require_numbers, require_uppercase_characters, require_lowercase_characters, max_password_age); without it, the CIS minimum length and reuse prevention"},
			{Name: "max_password_age", Doc: "with setting max_password_age: the longest password lifetime to set, in days (default 90)"},
		},
		ResourceTypes: []string{"aws.iam.password_policy"},
		Rollback:      remediators.Rollback{Possible: true},
		// The whole policy is read and written back; rollback of a policy that did not
		// exist deletes it.
		Permissions: remediators.Permissions{AWS: []string{"iam:DeleteAccountPasswordPolicy", "iam:GetAccountPasswordPolicy",
			"iam:UpdateAccountPasswordPolicy"}},
	}
}

// Targets is the password policy while it is absent or below the CIS values; with
// setting, the setting's part while the policy exists and the setting is below what the
// fix sets (an absent policy is the CIS part's to create).
func (*SetPasswordPolicy) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	setting, maxAge, err := settingParams(params)
	if err != nil {
		return nil, fmt.Errorf("password policy %s: %w", res.UID, err)
	}
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
	if setting != "" && exists {
		if p.meets(setting, maxAge) {
			return nil, nil
		}
		before, err := attr.Canonical(p.settingBefore(setting))
		if err != nil {
			return nil, err
		}
		return []remediators.Target{{Part: "password_policy/" + setting, Before: before}}, nil
	}
	if p.meetsCIS() {
		return nil, nil
	}
	// The before-state holds what this part changes, and whether there is a policy:
	// another setting's fix of the same policy is no drift of this one.
	before, err := attr.Canonical(cisBefore{Exists: p.Exists, MinLength: p.MinLength, ReusePrevention: p.ReusePrevention})
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: "password_policy", Before: before}}, nil
}

// cisBefore is the before-state of the CIS part: a passwordPolicy's fields that the part
// changes (a before-state of an older version, the whole policy, decodes the same).
type cisBefore struct {
	Exists          bool `json:"exists"`
	MinLength       int  `json:"minimum_password_length"`
	ReusePrevention int  `json:"password_reuse_prevention"`
}

// Apply raises the policy as IAM holds it now; ErrConverged when it already meets CIS
// (or, for one setting, already has it).
func (r *SetPasswordPolicy) Apply(ctx context.Context, a remediators.Action) error {
	setting, maxAge, err := settingParams(a.Params)
	if err != nil {
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
	if setting != "" && a.Part != "password_policy" {
		if !cur.Exists {
			// Planned on an existing policy: creating one here would write settings the
			// plan never showed.
			return fmt.Errorf("raise %s: the account password policy no longer exists", setting)
		}
		if cur.meets(setting, maxAge) {
			return remediators.ErrConverged
		}
		return writePasswordPolicy(ctx, cl, cur.raised(setting, maxAge))
	}
	if cur.meetsCIS() {
		return remediators.ErrConverged
	}
	return writePasswordPolicy(ctx, cl, cur.cis())
}

// Rollback restores the length and reuse prevention Apply raised (the policy's other
// settings as IAM holds them now), or deletes the policy Apply created.
func (r *SetPasswordPolicy) Rollback(ctx context.Context, a remediators.Action) error {
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	cur, err := readPasswordPolicy(ctx, cl)
	if err != nil {
		return err
	}
	if a.Part != "password_policy" {
		var sb settingBefore
		if err := attr.Decode(a.Before, &sb); err != nil {
			return err
		}
		if !cur.Exists {
			return fmt.Errorf("restore %s: the account password policy no longer exists", sb.Setting)
		}
		if back := cur.restored(sb); back != cur {
			return writePasswordPolicy(ctx, cl, back)
		}
		return nil
	}
	var b passwordPolicy
	if err := attr.Decode(a.Before, &b); err != nil {
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
	// Only what Apply changed goes back: other settings may have been fixed since.
	back := cur
	back.Exists, back.MinLength, back.ReusePrevention = true, b.MinLength, b.ReusePrevention
	if !cur.Exists {
		back = b // deleted since: put the stored policy back whole
		back.hardExpiry = cur.hardExpiry
	}
	if back == cur {
		return nil
	}
	return writePasswordPolicy(ctx, cl, back)
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
