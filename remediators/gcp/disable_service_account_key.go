package gcp

import (
	"context"
	"fmt"
	"strings"

	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// DisableServiceAccountKey disables one user-managed service-account key
// (gcp.iam.disable_service_account_key): it stops authenticating but is kept, so that
// Rollback can enable it again.
type DisableServiceAccountKey struct{ c *gcpapi.Clients }

// NewDisableServiceAccountKey returns the fix; c may be nil for planning only.
func NewDisableServiceAccountKey(c *gcpapi.Clients) *DisableServiceAccountKey {
	return &DisableServiceAccountKey{c}
}

// saKeyBefore is the part: the key by its API name, enabled, and since when it is valid.
type saKeyBefore struct {
	Name           string `json:"name"`
	ServiceAccount string `json:"service_account"`
	KeyID          string `json:"key_id"`
	Disabled       bool   `json:"disabled"`
	ValidAfter     any    `json:"valid_after"`
}

// Spec implements remediators.Remediator.
func (*DisableServiceAccountKey) Spec() remediators.Spec {
	return remediators.Spec{
		Action:        "gcp.iam.disable_service_account_key",
		ResourceTypes: []string{"gcp.iam.service_account_key"},
		Rollback:      remediators.Rollback{Possible: true},
		Permissions: remediators.Permissions{GCP: []string{"iam.serviceAccountKeys.disable", "iam.serviceAccountKeys.enable",
			"iam.serviceAccountKeys.get"}},
	}
}

// Targets is the key while it is enabled. Google's own keys cannot be disabled: asking
// is an error, not a key that looks fixed.
func (*DisableServiceAccountKey) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	at := res.Attributes
	if attr.String(at, "key_type") == "SYSTEM_MANAGED" {
		return nil, fmt.Errorf("service account key %s is managed by Google: it cannot be disabled", res.UID)
	}
	if off, _ := attr.Bool(at, "disabled"); off {
		return nil, nil
	}
	name, err := resourceName(res.UID, "iam.googleapis.com")
	if err != nil {
		return nil, err
	}
	b := saKeyBefore{Name: name, ServiceAccount: attr.String(at, "service_account"), KeyID: attr.String(at, "key_id"), ValidAfter: at["valid_after"]}
	if b.KeyID == "" {
		b.KeyID = name[strings.LastIndexByte(name, '/')+1:]
	}
	before, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	return []remediators.Target{{Part: b.KeyID, Before: before}}, nil
}

// Apply disables the key; ErrConverged when it is disabled already or gone.
func (r *DisableServiceAccountKey) Apply(ctx context.Context, a remediators.Action) error {
	b, err := r.before(a)
	if err != nil {
		return err
	}
	disabled, err := r.disabled(ctx, a, b)
	if gcpapi.IsNotFound(err) || err == nil && disabled {
		return remediators.ErrConverged
	}
	if err != nil {
		return err
	}
	err = call(ctx, r.c, a.Account, "iam.DisableServiceAccountKey", func(ctx context.Context) error {
		return r.c.IAM.DisableServiceAccountKey(ctx, &adminpb.DisableServiceAccountKeyRequest{Name: b.Name}, gcpapi.NoRetry())
	})
	if gcpapi.IsNotFound(err) {
		return remediators.ErrConverged
	}
	if err != nil {
		return fmt.Errorf("disable service account key %s: %w", b.Name, err)
	}
	return nil
}

// Rollback enables the key again. A key deleted since cannot be brought back.
func (r *DisableServiceAccountKey) Rollback(ctx context.Context, a remediators.Action) error {
	b, err := r.before(a)
	if err != nil {
		return err
	}
	disabled, err := r.disabled(ctx, a, b)
	if err != nil {
		return err
	}
	if !disabled {
		return nil
	}
	err = call(ctx, r.c, a.Account, "iam.EnableServiceAccountKey", func(ctx context.Context) error {
		return r.c.IAM.EnableServiceAccountKey(ctx, &adminpb.EnableServiceAccountKeyRequest{Name: b.Name}, gcpapi.NoRetry())
	})
	if err != nil {
		return fmt.Errorf("enable service account key %s: %w", b.Name, err)
	}
	return nil
}

func (r *DisableServiceAccountKey) before(a remediators.Action) (saKeyBefore, error) {
	var b saKeyBefore
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, err
	}
	if !strings.HasPrefix(b.Name, "projects/") || !strings.Contains(b.Name, "/keys/") {
		return b, fmt.Errorf("action %s: before-state names no service account key", a.ID)
	}
	return b, nil
}

// disabled reads whether the key is disabled now.
func (r *DisableServiceAccountKey) disabled(ctx context.Context, a remediators.Action, b saKeyBefore) (bool, error) {
	var key *adminpb.ServiceAccountKey
	err := call(ctx, r.c, a.Account, "iam.GetServiceAccountKey", func(ctx context.Context) (err error) {
		key, err = r.c.IAM.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: b.Name}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return false, fmt.Errorf("read service account key %s: %w", b.Name, err)
	}
	return key.GetDisabled(), nil
}
