package gcp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

var _ collectors.ScopeCollector = (*Collector)(nil)

// Scopes implements collectors.ScopeCollector: gcp/PROJECT/iam and gcp/PROJECT/compute for
// each project (Config.Projects, or those the credentials see, searched now), and
// gcp/folders/N/iam or gcp/organizations/N/iam for each ancestor above them. Ancestors are
// only known by reading each project (projects.get) and each folder (folders.get) on the
// way up, as Collect walks them: a project that cannot be read names no ancestor, and a
// folder that cannot be read is named but nothing above it, just as Collect then reports
// the project's iam scope or the folder's scope failed and goes no higher. Those reads
// belong to no scope. The clients are kept until Close.
func (c *Collector) Scopes(ctx context.Context) ([]snapshot.Scope, error) {
	api, err := c.readClients(ctx)
	if err != nil {
		return nil, err
	}
	projects, ancestors, err := c.list(ctx, api)
	if err != nil {
		return nil, err
	}
	out := make([]snapshot.Scope, 0, 2*len(projects)+len(ancestors))
	for _, p := range projects {
		out = append(out, unread(newScope(p, "iam")), unread(newScope(p, "compute")))
	}
	for name := range ancestors {
		out = append(out, unread(newScope(name, "iam")))
	}
	slices.SortFunc(out, func(a, b snapshot.Scope) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// unread is a scope named, not read: without a status.
func unread(s snapshot.Scope) snapshot.Scope {
	s.Status = ""
	return s
}

// list finds the projects and their ancestors, and remembers them for CollectScope.
func (c *Collector) list(ctx context.Context, api *gcpapi.Clients) ([]string, map[string]bool, error) {
	projects, err := c.discover(ctx, api)
	if err != nil {
		return nil, nil, err
	}
	cl := newCollection(api)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for _, p := range projects {
		g.Go(func() error {
			c.walkAncestry(gctx, cl, c.projectParent(gctx, cl, p))
			return nil
		})
	}
	_ = g.Wait()
	// A walk cut short would leave out ancestors that are there.
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.projects, c.ancestors = projects, cl.ancestors
	return projects, maps.Clone(cl.ancestors), nil
}

// projectParent is a project's parent, "" when the project cannot be read.
func (c *Collector) projectParent(ctx context.Context, cl *clients, project string) string {
	ctx, _ = scoped(ctx, project)
	var proj *resourcemanagerpb.Project
	err := cl.api.Call(ctx, "cloudresourcemanager.GetProject", func(ctx context.Context) (err error) {
		proj, err = cl.api.Projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/" + project}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		c.log.Debug("gcp project not readable: its ancestors are unknown", "project", project, "error", err)
		return ""
	}
	return proj.GetParent()
}

// walkAncestry claims (cl.ancestors) the ancestors from parent up that no other project
// has claimed, as collectAncestors does, reading each folder for its parent.
func (c *Collector) walkAncestry(ctx context.Context, cl *clients, parent string) {
	for name := parent; isAncestor(name) && cl.claimAncestor(name); {
		if !strings.HasPrefix(name, "folders/") {
			return // an organisation is the top
		}
		fctx, _ := scoped(ctx, name)
		var f *resourcemanagerpb.Folder
		err := cl.api.Call(fctx, "cloudresourcemanager.GetFolder", func(ctx context.Context) (err error) {
			f, err = cl.api.Folders.GetFolder(ctx, &resourcemanagerpb.GetFolderRequest{Name: name}, gcpapi.NoRetry())
			return err
		})
		if err != nil {
			c.log.Debug("gcp folder not readable: what is above it is unknown", "folder", name, "error", err)
			return
		}
		name = f.GetParent()
	}
}

// CollectScope implements collectors.ScopeCollector: gcp/PROJECT/iam is the project's
// policy, service accounts and keys; gcp/PROJECT/compute its firewalls, networks and SSL
// certificates; gcp/folders/N/iam and gcp/organizations/N/iam an ancestor's policy; each
// read as Collect reads it, through the kept clients and their token buckets. A project
// must be one of those Scopes last named (found again when it is not), an ancestor one of
// the ancestors Scopes last walked to (walked again when it is not).
//
// The scope's counters are those of its own calls. Collect shares an organisation's
// domain between the scopes that need it, so the counters of those scopes can be lower
// there than here, where each scope reads it.
func (c *Collector) CollectScope(ctx context.Context, id string, sink collectors.Sink) error {
	target, service, ok := parseScopeID(id)
	if !ok {
		return unknownScope(id, "not a GCP scope id (gcp/PROJECT/iam, gcp/PROJECT/compute, gcp/folders/N/iam, gcp/organizations/N/iam)")
	}
	api, err := c.readClients(ctx)
	if err != nil {
		return err
	}
	if err := c.known(ctx, api, id, target); err != nil {
		return err
	}
	cl := newCollection(api)
	var res result
	switch {
	case isAncestor(target):
		res, _ = c.collectAncestor(ctx, cl, target)
	case service == "iam":
		res, _ = c.collectIAM(ctx, cl, target)
	default:
		res = c.collectCompute(ctx, cl, target)
	}
	if err := c.emit(sink, res); err != nil {
		return err
	}
	return ctx.Err()
}

// parseScopeID reads "gcp/PROJECT/iam", "gcp/PROJECT/compute", "gcp/folders/N/iam" or
// "gcp/organizations/N/iam" into the project or ancestor name and the service.
func parseScopeID(id string) (target, service string, ok bool) {
	rest, ok := strings.CutPrefix(id, "gcp/")
	if !ok {
		return "", "", false
	}
	f := strings.Split(rest, "/")
	switch {
	case len(f) == 2 && f[0] != "" && f[0] != "folders" && f[0] != "organizations" && (f[1] == "iam" || f[1] == "compute"):
		return f[0], f[1], true
	case len(f) == 3 && f[2] == "iam" && isAncestor(f[0]+"/"+f[1]):
		return f[0] + "/" + f[1], "iam", true
	}
	return "", "", false
}

func unknownScope(id, why string) error {
	return fmt.Errorf("gcp: collect scope %s: %s: %w", id, why, collectors.ErrUnknownScope)
}

// known checks that target is one of the collector's projects or ancestors, listing
// them again when it is not among those last listed.
func (c *Collector) known(ctx context.Context, api *gcpapi.Clients, id, target string) error {
	has := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if isAncestor(target) {
			return c.ancestors[target]
		}
		return slices.Contains(c.projects, target)
	}
	if has() {
		return nil
	}
	if isAncestor(target) {
		if _, _, err := c.list(ctx, api); err != nil {
			return fmt.Errorf("gcp: collect scope %s: %w", id, err)
		}
		if !has() {
			return unknownScope(id, target+" is above none of the projects collected")
		}
		return nil
	}
	projects, err := c.discover(ctx, api)
	if err != nil {
		return fmt.Errorf("gcp: collect scope %s: %w", id, err)
	}
	c.mu.Lock()
	c.projects = projects
	c.mu.Unlock()
	if !has() {
		return unknownScope(id, "project "+target+" is not one of the projects collected")
	}
	return nil
}
