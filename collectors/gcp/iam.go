package gcp

import (
	"context"
	"encoding/base64"
	"maps"
	"strings"

	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// collectIAM reads scope gcp/P/iam: the project (for its number and parent), its IAM
// policy and its service accounts are the primary reads; the organisation's domain, each
// account's keys, the IAM recommender's recommendations (Config.Recommendations) and the
// Policy Analyzer's last authentications (Config.Activity) are secondary (when they fail
// the scope is partial, and what they would have filled in is left out, not reported
// empty: failed recommendations leave recommendations_error on the policy, never an empty
// list). It also returns the project's parent ("" when the project could not be read),
// whose ancestry is read next.
func (c *Collector) collectIAM(ctx context.Context, cl *clients, project string) (result, string) {
	sc := newScope(project, "iam")
	ctx, cnt := scoped(ctx, project)
	var (
		secondary []error
		parent    string
	)
	res, primary := c.readIAM(ctx, cl, project, sc.ID, &parent, &secondary)
	finish(&sc, cnt, primary, secondary)
	return result{scope: sc, resources: res}, parent
}

// readIAM returns the scope's resources, or the primary read that failed; failed secondary
// reads are appended to secondary: the organisation's domain, keys, the IAM recommender's
// recommendations (Config.Recommendations), which when unreadable leave
// recommendations_error on the policy instead, and last authentications (Config.Activity),
// which when unreadable are left out. *parent is set once the project has been read, even
// when a later read fails: the ancestors do not depend on this scope's other reads.
func (c *Collector) readIAM(ctx context.Context, cl *clients, project, scopeID string, parent *string, secondary *[]error) ([]snapshot.Resource, error) {
	var proj *resourcemanagerpb.Project
	err := cl.api.Call(ctx, "cloudresourcemanager.GetProject", func(ctx context.Context) (err error) {
		proj, err = cl.api.Projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/" + project}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return nil, err
	}
	*parent = proj.GetParent()
	number := strings.TrimPrefix(proj.GetName(), "projects/")

	var policy *iampb.Policy
	err = cl.api.Call(ctx, "cloudresourcemanager.GetIamPolicy", func(ctx context.Context) (err error) {
		policy, err = cl.api.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + project,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return nil, err
	}

	accounts, err := gcpapi.Pages(ctx, cl.api, "iam.ListServiceAccounts", func(ctx context.Context, token string, items *[]*adminpb.ServiceAccount) (string, error) {
		it := cl.api.IAM.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/" + project}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, c.pageSize(100), token, items)
	})
	if err != nil {
		return nil, err
	}
	res, err := c.readWorkloadIdentity(ctx, cl, project, number, scopeID)
	if err != nil {
		return nil, err
	}

	// When the organisation could not be read (other than being refused), the policy's
	// organization_domain is unknown: the policy is left out, as a partial scope allows,
	// rather than reported with an empty domain.
	if domain, err := c.orgDomain(ctx, cl, proj.GetParent()); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
	} else {
		pr := policyResource(project, number, domain, policy, scopeID)
		if c.cfg.Recommendations {
			attrs, errs := c.recommendationsFor(ctx, cl, project)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			maps.Copy(pr.Attributes, attrs)
			*secondary = append(*secondary, errs...)
		}
		res = append(res, pr)
	}
	defaultCompute := number + "-compute@developer.gserviceaccount.com"
	for _, sa := range accounts {
		var keys *adminpb.ListServiceAccountKeysResponse
		err := cl.api.Call(ctx, "iam.ListServiceAccountKeys", func(ctx context.Context) (err error) {
			keys, err = cl.api.IAM.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{
				Name: "projects/" + project + "/serviceAccounts/" + sa.GetEmail()}, gcpapi.NoRetry())
			return err
		})
		switch {
		case gcpapi.IsNotFound(err):
			continue // deleted since it was listed
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			*secondary = append(*secondary, err)
		}
		res = append(res, accountResource(project, sa, sa.GetEmail() == defaultCompute, scopeID))
		for _, k := range keys.GetKeys() {
			res = append(res, keyResource(project, sa.GetEmail(), k, scopeID))
		}
	}
	if c.cfg.Activity && len(accounts) > 0 {
		errs := c.addLastAuthentication(ctx, cl, project, res)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		*secondary = append(*secondary, errs...)
	}
	return res, nil
}

// orgDomain is the domain of the organisation a project sits directly under ("" under a
// folder or none). Being refused organizations.get is not a failure: the domain is then
// unknown and reported empty.
func (c *Collector) orgDomain(ctx context.Context, cl *clients, parent string) (string, error) {
	if !strings.HasPrefix(parent, "organizations/") {
		return "", nil
	}
	cl.mu.Lock()
	d, ok := cl.orgDomains[parent]
	cl.mu.Unlock()
	if ok {
		return d, nil
	}
	var org *resourcemanagerpb.Organization
	err := cl.api.Call(ctx, "cloudresourcemanager.GetOrganization", func(ctx context.Context) (err error) {
		org, err = cl.api.Organizations.GetOrganization(ctx, &resourcemanagerpb.GetOrganizationRequest{Name: parent}, gcpapi.NoRetry())
		return err
	})
	switch {
	case gcpapi.IsDenied(err):
		c.log.Debug("gcp organization not readable", "organization", parent, "error", err)
	case err != nil:
		return "", err
	default:
		d = org.GetDisplayName()
	}
	cl.mu.Lock()
	cl.orgDomains[parent] = d
	cl.mu.Unlock()
	return d, nil
}

func policyResource(project, number, domain string, p *iampb.Policy, scopeID string) snapshot.Resource {
	return snapshot.Resource{
		UID: "//cloudresourcemanager.googleapis.com/projects/" + project, Type: "gcp.project.iam_policy",
		Name: project, Account: project, Region: "global", Scope: scopeID,
		Attributes: map[string]any{
			"project_id": project, "project_number": number, "organization_domain": domain,
			// The etag as GCP shows it in JSON and gcloud: base64 of its bytes.
			"etag":          base64.StdEncoding.EncodeToString(p.GetEtag()),
			"bindings":      bindingsOf(p),
			"audit_configs": auditConfigsOf(p),
		},
	}
}

func accountResource(project string, sa *adminpb.ServiceAccount, defaultCompute bool, scopeID string) snapshot.Resource {
	return snapshot.Resource{
		UID: "//iam.googleapis.com/projects/" + project + "/serviceAccounts/" + sa.GetEmail(), Type: "gcp.iam.service_account",
		Name: sa.GetEmail(), Account: project, Region: "global", Scope: scopeID,
		Attributes: map[string]any{
			"email": sa.GetEmail(), "unique_id": sa.GetUniqueId(), "display_name": sa.GetDisplayName(),
			"disabled": sa.GetDisabled(), "default_compute": defaultCompute,
		},
	}
}

func keyResource(project, email string, k *adminpb.ServiceAccountKey, scopeID string) snapshot.Resource {
	id := k.GetName()[strings.LastIndexByte(k.GetName(), '/')+1:]
	var after, before any
	if k.GetValidAfterTime() != nil {
		after = rfc3339(k.GetValidAfterTime().AsTime())
	}
	if k.GetValidBeforeTime() != nil {
		before = rfc3339(k.GetValidBeforeTime().AsTime())
	}
	return snapshot.Resource{
		UID:  "//iam.googleapis.com/projects/" + project + "/serviceAccounts/" + email + "/keys/" + id,
		Type: "gcp.iam.service_account_key", Name: id, Account: project, Region: "global", Scope: scopeID,
		Attributes: map[string]any{
			"key_id": id, "service_account": email, "key_type": k.GetKeyType().String(),
			"valid_after": after, "valid_before": before, "disabled": k.GetDisabled(),
			"key_algorithm": k.GetKeyAlgorithm().String(),
		},
	}
}

// iamPermissions are the IAM permissions of this file's reads: the project and its
// policy, the organisation's domain, service accounts and their keys.
func iamPermissions() []string {
	return []string{"iam.serviceAccountKeys.list", "iam.serviceAccounts.list", "resourcemanager.organizations.get",
		"resourcemanager.projects.get", "resourcemanager.projects.getIamPolicy"}
}
