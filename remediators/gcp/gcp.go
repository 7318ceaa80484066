// Package gcp holds warden's fixes of Google Cloud drift, one file each: remove one
// member from one binding of a project's, folder's or organisation's IAM policy, apply
// one of Google's IAM role recommendations, disable a service-account key, disable a
// firewall rule. Each reads before it writes, so that
// Apply on a part already fixed returns remediators.ErrConverged without a write call,
// and each calls Google through the shared, paced clients of internal/gcpapi.
package gcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
)

// errNoClients is the error of a fix asked to call Google without clients: a registry
// built for planning only.
var errNoClients = errors.New("no Google Cloud clients: this warden was not given a GCP endpoint or credentials")

// call runs one API call through c.Call, paced in the bucket of scope (a project id,
// "folders/N" or "organizations/N").
func call(ctx context.Context, c *gcpapi.Clients, scope, name string, f func(ctx context.Context) error) error {
	if c == nil {
		return errNoClients
	}
	return c.Call(gcpapi.WithScope(ctx, gcpapi.Scope{Project: scope}), name, f)
}

// resourceName is the API name of a Cloud Asset Inventory uid:
// "//iam.googleapis.com/projects/P/serviceAccounts/E/keys/K" → "projects/P/serviceAccounts/E/keys/K".
func resourceName(uid, service string) (string, error) {
	name, ok := strings.CutPrefix(uid, "//"+service+"/")
	if !ok || name == "" {
		return "", fmt.Errorf("%s is not a %s resource", uid, service)
	}
	return name, nil
}

// All returns every Google Cloud fix, calling Google through c (nil: planning only).
func All(c *gcpapi.Clients) []remediators.Remediator {
	return []remediators.Remediator{NewRemoveBindingMember(c), NewDisableServiceAccountKey(c), NewDisableFirewall(c), NewApplyRoleRecommendation(c)}
}
