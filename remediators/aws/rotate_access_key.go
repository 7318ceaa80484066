package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// The steps of a rotation, each recorded before the next runs.
const (
	stepChecked     = "checked"     // the user has room for a second key
	stepCreating    = "creating"    // about to create the new key: a key that appears now is ours
	stepStored      = "stored"      // the new key exists and is in Secrets Manager; the grace period runs
	stepDeactivated = "deactivated" // the old key is inactive; the deletion period runs
	stepDeleted     = "deleted"     // the old key is gone: done
)

// RotateAccessKey rotates one access key without breaking its users
// (aws.iam.rotate_access_key): it creates a second key and stores it in AWS Secrets
// Manager, waits a grace period for the key's users to pick it up, holds if the old key
// is still used after the new one was stored, deactivates the old key, and deletes it
// after a second period. Each step is idempotent and recorded by the caller before the
// next (remediators.Stepper), so a crash resumes at the right step.
type RotateAccessKey struct {
	c   clients
	cfg RotationConfig
}

// NewRotateAccessKey returns the fix; s may be nil for planning only. Zero fields of cfg
// take their defaults.
func NewRotateAccessKey(s *awsapi.Sessions, cfg RotationConfig) *RotateAccessKey {
	return &RotateAccessKey{c: clients{s}, cfg: cfg.withDefaults()}
}

// rotation is what the steps record (Progress.Data): ids only, never the secret.
type rotation struct {
	KeysBefore []string `json:"keys_before,omitempty"`
	NewKey     string   `json:"new_key,omitempty"`
	SecretName string   `json:"secret_name,omitempty"`
	SecretARN  string   `json:"secret_arn,omitempty"`
	// Version is the secret version holding the new key; Previous the version that was
	// current before it ("" when the secret was created for it).
	Version  string    `json:"version,omitempty"`
	Previous string    `json:"previous,omitempty"`
	Created  bool      `json:"created_secret,omitempty"`
	StoredAt time.Time `json:"stored_at,omitzero"`
	// CheckedAt is when a hold last found the old key in use.
	CheckedAt time.Time `json:"checked_at,omitzero"`
}

// secretValue is what the secret holds: what a client needs to authenticate.
type secretValue struct {
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string `json:"SecretAccessKey"`
	UserName        string `json:"UserName"`
	CreatedAt       string `json:"CreatedAt"`
}

// Spec implements remediators.Remediator. The key is the resource itself: no params.
func (*RotateAccessKey) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "aws.iam.rotate_access_key",
		ResourceTypes: []string{"aws.iam.access_key"},
		Rollback:      remediators.Rollback{Possible: true, Reason: "until the old key is deleted: before its deactivation the new key and its secret version are removed, after it the old key is reactivated"},
		// The steps create, deactivate and delete keys and hand the new one over in
		// Secrets Manager; Undo deletes the new key and its secret, or makes the secret's
		// previous version current again.
		Permissions: remediators.Permissions{AWS: []string{"iam:CreateAccessKey", "iam:DeleteAccessKey", "iam:GetAccessKeyLastUsed",
			"iam:ListAccessKeys", "iam:UpdateAccessKey", "secretsmanager:CreateSecret", "secretsmanager:DeleteSecret",
			"secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue", "secretsmanager:UpdateSecretVersionStage"}},
	}
}

// Targets is the key while it is Active, as for deactivation.
func (*RotateAccessKey) Targets(res snapshot.Resource, params map[string]any) ([]remediators.Target, error) {
	return (&DeactivateAccessKey{}).Targets(res, params)
}

// Apply is not used: the caller runs the steps.
func (r *RotateAccessKey) Apply(context.Context, remediators.Action) error {
	return errors.New("aws.iam.rotate_access_key runs in steps (remediators.Stepper), not as one call")
}

// Rollback is not used: the caller undoes the steps (Undo).
func (r *RotateAccessKey) Rollback(context.Context, remediators.Action) error {
	return errors.New("aws.iam.rotate_access_key is undone from its progress (remediators.Stepper), not as one call")
}

// Step implements remediators.Stepper.
func (r *RotateAccessKey) Step(ctx context.Context, a remediators.Action, p remediators.Progress, now time.Time) (remediators.Progress, error) {
	var b accessKeyBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return p, err
	}
	var d rotation
	if len(p.Data) > 0 {
		if err := json.Unmarshal(p.Data, &d); err != nil {
			return p, fmt.Errorf("rotation of %s: read progress: %w", b.AccessKeyID, err)
		}
	}
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return p, err
	}
	next := func(step string, due time.Time, hold string) (remediators.Progress, error) {
		data, err := json.Marshal(d)
		if err != nil {
			return p, err
		}
		return remediators.Progress{Step: step, Due: due, Hold: hold, Data: data, Done: step == stepDeleted}, nil
	}
	switch p.Step {
	case "":
		keys, err := listKeys(ctx, cl, b.UserName)
		if err != nil {
			return p, err
		}
		if !slices.Contains(keys, b.AccessKeyID) {
			// Gone already: nothing to rotate, and the finding with it.
			return next(stepDeleted, time.Time{}, "")
		}
		if len(keys) >= 2 {
			return p, fmt.Errorf("user %s already has two access keys (%s): AWS allows no third, and warden does not pick one to delete; remove the unused key, then plan again", b.UserName, strings.Join(keys, ", "))
		}
		d.KeysBefore = keys
		d.SecretName = r.cfg.secretName(a.Account, b.UserName, b.AccessKeyID)
		return next(stepChecked, time.Time{}, "")
	case stepChecked:
		return next(stepCreating, time.Time{}, "")
	case stepCreating:
		if err := r.createAndStore(ctx, cl, a, b, &d, now); err != nil {
			return p, err
		}
		return next(stepStored, now.Add(r.cfg.Grace), "")
	case stepStored:
		used, err := lastUsed(ctx, cl, b.AccessKeyID)
		if err != nil {
			return p, err
		}
		// Used since the new key was stored (or, once held, since the last check): its
		// users still depend on it. A hold looks again after the recheck period.
		since := d.StoredAt
		if d.CheckedAt.After(since) {
			since = d.CheckedAt
		}
		if used.After(since) {
			hold := fmt.Sprintf("the old key %s was used at %s, after the new key %s was stored at %s: its users have not moved to the new key yet",
				b.AccessKeyID, used.UTC().Format(time.RFC3339), d.NewKey, d.StoredAt.UTC().Format(time.RFC3339))
			d.CheckedAt = now
			return next(stepStored, now.Add(r.cfg.Recheck), hold)
		}
		if err := setKeyStatus(ctx, cl, b.UserName, b.AccessKeyID, iamtypes.StatusTypeInactive); err != nil {
			return p, err
		}
		return next(stepDeactivated, now.Add(r.cfg.DeleteAfter), "")
	case stepDeactivated:
		_, err := cl.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(b.UserName), AccessKeyId: aws.String(b.AccessKeyID)})
		if err != nil && !awsapi.IsNotFound(err) {
			return p, callErr(fmt.Sprintf("delete access key %s of %s", b.AccessKeyID, b.UserName), err)
		}
		return next(stepDeleted, time.Time{}, "")
	}
	return p, fmt.Errorf("rotation of %s: unknown step %q", b.AccessKeyID, p.Step)
}

// createAndStore creates the new key and stores it. After a crash in its middle it finds
// what the interrupted attempt did: a key created since the creating step that the
// secret holds is adopted; one the secret does not hold (its secret was lost with the
// process) is deleted and created again.
func (r *RotateAccessKey) createAndStore(ctx context.Context, cl *iam.Client, a remediators.Action, b accessKeyBefore, d *rotation, now time.Time) error {
	sm, err := r.secrets(ctx, a)
	if err != nil {
		return err
	}
	keys, err := listKeys(ctx, cl, b.UserName)
	if err != nil {
		return err
	}
	held, err := currentSecret(ctx, sm, d.SecretName)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if slices.Contains(d.KeysBefore, k) {
			continue
		}
		if held.AccessKeyID == k {
			return describeVersions(ctx, sm, d, k, now)
		}
		if _, err := cl.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(b.UserName), AccessKeyId: aws.String(k)}); err != nil && !awsapi.IsNotFound(err) {
			return callErr(fmt.Sprintf("delete the unstored key %s of %s left by an interrupted rotation", k, b.UserName), err)
		}
	}
	out, err := cl.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String(b.UserName)})
	if err != nil {
		return callErr("create a new access key for "+b.UserName, err)
	}
	k := out.AccessKey
	value, err := json.Marshal(secretValue{AccessKeyID: aws.ToString(k.AccessKeyId), SecretAccessKey: aws.ToString(k.SecretAccessKey),
		UserName: b.UserName, CreatedAt: aws.ToTime(k.CreateDate).UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	// The token makes the store idempotent: a retried call stores one version.
	token := requestToken(a.ID, aws.ToString(k.AccessKeyId))
	if held.exists {
		d.Previous = held.version
		_, err = sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(d.SecretName),
			SecretString: aws.String(string(value)), ClientRequestToken: aws.String(token)})
	} else {
		d.Created = true
		_, err = sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(d.SecretName), SecretString: aws.String(string(value)),
			ClientRequestToken: aws.String(token), Description: aws.String(fmt.Sprintf("Access key of IAM user %s, rotated by warden (action %s)", b.UserName, a.ID))})
	}
	if err != nil {
		return callErr(fmt.Sprintf("store the new key %s of %s in secret %s", aws.ToString(k.AccessKeyId), b.UserName, d.SecretName), err)
	}
	return describeVersions(ctx, sm, d, aws.ToString(k.AccessKeyId), now)
}

// describeVersions records the secret's ARN and the version holding the new key.
func describeVersions(ctx context.Context, sm *secretsmanager.Client, d *rotation, key string, now time.Time) error {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(d.SecretName)})
	if err != nil {
		return callErr("read back secret "+d.SecretName, err)
	}
	d.NewKey, d.SecretARN, d.Version = key, aws.ToString(out.ARN), aws.ToString(out.VersionId)
	if d.StoredAt.IsZero() {
		d.StoredAt = now
	}
	return nil
}

// Undo implements remediators.Stepper.
func (r *RotateAccessKey) Undo(ctx context.Context, a remediators.Action, p remediators.Progress) error {
	var b accessKeyBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return err
	}
	var d rotation
	if len(p.Data) > 0 {
		if err := json.Unmarshal(p.Data, &d); err != nil {
			return fmt.Errorf("rotation of %s: read progress: %w", b.AccessKeyID, err)
		}
	}
	cl, err := r.c.iam(ctx, a)
	if err != nil {
		return err
	}
	switch p.Step {
	case "", stepChecked:
		return nil
	case stepCreating, stepStored:
		return r.undoNewKey(ctx, cl, a, b, d)
	case stepDeactivated:
		return setKeyStatus(ctx, cl, b.UserName, b.AccessKeyID, iamtypes.StatusTypeActive)
	case stepDeleted:
		return fmt.Errorf("%w: the old key %s is deleted", remediators.ErrNoRollback, b.AccessKeyID)
	}
	return fmt.Errorf("rotation of %s: unknown step %q", b.AccessKeyID, p.Step)
}

// undoNewKey deletes the new key (and any key the interrupted creation left) and takes
// its version out of the secret: the secret is deleted when the rotation created it,
// else its previous version is made current again.
func (r *RotateAccessKey) undoNewKey(ctx context.Context, cl *iam.Client, a remediators.Action, b accessKeyBefore, d rotation) error {
	keys, err := listKeys(ctx, cl, b.UserName)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if slices.Contains(d.KeysBefore, k) || k == b.AccessKeyID {
			continue
		}
		if _, err := cl.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(b.UserName), AccessKeyId: aws.String(k)}); err != nil && !awsapi.IsNotFound(err) {
			return callErr(fmt.Sprintf("delete the new key %s of %s", k, b.UserName), err)
		}
	}
	if d.Version == "" {
		return nil
	}
	sm, err := r.secrets(ctx, a)
	if err != nil {
		return err
	}
	if d.Created {
		_, err := sm.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(d.SecretName), ForceDeleteWithoutRecovery: aws.Bool(true)})
		if err != nil && !awsapi.IsNotFound(err) {
			return callErr("delete secret "+d.SecretName, err)
		}
		return nil
	}
	if _, err := sm.UpdateSecretVersionStage(ctx, &secretsmanager.UpdateSecretVersionStageInput{SecretId: aws.String(d.SecretName),
		VersionStage: aws.String("AWSCURRENT"), MoveToVersionId: aws.String(d.Previous), RemoveFromVersionId: aws.String(d.Version)}); err != nil {
		return callErr("make the previous version of "+d.SecretName+" current again", err)
	}
	return nil
}

func (r *RotateAccessKey) secrets(ctx context.Context, a remediators.Action) (*secretsmanager.Client, error) {
	acct, err := r.c.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return acct.SecretsManager(r.cfg.Region), nil
}

// heldSecret is the secret's current value, as far as a rotation cares.
type heldSecret struct {
	exists      bool
	version     string
	AccessKeyID string
}

func currentSecret(ctx context.Context, sm *secretsmanager.Client, name string) (heldSecret, error) {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)})
	if awsapi.IsNotFound(err) {
		return heldSecret{}, nil
	}
	if err != nil {
		return heldSecret{}, callErr("read secret "+name, err)
	}
	h := heldSecret{exists: true, version: aws.ToString(out.VersionId)}
	var v secretValue
	// A secret that does not hold a key of ours is kept as a previous version; only its
	// key id matters here, and never its secret.
	if json.Unmarshal([]byte(aws.ToString(out.SecretString)), &v) == nil {
		h.AccessKeyID = v.AccessKeyID
	}
	return h, nil
}

func listKeys(ctx context.Context, cl *iam.Client, user string) ([]string, error) {
	var out []string
	p := iam.NewListAccessKeysPaginator(cl, &iam.ListAccessKeysInput{UserName: aws.String(user)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, callErr("list access keys of "+user, err)
		}
		for _, k := range page.AccessKeyMetadata {
			out = append(out, aws.ToString(k.AccessKeyId))
		}
	}
	return out, nil
}

// lastUsed is when a key last authenticated (zero: never).
func lastUsed(ctx context.Context, cl *iam.Client, key string) (time.Time, error) {
	out, err := cl.GetAccessKeyLastUsed(ctx, &iam.GetAccessKeyLastUsedInput{AccessKeyId: aws.String(key)})
	if err != nil {
		return time.Time{}, callErr("read the last use of access key "+key, err)
	}
	if out.AccessKeyLastUsed == nil {
		return time.Time{}, nil
	}
	return aws.ToTime(out.AccessKeyLastUsed.LastUsedDate), nil
}

// setKeyStatus sets a key's status unless it is there already.
func setKeyStatus(ctx context.Context, cl *iam.Client, user, key string, status iamtypes.StatusType) error {
	cur, err := keyStatus(ctx, cl, user, key)
	switch {
	case err != nil:
		return err
	case cur == "":
		return fmt.Errorf("set access key %s of %s %s: the key no longer exists", key, user, status)
	case cur == status:
		return nil
	}
	if _, err := cl.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String(user), AccessKeyId: aws.String(key), Status: status}); err != nil {
		return callErr(fmt.Sprintf("set access key %s of %s %s", key, user, status), err)
	}
	return nil
}

// requestToken is a Secrets Manager ClientRequestToken (32–64 characters) that is the
// same for the same action and key.
func requestToken(action, key string) string {
	sum := sha256.Sum256([]byte(action + "/" + key))
	return hex.EncodeToString(sum[:])[:48]
}
