// Package gcp collects Google Cloud projects: the project IAM policy, service accounts and
// their keys (scope gcp/PROJECT/iam), VPC firewall rules, networks and SSL certificates
// (scope gcp/PROJECT/compute), and the IAM policies of the projects' ancestors, folders
// and organisations (scopes gcp/folders/N/iam, gcp/organizations/N/iam), with the
// official Go clients. Calls are rate-limited per service and scope, retried with backoff
// on throttling and transient failures, and a scope whose reads failed is reported as
// failed, never as empty.
package gcp

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	admin "cloud.google.com/go/iam/admin/apiv1"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/warden-sec/warden/collectors"
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
	// Logger receives retries at debug level and failed scopes at warn; nil discards.
	Logger *slog.Logger
}

// Collector reads GCP projects.
type Collector struct {
	cfg Config
	log *slog.Logger
}

var _ collectors.Collector = (*Collector)(nil)

// New returns a collector with cfg's zero fields set to their defaults.
func New(cfg Config) *Collector {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = 10
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 8
	}
	if cfg.BaseBackoff <= 0 {
		cfg.BaseBackoff = 250 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.BaseBackoff)
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

// clients are the API clients of one collection, shared by its projects.
type clients struct {
	projects  *resourcemanager.ProjectsClient
	folders   *resourcemanager.FoldersClient
	orgs      *resourcemanager.OrganizationsClient
	iam       *admin.IamClient
	firewalls *compute.FirewallsClient
	networks  *compute.NetworksClient
	certs     *compute.SslCertificatesClient

	// orgDomains caches organisation domains ("" when not readable) across projects;
	// ancestors holds the folders and organisations claimed for reading (claimAncestor).
	mu         sync.Mutex
	orgDomains map[string]string
	ancestors  map[string]bool
}

// options are the client options for REST and for gRPC clients.
func (c *Collector) options() (rest, rpc []option.ClientOption, err error) {
	ep := c.cfg.Endpoint
	if ep == "" {
		return nil, nil, nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		return nil, nil, fmt.Errorf("gcp: endpoint %q: want a URL such as http://127.0.0.1:8080", ep)
	}
	if u.Scheme == "http" {
		return []option.ClientOption{option.WithEndpoint(ep), option.WithoutAuthentication()},
			[]option.ClientOption{option.WithEndpoint(u.Host), option.WithoutAuthentication(),
				option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}, nil
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	return []option.ClientOption{option.WithEndpoint(ep)}, []option.ClientOption{option.WithEndpoint(host)}, nil
}

func (c *Collector) newClients(ctx context.Context) (*clients, error) {
	rest, rpc, err := c.options()
	if err != nil {
		return nil, err
	}
	cl := &clients{orgDomains: map[string]string{}, ancestors: map[string]bool{}}
	steps := []func() error{
		func() (err error) { cl.projects, err = resourcemanager.NewProjectsRESTClient(ctx, rest...); return },
		func() (err error) { cl.folders, err = resourcemanager.NewFoldersRESTClient(ctx, rest...); return },
		func() (err error) { cl.orgs, err = resourcemanager.NewOrganizationsRESTClient(ctx, rest...); return },
		func() (err error) { cl.iam, err = admin.NewIamClient(ctx, rpc...); return },
		func() (err error) { cl.firewalls, err = compute.NewFirewallsRESTClient(ctx, rest...); return },
		func() (err error) { cl.networks, err = compute.NewNetworksRESTClient(ctx, rest...); return },
		func() (err error) { cl.certs, err = compute.NewSslCertificatesRESTClient(ctx, rest...); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			cl.close()
			return nil, fmt.Errorf("gcp: create API clients: %w", err)
		}
	}
	return cl, nil
}

// close closes the clients created so far.
func (cl *clients) close() {
	if cl.projects != nil {
		_ = cl.projects.Close()
	}
	if cl.folders != nil {
		_ = cl.folders.Close()
	}
	if cl.orgs != nil {
		_ = cl.orgs.Close()
	}
	if cl.iam != nil {
		_ = cl.iam.Close()
	}
	if cl.firewalls != nil {
		_ = cl.firewalls.Close()
	}
	if cl.networks != nil {
		_ = cl.networks.Close()
	}
	if cl.certs != nil {
		_ = cl.certs.Close()
	}
}

// newRun starts the collection of one scope. The limiter's burst is a tenth of a second's
// worth of calls, so that the rate holds from the first call on.
func (c *Collector) newRun() *run {
	burst := max(1, int(math.Ceil(c.cfg.RateLimit/10)))
	return &run{cfg: &c.cfg, log: c.log, lim: rate.NewLimiter(rate.Limit(c.cfg.RateLimit), burst)}
}

// Discover returns the project ids to collect: Config.Projects, or else every active
// project the credentials can see (Resource Manager projects.search).
func (c *Collector) Discover(ctx context.Context) ([]string, error) {
	if len(c.cfg.Projects) > 0 {
		return append([]string(nil), c.cfg.Projects...), nil
	}
	rest, _, err := c.options()
	if err != nil {
		return nil, err
	}
	pc, err := resourcemanager.NewProjectsRESTClient(ctx, rest...)
	if err != nil {
		return nil, fmt.Errorf("gcp: create Resource Manager client: %w", err)
	}
	defer pc.Close()
	r := c.newRun()
	found, err := pages(ctx, r, "cloudresourcemanager.SearchProjects", func(ctx context.Context, token string, items *[]*resourcemanagerpb.Project) (string, error) {
		it := pc.SearchProjects(ctx, &resourcemanagerpb.SearchProjectsRequest{Query: "state:ACTIVE"}, noRetry)
		return nextPage(it, c.pageSize(500), token, items)
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
	projects, err := c.Discover(ctx)
	if err != nil {
		return err
	}
	cl, err := c.newClients(ctx)
	if err != nil {
		return err
	}
	defer cl.close()
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
func finish(sc *snapshot.Scope, r *run, primary error, secondary []error) {
	sc.Calls, sc.Throttled, sc.AccessDenied = r.calls, r.throttled, r.accessDenied
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
