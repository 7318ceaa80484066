// Package gcpapi is warden's one way to call Google Cloud: the official clients of the
// APIs warden reads and changes (Resource Manager, IAM admin, Compute, Recommender, Policy
// Analyzer), created once with Application Default Credentials or against an endpoint
// override (the simulator), and Call, through which every attempt goes: paced by a token
// bucket per service and project, retried on throttling and transient failures with
// full-jitter backoff, and counted. The collectors and the remediators share it, and classify
// Google's answers the same way (Code, IsDenied, IsNotFound, IsThrottled, IsConflict).
package gcpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	admin "cloud.google.com/go/iam/admin/apiv1"
	recommender "cloud.google.com/go/recommender/apiv1"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	gax "github.com/googleapis/gax-go/v2"
	"golang.org/x/time/rate"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	policyanalyzer "google.golang.org/api/policyanalyzer/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/warden-sec/warden/internal/backoff"
)

// Options say where Google Cloud is and how hard to press its APIs.
type Options struct {
	// Endpoint overrides Google's endpoints, for the simulator or a private endpoint. An
	// http:// URL is used without credentials (REST at the URL, gRPC in plain text at its
	// host:port); otherwise Application Default Credentials apply. Empty: Google's.
	Endpoint string
	// RateLimit is calls per second per service per project; 0 means 10.
	RateLimit float64
	// MaxAttempts bounds the attempts of one call (throttled or transient); 0 means 8.
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the full-jitter backoff between attempts; 0 means
	// 250ms and 30s.
	BaseBackoff, MaxBackoff time.Duration
	// Logger receives retries and failed calls at debug level; nil discards.
	Logger *slog.Logger
}

// Clients are the API clients, shared by everything that calls Google Cloud in one
// process or run. Every call on them goes through Call with NoRetry.
type Clients struct {
	// IAM is the IAM admin API (service accounts and their keys), over gRPC.
	IAM *admin.IamClient
	// Projects, Folders and Organizations are Resource Manager v3, over REST.
	Projects      *resourcemanager.ProjectsClient
	Folders       *resourcemanager.FoldersClient
	Organizations *resourcemanager.OrganizationsClient
	// Firewalls, Networks and SslCertificates are Compute's global resources, over REST.
	Firewalls       *compute.FirewallsClient
	Networks        *compute.NetworksClient
	SslCertificates *compute.SslCertificatesClient
	// Instances are Compute Engine's VM instances (zonal, read project-wide), and
	// ComputeProjects Compute's view of a project (whether it is a Shared VPC host), over REST.
	Instances       *compute.InstancesClient
	ComputeProjects *compute.ProjectsClient
	// IAMv1 is IAM v1 over REST (workload identity pools and their providers), which the
	// gRPC IAM admin API does not serve.
	IAMv1 *iamv1.Service
	// Recommender is the Recommender API (the IAM recommender's role recommendations and
	// their insights), over gRPC.
	Recommender *recommender.Client
	// PolicyAnalyzer is the Policy Analyzer v1 over REST (when service accounts and their
	// keys last authenticated).
	PolicyAnalyzer *policyanalyzer.Service

	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	limiters map[string]*rate.Limiter // by "service/project"
}

// New creates the clients; it makes no call yet (gRPC connects lazily).
func New(ctx context.Context, opts Options) (*Clients, error) {
	c := newClients(opts)
	rest, rpc, err := ClientOptions(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	steps := []func() error{
		func() (err error) { c.Projects, err = resourcemanager.NewProjectsRESTClient(ctx, rest...); return },
		func() (err error) { c.Folders, err = resourcemanager.NewFoldersRESTClient(ctx, rest...); return },
		func() (err error) {
			c.Organizations, err = resourcemanager.NewOrganizationsRESTClient(ctx, rest...)
			return
		},
		func() (err error) { c.IAM, err = admin.NewIamClient(ctx, rpc...); return },
		func() (err error) { c.Recommender, err = recommender.NewClient(ctx, rpc...); return },
		func() (err error) {
			c.IAMv1, err = iamv1.NewService(ctx, discoveryOptions(rest, opts.Endpoint)...)
			return
		},
		func() (err error) {
			c.PolicyAnalyzer, err = policyanalyzer.NewService(ctx, discoveryOptions(rest, opts.Endpoint)...)
			return
		},
		func() (err error) { c.Firewalls, err = compute.NewFirewallsRESTClient(ctx, rest...); return },
		func() (err error) { c.Networks, err = compute.NewNetworksRESTClient(ctx, rest...); return },
		func() (err error) {
			c.SslCertificates, err = compute.NewSslCertificatesRESTClient(ctx, rest...)
			return
		},
		func() (err error) { c.Instances, err = compute.NewInstancesRESTClient(ctx, rest...); return },
		func() (err error) { c.ComputeProjects, err = compute.NewProjectsRESTClient(ctx, rest...); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("gcp: create API clients: %w", err)
		}
	}
	return c, nil
}

// newClients applies opts' defaults; the API clients are left to New.
func newClients(opts Options) *Clients {
	if opts.RateLimit <= 0 {
		opts.RateLimit = 10
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 8
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = 250 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.BaseBackoff)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Clients{opts: opts, log: log, limiters: map[string]*rate.Limiter{}}
}

// discoveryOptions are the REST options for a client generated from a discovery document
// (google.golang.org/api/…), which joins its base path and "v1/…": an endpoint override
// needs a trailing slash.
func discoveryOptions(rest []option.ClientOption, ep string) []option.ClientOption {
	if ep == "" {
		return rest
	}
	return append(slices.Clone(rest), option.WithEndpoint(strings.TrimSuffix(ep, "/")+"/"))
}

// ClientOptions are the client options for REST and for gRPC clients of Google APIs at
// endpoint ep (a simulator over http: no credentials sent, plaintext gRPC); none for "",
// Google's own endpoints with the default credentials.
func ClientOptions(ep string) (rest, rpc []option.ClientOption, err error) {
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

// Close closes every client created.
func (c *Clients) Close() error {
	var closers []func() error
	add := func(ok bool, f func() error) {
		if ok {
			closers = append(closers, f)
		}
	}
	// A client New did not get to is nil: its Close would panic.
	add(c.Projects != nil, func() error { return c.Projects.Close() })
	add(c.Folders != nil, func() error { return c.Folders.Close() })
	add(c.Organizations != nil, func() error { return c.Organizations.Close() })
	add(c.IAM != nil, func() error { return c.IAM.Close() })
	add(c.Recommender != nil, func() error { return c.Recommender.Close() })
	add(c.Firewalls != nil, func() error { return c.Firewalls.Close() })
	add(c.Networks != nil, func() error { return c.Networks.Close() })
	add(c.SslCertificates != nil, func() error { return c.SslCertificates.Close() })
	add(c.Instances != nil, func() error { return c.Instances.Close() })
	add(c.ComputeProjects != nil, func() error { return c.ComputeProjects.Close() })
	var errs []error
	for _, f := range closers {
		if err := f(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// NoRetry turns a client's own retries off: pass it to every client call made inside
// Call, so that each attempt is paced and counted by Call and none is retried twice over.
func NoRetry() gax.CallOption {
	return gax.WithRetry(func() gax.Retryer { return nil })
}

// Scope says what calls belong to: the project (or "folders/N", "organizations/N") whose
// token bucket paces them, and the Counter, if any, that counts their attempts.
type Scope struct {
	Project string
	Counter *Counter
}

type scopeKey struct{}

// WithScope returns ctx carrying sc, for the calls made with it. Calls without a scope
// share one bucket per service.
func WithScope(ctx context.Context, sc Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, sc)
}

func scopeOf(ctx context.Context) Scope {
	sc, _ := ctx.Value(scopeKey{}).(Scope)
	return sc
}

// Counter counts attempts, and those throttled or denied. The zero value is ready; it is
// safe for concurrent use.
type Counter struct {
	calls, throttled, denied atomic.Int64
}

// Calls is the number of attempts made, retries included.
func (c *Counter) Calls() int { return int(c.calls.Load()) }

// Throttled is the number of attempts refused for rate or quota (RESOURCE_EXHAUSTED).
func (c *Counter) Throttled() int { return int(c.throttled.Load()) }

// Denied is the number of attempts refused for lack of permission (PERMISSION_DENIED).
func (c *Counter) Denied() int { return int(c.denied.Load()) }

// limiter is the bucket of a service and project. Its burst is a tenth of a second's
// worth of calls, so that the rate holds from the first call on.
func (c *Clients) limiter(service, project string) *rate.Limiter {
	key := service + "/" + project
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.limiters[key]
	if l == nil {
		burst := max(1, int(math.Ceil(c.opts.RateLimit/10)))
		l = rate.NewLimiter(rate.Limit(c.opts.RateLimit), burst)
		c.limiters[key] = l
	}
	return l
}

// Call runs f until it succeeds, fails for good, or MaxAttempts are spent. name is the
// call as errors and logs name it, "service.Method" ("iam.DisableServiceAccountKey"); its
// service and the project of ctx's Scope choose the token bucket each attempt waits for.
// Throttled (429, RESOURCE_EXHAUSTED) and transient (5xx, UNAVAILABLE) failures are retried
// after backoff.FullJitter; an endpoint that cannot be reached at all (backoff.Unreachable:
// connection refused, no such host) only backoff.UnreachableAttempts times. A failure is a *CallError naming the call, its code and
// Google's message; Code, IsDenied, IsNotFound… read it.
func (c *Clients) Call(ctx context.Context, name string, f func(ctx context.Context) error) error {
	sc := scopeOf(ctx)
	service, _, _ := strings.Cut(name, ".")
	lim := c.limiter(service, sc.Project)
	for attempt := 1; ; attempt++ {
		if err := lim.Wait(ctx); err != nil {
			return cancelled(name, ctx, err)
		}
		if sc.Counter != nil {
			sc.Counter.calls.Add(1)
		}
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return cancelled(name, ctx, ctx.Err())
		}
		code, msg := codeOf(err)
		if sc.Counter != nil {
			switch code {
			case codes.ResourceExhausted:
				sc.Counter.throttled.Add(1)
			case codes.PermissionDenied:
				sc.Counter.denied.Add(1)
			}
		}
		// An endpoint that cannot be reached at all gets one quick retry, not the backoff.
		unreachable := backoff.Unreachable(err)
		if !retryable(code) || attempt >= c.opts.MaxAttempts || unreachable && attempt >= backoff.UnreachableAttempts {
			c.log.Debug("gcp call failed", "call", name, "project", sc.Project, "code", code, "attempts", attempt, "error", msg)
			return &CallError{Call: name, Code: code, Message: msg, Err: err}
		}
		d := backoff.FullJitter(c.opts.BaseBackoff, c.opts.MaxBackoff, attempt)
		if unreachable {
			d = backoff.FullJitter(backoff.UnreachableDelay, backoff.UnreachableDelay, attempt)
		}
		c.log.Debug("gcp call retried", "call", name, "project", sc.Project, "code", code, "attempt", attempt, "backoff", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return cancelled(name, ctx, ctx.Err())
		case <-t.C:
		}
	}
}

// cancelled is the error of a call cut short by its context.
func cancelled(name string, ctx context.Context, err error) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return &CallError{Call: name, Code: codes.Canceled, Message: err.Error(), Err: err}
}

// retryable: throttling, and server or transport trouble that may pass.
func retryable(c codes.Code) bool {
	switch c {
	case codes.ResourceExhausted, codes.Unavailable, codes.Internal, codes.DeadlineExceeded, codes.Unknown:
		return true
	}
	return false
}
