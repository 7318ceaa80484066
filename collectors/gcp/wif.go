package gcp

import (
	"context"
	"strings"

	iamv1 "google.golang.org/api/iam/v1"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// readWorkloadIdentity reads a project's workload identity pools and each pool's
// providers (deleted ones included, with their state): one list call per page of pools
// and one per page of each pool's providers. Any failure is the scope's: a pool whose
// providers could not be listed would otherwise read as trusting no one.
func (c *Collector) readWorkloadIdentity(ctx context.Context, cl *clients, project, number, scopeID string) ([]snapshot.Resource, error) {
	parent := "projects/" + project + "/locations/global"
	pools, err := gcpapi.Pages(ctx, cl.api, "iam.ListWorkloadIdentityPools", func(ctx context.Context, token string, items *[]*iamv1.WorkloadIdentityPool) (string, error) {
		resp, err := cl.api.IAMv1.Projects.Locations.WorkloadIdentityPools.List(parent).
			PageSize(int64(c.pageSize(1000))).PageToken(token).ShowDeleted(true).Context(ctx).Do()
		if err != nil {
			return "", err
		}
		*items = append(*items, resp.WorkloadIdentityPools...)
		return resp.NextPageToken, nil
	})
	if err != nil {
		return nil, err
	}
	var res []snapshot.Resource
	for _, pool := range pools {
		providers, err := c.listProviders(ctx, cl, pool.Name)
		if err != nil {
			return nil, err
		}
		for _, pr := range providers {
			res = append(res, providerResource(project, number, pool, pr, scopeID))
		}
	}
	return res, nil
}

func (c *Collector) listProviders(ctx context.Context, cl *clients, pool string) ([]*iamv1.WorkloadIdentityPoolProvider, error) {
	return gcpapi.Pages(ctx, cl.api, "iam.ListWorkloadIdentityPoolProviders", func(ctx context.Context, token string, items *[]*iamv1.WorkloadIdentityPoolProvider) (string, error) {
		resp, err := cl.api.IAMv1.Projects.Locations.WorkloadIdentityPools.Providers.List(pool).
			PageSize(int64(c.pageSize(100))).PageToken(token).ShowDeleted(true).Context(ctx).Do()
		if err != nil {
			return "", err
		}
		*items = append(*items, resp.WorkloadIdentityPoolProviders...)
		return resp.NextPageToken, nil
	})
}

// providerUID is a provider's Cloud Asset Inventory name, under the project number.
func providerUID(number, pool, provider string) string {
	return "//iam.googleapis.com/projects/" + number + "/locations/global/workloadIdentityPools/" + pool + "/providers/" + provider
}

func providerResource(project, number string, pool *iamv1.WorkloadIdentityPool, pr *iamv1.WorkloadIdentityPoolProvider, scopeID string) snapshot.Resource {
	poolID := pool.Name[strings.LastIndexByte(pool.Name, '/')+1:]
	id := pr.Name[strings.LastIndexByte(pr.Name, '/')+1:]
	attrs := map[string]any{
		"pool": poolID, "pool_disabled": pool.Disabled, "disabled": pr.Disabled, "state": pr.State,
		"attribute_condition": pr.AttributeCondition,
	}
	switch {
	case pr.Oidc != nil:
		attrs["protocol"], attrs["issuer_uri"] = "oidc", pr.Oidc.IssuerUri
		attrs["allowed_audiences"] = strs(pr.Oidc.AllowedAudiences)
	case pr.Aws != nil:
		attrs["protocol"], attrs["aws_account_id"] = "aws", pr.Aws.AccountId
	case pr.Saml != nil:
		attrs["protocol"] = "saml"
	case pr.X509 != nil:
		attrs["protocol"] = "x509"
	}
	if pr.AttributeMapping != nil {
		m := make(map[string]any, len(pr.AttributeMapping))
		for k, v := range pr.AttributeMapping {
			m[k] = v
		}
		attrs["attribute_mapping"] = m
	}
	return snapshot.Resource{
		UID: providerUID(number, poolID, id), Type: "gcp.iam.workload_identity_provider",
		Name: id, Account: project, Region: "global", Scope: scopeID, Attributes: attrs,
	}
}

// wifPermissions are the IAM permissions of this file's reads.
func wifPermissions() []string {
	return []string{"iam.workloadIdentityPoolProviders.list", "iam.workloadIdentityPools.list"}
}
