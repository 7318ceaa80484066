package gcp

import (
	"context"
	"encoding/base64"
	"strings"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// A project inherits the IAM policies of its ancestors: the folders above it and the
// organisation at the top. Each ancestor is its own scope, gcp/folders/N/iam or
// gcp/organizations/N/iam, read once per collection however many projects sit under it,
// so that an ancestor the credentials may not read fails alone and its projects do not.

// isAncestor reports whether name is a folder or organisation name, "folders/N" or
// "organizations/N", as a project's or folder's parent gives it.
func isAncestor(name string) bool {
	kind, id, ok := strings.Cut(name, "/")
	return ok && id != "" && !strings.Contains(id, "/") && (kind == "folders" || kind == "organizations")
}

// claimAncestor reports whether name is still to be read in this collection, and marks
// it taken: the first project to reach an ancestor reads it and walks on above it.
func (cl *clients) claimAncestor(name string) bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.ancestors[name] {
		return false
	}
	cl.ancestors[name] = true
	return true
}

// collectAncestors reads and emits a project's ancestors not yet read, from its parent up
// to the organisation. The walk stops at an ancestor another project has claimed (that
// project walks on from there) and at a folder whose parent could not be read.
func (c *Collector) collectAncestors(ctx context.Context, cl *clients, sink collectors.Sink, parent string) error {
	for name := parent; isAncestor(name) && cl.claimAncestor(name); {
		res, next := c.collectAncestor(ctx, cl, name)
		if err := c.emit(sink, res); err != nil {
			return err
		}
		name = next
	}
	return nil
}

// collectAncestor reads the scope of one folder or organisation and returns it with the
// ancestor's parent ("" for an organisation, or when the folder could not be read).
func (c *Collector) collectAncestor(ctx context.Context, cl *clients, name string) (result, string) {
	sc := newScope(name, "iam")
	ctx, cnt := scoped(ctx, name)
	var (
		res       []snapshot.Resource
		parent    string
		primary   error
		secondary []error
	)
	if strings.HasPrefix(name, "folders/") {
		res, parent, primary = c.readFolder(ctx, cl, name, sc.ID)
	} else {
		res, primary = c.readOrganization(ctx, cl, name, sc.ID, &secondary)
	}
	finish(&sc, cnt, primary, secondary)
	return result{scope: sc, resources: res}, parent
}

// ancestorPolicy reads the IAM policy of a folder or organisation (version 3, so that
// conditional bindings come back whole).
func ancestorPolicy(ctx context.Context, cl *clients, name string) (*iampb.Policy, error) {
	req := &iampb.GetIamPolicyRequest{Resource: name, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}}
	var policy *iampb.Policy
	err := cl.api.Call(ctx, "cloudresourcemanager.GetIamPolicy", func(ctx context.Context) (err error) {
		if strings.HasPrefix(name, "folders/") {
			policy, err = cl.api.Folders.GetIamPolicy(ctx, req, gcpapi.NoRetry())
		} else {
			policy, err = cl.api.Organizations.GetIamPolicy(ctx, req, gcpapi.NoRetry())
		}
		return err
	})
	return policy, err
}

// readFolder reads a folder (for its display name and parent) and its policy, both
// primary: without either the folder's policy resource is unknown. The parent is
// returned whenever folders.get succeeded, so that the walk goes on above a folder whose
// policy is refused.
func (c *Collector) readFolder(ctx context.Context, cl *clients, name, scopeID string) ([]snapshot.Resource, string, error) {
	var f *resourcemanagerpb.Folder
	err := cl.api.Call(ctx, "cloudresourcemanager.GetFolder", func(ctx context.Context) (err error) {
		f, err = cl.api.Folders.GetFolder(ctx, &resourcemanagerpb.GetFolderRequest{Name: name}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return nil, "", err
	}
	parent := f.GetParent()
	policy, err := ancestorPolicy(ctx, cl, name)
	if err != nil {
		return nil, parent, err
	}
	id := strings.TrimPrefix(name, "folders/")
	return []snapshot.Resource{{
		UID: "//cloudresourcemanager.googleapis.com/" + name, Type: "gcp.folder.iam_policy",
		Name: f.GetDisplayName(), Account: name, Region: "global", Scope: scopeID,
		Attributes: map[string]any{
			"folder_id": id, "display_name": f.GetDisplayName(), "parent": parent,
			"etag": base64.StdEncoding.EncodeToString(policy.GetEtag()), "bindings": bindingsOf(policy), "audit_configs": auditConfigsOf(policy),
		},
	}}, parent, nil
}

// readOrganization reads an organisation's policy (primary) and its domain (secondary, as
// for projects: refused is no failure and leaves the domain empty; any other failure
// leaves the policy out, since its domain is unknown, and makes the scope partial).
func (c *Collector) readOrganization(ctx context.Context, cl *clients, name, scopeID string, secondary *[]error) ([]snapshot.Resource, error) {
	policy, err := ancestorPolicy(ctx, cl, name)
	if err != nil {
		return nil, err
	}
	domain, err := c.orgDomain(ctx, cl, name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		*secondary = append(*secondary, err)
		return nil, nil
	}
	id := strings.TrimPrefix(name, "organizations/")
	display := domain
	if display == "" {
		display = id
	}
	return []snapshot.Resource{{
		UID: "//cloudresourcemanager.googleapis.com/" + name, Type: "gcp.organization.iam_policy",
		Name: display, Account: name, Region: "global", Scope: scopeID,
		Attributes: map[string]any{
			"organization_id": id, "domain": domain,
			"etag": base64.StdEncoding.EncodeToString(policy.GetEtag()), "bindings": bindingsOf(policy), "audit_configs": auditConfigsOf(policy),
		},
	}}, nil
}

// bindingsOf is a policy's bindings in the resource model's shape, shared by project,
// folder and organisation policies.
func bindingsOf(p *iampb.Policy) []any {
	bindings := make([]any, 0, len(p.GetBindings()))
	for _, b := range p.GetBindings() {
		var cond any
		if e := b.GetCondition(); e != nil {
			cond = map[string]any{"title": e.GetTitle(), "expression": e.GetExpression()}
		}
		bindings = append(bindings, map[string]any{"role": b.GetRole(), "members": strs(b.GetMembers()), "condition": cond})
	}
	return bindings
}

// auditConfigsOf is a policy's auditConfigs in the resource model's shape ([] when none
// is configured; the policy was read, so none is known).
func auditConfigsOf(p *iampb.Policy) []any {
	out := make([]any, 0, len(p.GetAuditConfigs()))
	for _, ac := range p.GetAuditConfigs() {
		logs := make([]any, 0, len(ac.GetAuditLogConfigs()))
		for _, lc := range ac.GetAuditLogConfigs() {
			l := map[string]any{"log_type": lc.GetLogType().String()}
			if len(lc.GetExemptedMembers()) > 0 {
				l["exempted_members"] = strs(lc.GetExemptedMembers())
			}
			logs = append(logs, l)
		}
		out = append(out, map[string]any{"service": ac.GetService(), "audit_log_configs": logs})
	}
	return out
}

// ancestorPermissions are the IAM permissions of this file's reads: folders, and the
// policies of folders and organisations. Google grants them only in a role defined in
// the organisation (or bound on the folder), not in a project's custom role.
func ancestorPermissions() []string {
	return []string{"resourcemanager.folders.get", "resourcemanager.folders.getIamPolicy",
		"resourcemanager.organizations.getIamPolicy"}
}
