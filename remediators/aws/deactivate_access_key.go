package aws

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// DeactivateAccessKey sets one access key Inactive (aws.iam.deactivate_access_key): the
// key stops authenticating but is kept, so that Rollback can reactivate it.
type DeactivateAccessKey struct{ c clients }

// NewDeactivateAccessKey returns the fix; s may be nil for planning only.
func NewDeactivateAccessKey(s *awsapi.Sessions) *DeactivateAccessKey {
	return &DeactivateAccessKey{clients{s}}
}

// accessKeyBefore is the part: the key, its user, and what the finding relied on.
type accessKeyBefore struct {
	AccessKeyID string `json:"access_key_id"`
	UserName    string `json:"user_name"`
	Status      string `json:"status"`
	LastUsed    any    `json:"last_used"`
}

// Spec implements remediators.Remediator. The key is the resource itself: no params.
func (*DeactivateAccessKey) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.iam.deactivate_access_key",
		ResourceTypes: []string{"aws.iam.access_key"},
		Rollback:      remediators.Rollback{Possible: true},
		// A key unused long enough to deactivate needs no rotation, whose hand-over would
		// give its (absent) users a new key.
		Supersedes: []string{"aws.iam.rotate_access_key"},
		// The key's status is read in the user's key list before it is set, either way.
		Permissions: remediators.Permissions{AWS: []string{"iam:ListAccessKeys", "iam:UpdateAccessKey"}},
	}
}

// Targets is the key while it is Active.
func (*DeactivateAccessKey) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	at := res.Attributes
	if attr.String(at, "status") != "Active" {
		return nil, nil
	}
	b := accessKeyBefore{AccessKeyID: attr.String(at, "access_key_id"), UserName: attr.String(at, "user_name"),
		Status: "Active", LastUsed: at["last_used"]}
	// The uid is arn:…:user/NAME/accesskey/AKIA…: it names both when the attributes do not.
	if user, key, ok := strings.Cut(res.UID, "/accesskey/"); ok {
		if b.AccessKeyID == "" {
			b.AccessKeyID = key
		}
		if b.UserName == "" {
			b.UserName = attr.LastSegment(user)
		}
	}
	if b.AccessKeyID == "" || b.UserName == "" {
		return nil, fmt.Errorf("access key %s: no access_key_id or user_name", res.UID)
	}
	before, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: b.AccessKeyID, Before: before}}, nil
}

// Apply deactivates the key, unless it is already inactive or gone.
func (r *DeactivateAccessKey) Apply(ctx context.Context, a remediators.Action) error {
	return r.set(ctx, a, iamtypes.StatusTypeInactive)
}

// Rollback reactivates the key. A key deleted since cannot be brought back: that is an
// error, not a success.
func (r *DeactivateAccessKey) Rollback(ctx context.Context, a remediators.Action) error {
	err := r.set(ctx, a, iamtypes.StatusTypeActive)
	if errors.Is(err, remediators.ErrConverged) {
		return nil
	}
	return err
}

// set moves the key to status, reading it first: ErrConverged when it is already there
// (or, when deactivating, gone).
func (r *DeactivateAccessKey) set(ctx context.Context, a remediators.Action, status iamtypes.StatusType) error {
	var b accessKeyBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	cur, err := keyStatus(ctx, cl, b.UserName, b.AccessKeyID)
	switch {
	case awsapi.IsNotFound(err) && status == iamtypes.StatusTypeInactive:
		return remediators.ErrConverged // the user is gone, and its keys with it
	case err != nil:
		return err
	case cur == "" && status == iamtypes.StatusTypeInactive:
		return remediators.ErrConverged
	case cur == "":
		return fmt.Errorf("reactivate access key %s of %s: the key no longer exists", b.AccessKeyID, b.UserName)
	case cur == status:
		return remediators.ErrConverged
	}
	_, err = cl.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String(b.UserName),
		AccessKeyId: aws.String(b.AccessKeyID), Status: status})
	if awsapi.IsNotFound(err) && status == iamtypes.StatusTypeInactive {
		return remediators.ErrConverged
	}
	if err != nil {
		return callErr(fmt.Sprintf("set access key %s of %s %s", b.AccessKeyID, b.UserName, status), err)
	}
	return nil
}

// keyStatus reads the status of one key of a user; "" when the user has no such key.
func keyStatus(ctx context.Context, cl *iam.Client, user, id string) (iamtypes.StatusType, error) {
	p := iam.NewListAccessKeysPaginator(cl, &iam.ListAccessKeysInput{UserName: aws.String(user)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", callErr("list access keys of "+user, err)
		}
		for _, k := range page.AccessKeyMetadata {
			if aws.ToString(k.AccessKeyId) == id {
				return k.Status, nil
			}
		}
	}
	return "", nil
}
