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

// DeleteLoginProfile removes a user's console password (aws.iam.delete_login_profile).
// It cannot be rolled back: IAM never discloses a password, so the old one is lost.
type DeleteLoginProfile struct{ c clients }

// NewDeleteLoginProfile returns the fix; s may be nil for planning only.
func NewDeleteLoginProfile(s *awsapi.Sessions) *DeleteLoginProfile {
	return &DeleteLoginProfile{clients{s}}
}

// loginProfileBefore is the part: the user's password, and when it was last used (a
// sign-in since the plan is drift: the password is in use after all).
type loginProfileBefore struct {
	User             string `json:"user"`
	PasswordEnabled  bool   `json:"password_enabled"`
	PasswordLastUsed any    `json:"password_last_used"`
}

// Spec implements remediators.Remediator.
func (*DeleteLoginProfile) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.iam.delete_login_profile",
		ResourceTypes: []string{"aws.iam.user"},
		Rollback:      remediators.Rollback{Reason: "IAM never discloses a console password: a deleted one cannot be restored, only replaced by a new one"},
		Permissions:   remediators.Permissions{AWS: []string{"iam:DeleteLoginProfile", "iam:GetLoginProfile"}},
	}
}

// Targets is the user's login profile while the user has a password.
func (*DeleteLoginProfile) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	if on, _ := attr.Bool(res.Attributes, "password_enabled"); !on {
		return nil, nil
	}
	before, err := attr.Canonical(loginProfileBefore{User: principalName(res), PasswordEnabled: true,
		PasswordLastUsed: res.Attributes["password_last_used"]})
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: "login_profile", Before: before}}, nil
}

// Apply deletes the login profile; ErrConverged when the user has none (or is gone).
func (r *DeleteLoginProfile) Apply(ctx context.Context, a remediators.Action) error {
	var b loginProfileBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	if b.User == "" {
		return fmt.Errorf("action %s: before-state names no user", a.ID)
	}
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	if _, err := cl.GetLoginProfile(ctx, &iam.GetLoginProfileInput{UserName: aws.String(b.User)}); awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	} else if err != nil {
		return callErr("read the login profile of "+b.User, err)
	}
	_, err = cl.DeleteLoginProfile(ctx, &iam.DeleteLoginProfileInput{UserName: aws.String(b.User)})
	if awsapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	if err != nil {
		return callErr("delete the login profile of "+b.User, err)
	}
	return nil
}

// Rollback is impossible (CanRollback says why).
func (*DeleteLoginProfile) Rollback(context.Context, remediators.Action) error {
	return remediators.ErrNoRollback
}
