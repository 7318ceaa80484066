package gcp

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"

	iamv1 "google.golang.org/api/iam/v1"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// Read implements collectors.Reader for gcp.project.iam_policy, gcp.folder.iam_policy,
// gcp.organization.iam_policy, gcp.iam.service_account, gcp.iam.service_account_key,
// gcp.iam.workload_identity_provider, gcp.compute.firewall and gcp.compute.ssl_certificate,
// with that resource's own calls
// (a project's policy is projects.get, getIamPolicy and, under an organisation,
// organizations.get; a firewall is firewalls.get).
//
// Google answers PERMISSION_DENIED, not NOT_FOUND, for a project, folder or organisation
// that does not exist (the caller cannot tell one it may not see from one that is gone),
// so their policies are never ErrNotFound: a read of a deleted project is an error.
// Clients made for Read are kept for the next one, until Close.
func (c *Collector) Read(ctx context.Context, uid string) (snapshot.Resource, error) {
	api, err := c.readClients(ctx)
	if err != nil {
		return snapshot.Resource{}, err
	}
	r, err := c.read(ctx, newCollection(api), uid)
	if err != nil {
		return snapshot.Resource{}, fmt.Errorf("gcp: read %s: %w", uid, err)
	}
	return r, nil
}

// readClients are the configured clients, or those Read, Scopes or CollectScope made on
// first use.
func (c *Collector) readClients(ctx context.Context) (*gcpapi.Clients, error) {
	if c.cfg.Clients != nil {
		return c.cfg.Clients, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readers == nil {
		api, err := gcpapi.New(ctx, c.apiOptions())
		if err != nil {
			return nil, err
		}
		c.readers = api
	}
	return c.readers, nil
}

// The uids Read understands.
var (
	policyUID   = regexp.MustCompile(`^//cloudresourcemanager\.googleapis\.com/(projects/[^/]+|folders/[^/]+|organizations/[^/]+)$`)
	accountUID  = regexp.MustCompile(`^//iam\.googleapis\.com/projects/([^/]+)/serviceAccounts/([^/]+)$`)
	keyUID      = regexp.MustCompile(`^//iam\.googleapis\.com/projects/([^/]+)/serviceAccounts/([^/]+)/keys/([^/]+)$`)
	computeUID  = regexp.MustCompile(`^//compute\.googleapis\.com/projects/([^/]+)/global/(firewalls|sslCertificates)/([^/]+)$`)
	providerRe  = regexp.MustCompile(`^//iam\.googleapis\.com/projects/([^/]+)/locations/global/workloadIdentityPools/([^/]+)/providers/([^/]+)$`)
	defaultMail = regexp.MustCompile(`^[0-9]+-compute@developer\.gserviceaccount\.com$`)
)

func (c *Collector) read(ctx context.Context, cl *clients, uid string) (snapshot.Resource, error) {
	if m := policyUID.FindStringSubmatch(uid); m != nil {
		name := m[1]
		kind, id, _ := strings.Cut(name, "/")
		switch kind {
		case "projects":
			return c.readProjectPolicy(ctx, cl, id)
		case "folders":
			ctx, _ := scoped(ctx, name)
			res, _, err := c.readFolder(ctx, cl, name, newScope(name, "iam").ID)
			return one(res, err)
		default:
			ctx, _ := scoped(ctx, name)
			var secondary []error
			res, err := c.readOrganization(ctx, cl, name, newScope(name, "iam").ID, &secondary)
			if err == nil && len(secondary) > 0 {
				err = secondary[0]
			}
			return one(res, err)
		}
	}
	if m := providerRe.FindStringSubmatch(uid); m != nil {
		return c.readProvider(ctx, cl, m[1], m[2], m[3])
	}
	if m := keyUID.FindStringSubmatch(uid); m != nil {
		project, email, id := m[1], m[2], m[3]
		ctx, _ := scoped(ctx, project)
		var k *adminpb.ServiceAccountKey
		err := cl.api.Call(ctx, "iam.GetServiceAccountKey", func(ctx context.Context) (err error) {
			k, err = cl.api.IAM.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{
				Name: "projects/" + project + "/serviceAccounts/" + email + "/keys/" + id}, gcpapi.NoRetry())
			return err
		})
		if err != nil {
			return snapshot.Resource{}, failed(err)
		}
		r := keyResource(project, email, k, newScope(project, "iam").ID)
		c.readLastAuthn(ctx, cl, project, r)
		return r, nil
	}
	if m := accountUID.FindStringSubmatch(uid); m != nil {
		project, email := m[1], m[2]
		ctx, _ := scoped(ctx, project)
		var sa *adminpb.ServiceAccount
		err := cl.api.Call(ctx, "iam.GetServiceAccount", func(ctx context.Context) (err error) {
			sa, err = cl.api.IAM.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{
				Name: "projects/" + project + "/serviceAccounts/" + email}, gcpapi.NoRetry())
			return err
		})
		if err != nil {
			return snapshot.Resource{}, failed(err)
		}
		// The default compute account is PROJECT_NUMBER-compute@developer…, and lives in
		// its own project: its shape says it without asking for the project's number.
		r := accountResource(project, sa, defaultMail.MatchString(sa.GetEmail()), newScope(project, "iam").ID)
		c.readLastAuthn(ctx, cl, project, r)
		return r, nil
	}
	if m := computeUID.FindStringSubmatch(uid); m != nil {
		project, kind, name := m[1], m[2], m[3]
		ctx, _ := scoped(ctx, project)
		scopeID := newScope(project, "compute").ID
		if kind == "firewalls" {
			var f *computepb.Firewall
			err := cl.api.Call(ctx, "compute.GetFirewall", func(ctx context.Context) (err error) {
				f, err = cl.api.Firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: project, Firewall: name}, gcpapi.NoRetry())
				return err
			})
			if err != nil {
				return snapshot.Resource{}, failed(err)
			}
			// The rule's targets as Collect gives them, with the project's instances: a
			// re-read without them would resolve an unused-rule finding for lack of data.
			// A failed list leaves them unknown, which no policy takes for unused.
			r := firewallResource(project, scopeID, f)
			instances, err := readFleet(ctx, cl, project, uint32(c.pageSize(500)))
			if err != nil && ctx.Err() != nil {
				return snapshot.Resource{}, failed(err)
			}
			r.Attributes["targets"] = instances.targets(f)
			return r, nil
		}
		var ct *computepb.SslCertificate
		err := cl.api.Call(ctx, "compute.GetSslCertificate", func(ctx context.Context) (err error) {
			ct, err = cl.api.SslCertificates.Get(ctx, &computepb.GetSslCertificateRequest{Project: project, SslCertificate: name}, gcpapi.NoRetry())
			return err
		})
		if err != nil {
			return snapshot.Resource{}, failed(err)
		}
		r, err := sslResource(project, scopeID, ct)
		if err != nil {
			return snapshot.Resource{}, err
		}
		return r, nil
	}
	return snapshot.Resource{}, collectors.ErrUnsupported
}

// readProjectPolicy reads a project's IAM policy resource: the project (for its number
// and parent), its policy, the domain of an organisation right above it and, with
// Config.Recommendations, the IAM recommender's active recommendations.
func (c *Collector) readProjectPolicy(ctx context.Context, cl *clients, project string) (snapshot.Resource, error) {
	ctx, _ = scoped(ctx, project)
	var proj *resourcemanagerpb.Project
	err := cl.api.Call(ctx, "cloudresourcemanager.GetProject", func(ctx context.Context) (err error) {
		proj, err = cl.api.Projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/" + project}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	var policy *iampb.Policy
	err = cl.api.Call(ctx, "cloudresourcemanager.GetIamPolicy", func(ctx context.Context) (err error) {
		policy, err = cl.api.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + project,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	domain, err := c.orgDomain(ctx, cl, proj.GetParent())
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	pr := policyResource(project, strings.TrimPrefix(proj.GetName(), "projects/"), domain, policy, newScope(project, "iam").ID)
	if c.cfg.Recommendations {
		// A policy re-read alone keeps its recommendations: without them the policy would
		// read as having none. A failed list is in recommendations_error, as in Collect.
		attrs, _ := c.recommendationsFor(ctx, cl, project)
		if err := ctx.Err(); err != nil {
			return snapshot.Resource{}, err
		}
		maps.Copy(pr.Attributes, attrs)
	}
	return pr, nil
}

// one is the single resource of a folder or organisation read.
func one(res []snapshot.Resource, err error) (snapshot.Resource, error) {
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	if len(res) != 1 {
		return snapshot.Resource{}, fmt.Errorf("read %d resources, want 1", len(res))
	}
	return res[0], nil
}

// failed is the error of a read: collectors.ErrNotFound as well when Google said the
// thing does not exist, and only then.
func failed(err error) error {
	if gcpapi.IsNotFound(err) {
		return fmt.Errorf("%w: %w", collectors.ErrNotFound, err)
	}
	return err
}

// readProvider reads one workload identity provider: the project (its number names the
// provider, its id is the account), the pool (whether it is disabled) and the provider.
func (c *Collector) readProvider(ctx context.Context, cl *clients, number, pool, provider string) (snapshot.Resource, error) {
	ctx, _ = scoped(ctx, number)
	var proj *resourcemanagerpb.Project
	err := cl.api.Call(ctx, "cloudresourcemanager.GetProject", func(ctx context.Context) (err error) {
		proj, err = cl.api.Projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/" + number}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	project := proj.GetProjectId()
	ctx, _ = scoped(ctx, project)
	name := "projects/" + project + "/locations/global/workloadIdentityPools/" + pool
	var p *iamv1.WorkloadIdentityPool
	err = cl.api.Call(ctx, "iam.GetWorkloadIdentityPool", func(ctx context.Context) (err error) {
		p, err = cl.api.IAMv1.Projects.Locations.WorkloadIdentityPools.Get(name).Context(ctx).Do()
		return err
	})
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	var pr *iamv1.WorkloadIdentityPoolProvider
	err = cl.api.Call(ctx, "iam.GetWorkloadIdentityPoolProvider", func(ctx context.Context) (err error) {
		pr, err = cl.api.IAMv1.Projects.Locations.WorkloadIdentityPools.Providers.Get(name + "/providers/" + provider).Context(ctx).Do()
		return err
	})
	if err != nil {
		return snapshot.Resource{}, failed(err)
	}
	return providerResource(project, strings.TrimPrefix(proj.GetName(), "projects/"), p, pr, newScope(project, "iam").ID), nil
}

// readPermissions are the IAM permissions of Read (this file), which re-reads one
// resource with its own calls (a folder's or organisation's policy with ancestors.go's).
func readPermissions() []string {
	return []string{"compute.firewalls.get", "compute.instances.list", "compute.projects.get", "compute.sslCertificates.get", "iam.serviceAccountKeys.get",
		"iam.serviceAccounts.get", "iam.workloadIdentityPoolProviders.get", "iam.workloadIdentityPools.get",
		"resourcemanager.organizations.get", "resourcemanager.projects.get", "resourcemanager.projects.getIamPolicy"}
}
