// Package gcp collects Google Cloud projects: the project IAM policy, service accounts and
// their keys, workload identity providers (scope gcp/PROJECT/iam), VPC firewall rules, networks and SSL certificates
// (scope gcp/PROJECT/compute), and the IAM policies of the projects' ancestors, folders
// and organisations (scopes gcp/folders/N/iam, gcp/organizations/N/iam), with the
// official Go clients through internal/gcpapi: calls are rate-limited per service and
// project, retried with full-jitter backoff on throttling and transient failures, and
// counted per scope; a scope whose reads failed is reported as failed, never as empty.
// Read reads one resource again by uid (read.go); Scopes and CollectScope name the scopes
// and read one alone, warden's daemon's unit of work (scoped.go).
package gcp

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// Config says which projects to read and how hard to press the APIs.
type Config struct {
	// Projects are the project ids to collect; empty means every active project the
	// credentials can see (Discover).
	Projects []string
	// Endpoint overrides Google's endpoints, for the simulator or a private endpoint. An
	// http:// URL is used without credentials (REST at the URL, gRPC in plain text at its
	// host:port); otherwise Application Default Credentials apply. Empty: Google's.
	Endpoint string
	// Concurrency bounds the projects collected at once; 0 means 4.
	Concurrency int
	// RateLimit is calls per second per service per project; 0 means 10.
	RateLimit float64
	// MaxAttempts bounds the attempts of one call (throttled or transient); 0 means 8.
	MaxAttempts int
	// BaseBackoff is the delay before the first retry, doubled each time; 0 means 250ms.
	BaseBackoff time.Duration
	// MaxBackoff caps the delay between retries; 0 means 30s.
	MaxBackoff time.Duration
	// PageSize is the items asked for per list call; 0 means each API's maximum.
	PageSize int
	// Recommendations adds the IAM recommender's ACTIVE recommendations (role removals and
	// replacements from 90 days of use) to each project's gcp.project.iam_policy as
	// attributes.recommendations: two more list calls per project, and the Recommender
	// API enabled in it. Off by default.
	Recommendations bool
	// Activity adds the Policy Analyzer's last authentications to each service account
	// and key (attributes last_authenticated, null when none in the observation period,
	// and last_authenticated_since, the period's start): two more query calls per project
	// with service accounts, and the Policy Analyzer API enabled in it. Off by default.
	Activity bool
	// Logger receives retries at debug level and failed scopes at warn; nil discards.
	Logger *slog.Logger
	// Clients, when set, are the API clients to call through (shared with remediators, so
	// that both draw on one token bucket per service and project); Endpoint, RateLimit,
	// MaxAttempts and the backoff bounds are then theirs, and the collector never closes
	// them.
	Clients *gcpapi.Clients
}

// Collector reads GCP projects.
type Collector struct {
	cfg Config
	log *slog.Logger

	// mu guards readers, the clients Read, Scopes and CollectScope made on first use, kept
	// until Close; and what Scopes last named, which CollectScope checks an id against:
	// projects (nil: never listed) and ancestors, the folders and organisations above them.
	mu        sync.Mutex
	readers   *gcpapi.Clients
	projects  []string
	ancestors map[string]bool
}

var (
	_ collectors.Collector  = (*Collector)(nil)
	_ collectors.Discoverer = (*Collector)(nil)
	_ collectors.Reader     = (*Collector)(nil)
)

// New returns a collector with cfg's zero fields set to their defaults.
func New(cfg Config) *Collector {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	// A project named twice (in the config and a flag) would be read twice: two scopes of
	// one id and every resource twice, which a snapshot refuses.
	var projects []string
	for _, p := range cfg.Projects {
		if p != "" && !slices.Contains(projects, p) {
			projects = append(projects, p)
		}
	}
	cfg.Projects = projects
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Collector{cfg: cfg, log: log}
}

// Name implements collectors.Collector.
func (c *Collector) Name() string { return "gcp" }

// Permissions lists the IAM permissions of every call the collector makes (Collect,
// Read, Scopes and CollectScope alike), sorted, a fresh slice each call: warden's
// read-only scanner role is generated from it, and a test holds it to the calls the
// collector makes. Each file declares the permissions of its own calls; projects are
// discovered with SearchProjects, which lists those the caller may get.
func Permissions() []string {
	all := slices.Concat([]string{"resourcemanager.projects.get"}, iamPermissions(), ancestorPermissions(),
		computePermissions(), wifPermissions(), readPermissions(), recommenderPermissions(), activityPermissions())
	slices.Sort(all)
	return slices.Compact(all)
}

// clients are the API clients of one collection, with what the collection's projects
// share.
type clients struct {
	api *gcpapi.Clients

	// orgDomains caches organisation domains ("" when not readable) across projects;
	// ancestors holds the folders and organisations claimed for reading (claimAncestor).
	mu         sync.Mutex
	orgDomains map[string]string
	ancestors  map[string]bool
}

func newCollection(api *gcpapi.Clients) *clients {
	return &clients{api: api, orgDomains: map[string]string{}, ancestors: map[string]bool{}}
}

// open returns the API clients to use and the function that releases them: the
// configured ones (never closed here), or new ones closed by release.
func (c *Collector) open(ctx context.Context) (*gcpapi.Clients, func(), error) {
	if c.cfg.Clients != nil {
		return c.cfg.Clients, func() {}, nil
	}
	api, err := gcpapi.New(ctx, c.apiOptions())
	if err != nil {
		return nil, nil, err
	}
	return api, func() { _ = api.Close() }, nil
}

func (c *Collector) apiOptions() gcpapi.Options {
	return gcpapi.Options{Endpoint: c.cfg.Endpoint, RateLimit: c.cfg.RateLimit, MaxAttempts: c.cfg.MaxAttempts,
		BaseBackoff: c.cfg.BaseBackoff, MaxBackoff: c.cfg.MaxBackoff, Logger: c.log}
}

// Close releases the clients Read, Scopes and CollectScope created; a collector only
// Collected needs no Close.
func (c *Collector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readers == nil {
		return nil
	}
	err := c.readers.Close()
	c.readers = nil
	return err
}

// scoped returns ctx for the calls of one scope: paced in account's buckets (a project
// id, "folders/N" or "organizations/N") and counted in the returned counter.
func scoped(ctx context.Context, account string) (context.Context, *gcpapi.Counter) {
	cnt := &gcpapi.Counter{}
	return gcpapi.WithScope(ctx, gcpapi.Scope{Project: account, Counter: cnt}), cnt
}

// Discover returns the project ids to collect: Config.Projects, or else every active
// project the credentials can see (Resource Manager projects.search).
func (c *Collector) Discover(ctx context.Context) ([]string, error) {
	if len(c.cfg.Projects) > 0 {
		return append([]string(nil), c.cfg.Projects...), nil
	}
	api, release, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.discover(ctx, api)
}

func (c *Collector) discover(ctx context.Context, api *gcpapi.Clients) ([]string, error) {
	if len(c.cfg.Projects) > 0 {
		return append([]string(nil), c.cfg.Projects...), nil
	}
	ctx, _ = scoped(ctx, "")
	found, err := gcpapi.Pages(ctx, api, "cloudresourcemanager.SearchProjects", func(ctx context.Context, token string, items *[]*resourcemanagerpb.Project) (string, error) {
		it := api.Projects.SearchProjects(ctx, &resourcemanagerpb.SearchProjectsRequest{Query: "state:ACTIVE"}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, c.pageSize(500), token, items)
	})
	if err != nil {
		return nil, fmt.Errorf("gcp: discover projects: %w", err)
	}
	ids := make([]string, 0, len(found))
	for _, p := range found {
		ids = append(ids, p.GetProjectId())
	}
	return ids, nil
}

func (c *Collector) pageSize(apiMax int) int {
	if c.cfg.PageSize > 0 {
		return min(c.cfg.PageSize, apiMax)
	}
	return apiMax
}

// Collect implements collectors.Collector: two scopes per project, gcp/P/iam and
// gcp/P/compute, read concurrently, up to Concurrency projects at once, and after a
// project's iam scope one scope per ancestor not read yet (collectAncestors). It returns an
// error only when it cannot go on: no clients, no project list, a sink that fails, or a
// cancelled context.
func (c *Collector) Collect(ctx context.Context, sink collectors.Sink) error {
	api, release, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer release()
	projects, err := c.discover(ctx, api)
	if err != nil {
		return err
	}
	cl := newCollection(api)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for _, p := range projects {
		g.Go(func() error {
			var pg errgroup.Group
			pg.Go(func() error {
				res, parent := c.collectIAM(gctx, cl, p)
				if err := c.emit(sink, res); err != nil {
					return err
				}
				return c.collectAncestors(gctx, cl, sink, parent)
			})
			pg.Go(func() error { return c.emit(sink, c.collectCompute(gctx, cl, p)) })
			return pg.Wait()
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// result is what one scope read: its resources count only when the scope did not fail.
type result struct {
	scope     snapshot.Scope
	resources []snapshot.Resource
}

// emit hands a scope and, unless it failed, its resources to the sink.
func (c *Collector) emit(sink collectors.Sink, res result) error {
	if res.scope.Status == snapshot.ScopeFailed {
		res.resources = nil
		c.log.Warn("gcp scope failed", "scope", res.scope.ID, "error", res.scope.Error)
	} else if res.scope.Status == snapshot.ScopePartial {
		c.log.Warn("gcp scope partly read", "scope", res.scope.ID, "error", res.scope.Error)
	}
	res.scope.Resources = len(res.resources)
	for _, r := range res.resources {
		if err := sink.Resource(r); err != nil {
			return fmt.Errorf("gcp: %s: %w", res.scope.ID, err)
		}
	}
	sink.Scope(res.scope)
	return nil
}

// newScope starts the scope of one service of a project.
func newScope(project, service string) snapshot.Scope {
	return snapshot.Scope{ID: "gcp/" + project + "/" + service, Provider: "gcp", Account: project,
		Service: service, Status: snapshot.ScopeOK}
}

// finish records the outcome of a scope's reads: a primary failure fails it; otherwise
// secondary failures make it partial, naming the first few.
func finish(sc *snapshot.Scope, cnt *gcpapi.Counter, primary error, secondary []error) {
	sc.Calls, sc.Throttled, sc.AccessDenied = cnt.Calls(), cnt.Throttled(), cnt.Denied()
	switch {
	case primary != nil:
		sc.Status, sc.Error = snapshot.ScopeFailed, primary.Error()
	case len(secondary) > 0:
		msgs := make([]string, 0, 3)
		for _, e := range secondary[:min(3, len(secondary))] {
			msgs = append(msgs, e.Error())
		}
		if len(secondary) > 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(secondary)-3))
		}
		sc.Status, sc.Error = snapshot.ScopePartial, strings.Join(msgs, "; ")
	}
}

// rfc3339 formats a time in UTC, as the resource model wants it; zero is null.
func rfc3339(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// strs converts a string list to the decoded-JSON shape attributes hold (never null).
func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
