// Package aws holds warden's fixes of AWS drift, one file each: deactivate an access key,
// detach a managed policy from one user, group or role or delete one inline policy,
// remove an open principal from a trust policy, strengthen the password policy, delete a
// login profile or an expired server certificate, revoke one security-group rule, and
// narrow grants to what was used (an inline policy, a customer-managed policy, or a broad
// AWS-managed policy replaced by one of the services used). Each reads before it writes,
// so that Apply on a part already fixed returns remediators.ErrConverged without a write
// call, and each calls AWS through the shared, paced clients of internal/awsapi.
package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
)

// errNoSessions is the error of a fix asked to call AWS without AWS sessions: a registry
// built for planning only.
var errNoSessions = errors.New("no AWS sessions: this warden was not given AWS credentials")

// clients opens the account of an action and hands out its paced clients.
type clients struct{ s *awsapi.Sessions }

func (c clients) iam(ctx context.Context, a remediators.Action) (*iam.Client, error) {
	acct, err := c.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return acct.IAM(), nil
}

func (c clients) ec2(ctx context.Context, a remediators.Action) (*ec2.Client, error) {
	if a.Region == "" || a.Region == "global" {
		return nil, fmt.Errorf("action %s: security group %s has no region", a.ID, a.Target)
	}
	acct, err := c.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return acct.EC2(a.Region), nil
}

func (c clients) account(ctx context.Context, a remediators.Action) (*awsapi.Account, error) {
	if c.s == nil {
		return nil, errNoSessions
	}
	acct, err := c.s.Account(ctx, a.Account)
	if err != nil {
		return nil, fmt.Errorf("open account %s: %w", a.Account, err)
	}
	return acct, nil
}

// callErr wraps a failed AWS call with what it was doing, its secrets redacted. A denied
// or throttled call stays an error (never "already gone"): callers test IsNotFound first.
func callErr(what string, err error) error {
	return fmt.Errorf("%s: %w", what, awsapi.Redact(err))
}

// All returns every AWS fix, calling AWS through s (nil: planning only).
func All(s *awsapi.Sessions) []remediators.Remediator {
	return []remediators.Remediator{
		NewDeactivateAccessKey(s), NewDetachPolicy(s), NewUpdateTrustPolicy(s), NewSetPasswordPolicy(s),
		NewDeleteLoginProfile(s), NewDeleteServerCertificate(s), NewRevokeIngress(s), NewRevokeDefaultSGRules(s),
		NewRightsizeInlinePolicy(s), NewRightsizeManagedPolicy(s), NewReplaceManagedAttachment(s),
	}
}
