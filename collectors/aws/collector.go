// Package aws collects AWS accounts into snapshots: IAM (through the bulk
// GetAccountAuthorizationDetails and the credential report), EC2 security groups in every
// enabled region, and ACM certificates, for the account of the current credentials or,
// with Organizations, for every member account through an assumed role.
//
// Every call goes through internal/awsapi: a token bucket per service and account, and
// retries with full-jitter backoff on throttling and 5xx. Throttled and denied calls are
// counted per scope; a scope whose reads failed is reported failed, never empty. Read
// reads one resource again by uid (read.go); Scopes and CollectScope name the scopes and
// read one alone, warden's daemon's unit of work (scoped.go).
package aws

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/snapshot"
)

// Config says what to collect and how politely.
type Config struct {
	// Regions to read EC2 and ACM in; empty means every region enabled in each account.
	Regions []string
	// Org walks the organisation: every active member account, through OrgRole.
	Org bool
	// OrgRole is the role assumed in member accounts (default OrganizationAccountAccessRole).
	OrgRole string
	// Accounts in parallel (default 4).
	Concurrency int
	// RateLimits are calls per second per service and account (iam, sts, ec2, acm,
	// organizations); missing services use DefaultRateLimit.
	RateLimits map[string]float64
	// MaxAttempts per call, the first included (default 10).
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the jittered exponential backoff between attempts
	// (defaults 200ms and 20s).
	BaseBackoff, MaxBackoff time.Duration
	// Endpoint overrides the AWS endpoint of every service (the simulator); empty uses
	// AWS_ENDPOINT_URL or AWS itself.
	Endpoint string
	// AWS is the base configuration (credentials, region); nil loads the standard chain.
	AWS *aws.Config
	// Logger receives progress and failures; default discards.
	Logger *slog.Logger
	// Sessions, when set, are the AWS sessions to call through (shared with remediators,
	// so that both draw on one token bucket per service and account); Endpoint, AWS,
	// RateLimits, MaxAttempts, the backoff bounds and OrgRole are then theirs, not these.
	Sessions *awsapi.Sessions
	// Usage turns on what each principal used of its grants (Access Advisor), as
	// attributes.usage of users, groups and roles.
	Usage UsageConfig
}

// DefaultRateLimit is the calls per second per account warden makes to a service unless
// told otherwise (awsapi.DefaultRateLimit).
func DefaultRateLimit(service string) float64 { return awsapi.DefaultRateLimit(service) }

// Collector reads AWS accounts.
type Collector struct {
	cfg Config
	log *slog.Logger

	once     sync.Once
	initErr  error
	sessions *awsapi.Sessions
	// self is the caller's account: discovery, the role assumptions into members and the
	// collection of the caller's own account share its token buckets.
	self *account

	// mu guards accounts, the accounts to collect (listed again by Scopes, so that a
	// long-lived collector sees the organisation change), and regions, the regions last
	// listed in each account, which CollectScope checks a region against.
	usage usageCache // principals' usage, reused for Usage.Refresh
	// settings is settingsDigest, computed once (reread.go).
	settings func() string

	mu       sync.Mutex
	accounts []orgAccount
	regions  map[string][]string
}

var (
	_ collectors.Collector  = (*Collector)(nil)
	_ collectors.Discoverer = (*Collector)(nil)
	_ collectors.Reader     = (*Collector)(nil)
)

// orgAccount is an account to collect, as Organizations lists it.
type orgAccount struct {
	ID, Name string
	Self     bool // the account of the base credentials
}

// New returns a collector; it makes no call until Discover, Collect or Read.
func New(cfg Config) *Collector {
	if cfg.OrgRole == "" {
		cfg.OrgRole = "OrganizationAccountAccessRole"
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	// A region named twice would be read twice: two scopes of one id and every resource
	// twice, which a snapshot refuses.
	cfg.Regions = unique(cfg.Regions)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Collector{cfg: cfg, log: log}
	c.settings = sync.OnceValue(c.settingsDigest)
	return c
}

// unique is ss without repeats (and without empty strings), in first-seen order.
func unique(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Name implements collectors.Collector.
func (c *Collector) Name() string { return "aws" }

// Permissions lists the IAM actions of every call the collector makes in an account it
// reads (Collect, Read, Scopes and CollectScope alike), sorted, a fresh slice each call:
// warden's read-only scanner policy is generated from it, and a test holds it to the
// calls the collector makes. Each file declares the actions of its own calls; walking an
// organisation needs OrgPermissions too.
func Permissions() []string {
	all := slices.Concat(iamPermissions(), iamAccountPermissions(), usagePermissions(), ec2Permissions(), acmPermissions(),
		regionPermissions(), readPermissions())
	slices.Sort(all)
	return slices.Compact(all)
}

// Discover finds the accounts to collect: the caller's, and with Org every active member.
func (c *Collector) Discover(ctx context.Context) ([]string, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	accounts := c.accountList()
	ids := make([]string, len(accounts))
	for i, a := range accounts {
		ids[i] = a.ID
	}
	return ids, nil
}

func (c *Collector) init(ctx context.Context) error {
	_, err := c.initOnce(ctx)
	return err
}

// initOnce discovers the accounts the first time it is called; fresh reports whether this
// call did, so that Scopes does not list the organisation twice in a row.
func (c *Collector) initOnce(ctx context.Context) (fresh bool, err error) {
	c.once.Do(func() {
		fresh = true
		c.initErr = c.discover(ctx)
	})
	return fresh, c.initErr
}

// accountList is the accounts to collect, as last discovered.
func (c *Collector) accountList() []orgAccount {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.accounts
}

// refreshAccounts lists the organisation's accounts again (one that joined, one that was
// suspended); without Org there is only the caller's.
func (c *Collector) refreshAccounts(ctx context.Context) error {
	if !c.cfg.Org {
		return nil
	}
	members, err := listOrgAccounts(ctx, c.self.api.Organizations())
	if err != nil {
		return fmt.Errorf("list the organisation's accounts (organizations:ListAccounts) from %s: %w", c.self.id, awsapi.Redact(err))
	}
	c.setAccounts(members)
	return nil
}

// setAccounts makes the caller's account and the organisation's members the accounts to
// collect, the caller's first.
func (c *Collector) setAccounts(members []orgAccount) {
	accounts := []orgAccount{{ID: c.self.id, Self: true}}
	for _, m := range members {
		if m.ID != c.self.id {
			accounts = append(accounts, m)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accounts = accounts
}

func (c *Collector) discover(ctx context.Context) error {
	c.sessions = c.cfg.Sessions
	if c.sessions == nil {
		s, err := awsapi.NewSessions(ctx, awsapi.Options{
			Endpoint: c.cfg.Endpoint, AWS: c.cfg.AWS, RateLimits: c.cfg.RateLimits, MaxAttempts: c.cfg.MaxAttempts,
			BaseBackoff: c.cfg.BaseBackoff, MaxBackoff: c.cfg.MaxBackoff, OrgRole: c.cfg.OrgRole,
			RoleSessionName: "warden-collect", Logger: c.log,
		})
		if err != nil {
			return err
		}
		c.sessions = s
	}
	self, err := c.sessions.Account(ctx, "")
	if err != nil {
		return err
	}
	c.self = &account{c: c, api: self, id: self.ID()}
	c.setAccounts(nil)
	// Discovery calls belong to no scope.
	return c.refreshAccounts(ctx)
}

// Collect implements collectors.Collector. It stops, with the error, when the sink
// cannot take a resource: a snapshot that lost some would read as deletions.
func (c *Collector) Collect(ctx context.Context, sink collectors.Sink) error {
	if err := c.init(ctx); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for _, oa := range c.accountList() {
		g.Go(func() error {
			// An account whose turn comes after a failure (a sink that failed, the
			// context) is not read: the collection is over.
			if err := gctx.Err(); err != nil {
				return err
			}
			a, err := c.open(gctx, oa)
			if err != nil && gctx.Err() != nil {
				return gctx.Err()
			}
			if err != nil {
				c.log.Warn("cannot open account", "account", oa.ID, "err", err)
				for _, svc := range []string{"iam", "ec2", "acm"} {
					if err := openFailed(sink, oa.ID, svc, "", err).finish(); err != nil {
						return err
					}
				}
				return nil
			}
			return a.collect(gctx, sink)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// open returns the account with credentials to read it: the base ones for the caller's
// account, an assumed role for a member.
func (c *Collector) open(ctx context.Context, oa orgAccount) (*account, error) {
	if oa.Self {
		return c.self, nil
	}
	return c.account(ctx, oa.ID)
}

// account opens any account by id through the sessions.
func (c *Collector) account(ctx context.Context, id string) (*account, error) {
	if c.self != nil && (id == "" || id == c.self.id) {
		return c.self, nil
	}
	api, err := c.sessions.Account(ctx, id)
	if err != nil {
		return nil, err
	}
	return &account{c: c, api: api, id: api.ID()}, nil
}

// account is one account being read, through its awsapi account (and token buckets).
type account struct {
	c   *Collector
	api *awsapi.Account
	id  string
}

// partition is the account's ARN partition.
func (a *account) partition() string { return a.api.Partition() }

func (a *account) iam(sc *scope) *iam.Client {
	return a.api.IAM(func(o *iam.Options) { o.APIOptions = append(o.APIOptions, sc.cnt.Middleware()) })
}

func (a *account) ec2(sc *scope, region string) *ec2.Client {
	return a.api.EC2(region, func(o *ec2.Options) { o.APIOptions = append(o.APIOptions, sc.cnt.Middleware()) })
}

func (a *account) acm(sc *scope, region string) *acm.Client {
	return a.api.ACM(region, func(o *acm.Options) { o.APIOptions = append(o.APIOptions, sc.cnt.Middleware()) })
}

func (a *account) org() *organizations.Client { return a.api.Organizations() }

// collect reads every scope of the account: IAM, and EC2 and ACM in each region. Only a
// sink that fails, or the context, stops it; a scope that cannot be read is a failed one.
func (a *account) collect(ctx context.Context, sink collectors.Sink) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.collectIAM(gctx, sink) })
	regions := a.c.cfg.Regions
	if len(regions) == 0 {
		var err error
		// A failure to list them is recorded as failed ec2 and acm scopes; IAM goes on.
		if regions, err = a.enabledRegions(gctx, sink); err != nil {
			_ = g.Wait()
			return err
		}
	}
	for _, r := range regions {
		g.Go(func() error { return a.collectEC2(gctx, sink, r) })
		g.Go(func() error { return a.collectACM(gctx, sink, r) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// scope tracks one scope while it is read. Resources are held until the scope is done,
// so that a scope that fails emits none.
type scope struct {
	sink      collectors.Sink
	mu        sync.Mutex
	s         snapshot.Scope
	resources []snapshot.Resource
	cnt       awsapi.Counter
}

func newScope(sink collectors.Sink, acct, service, region string) *scope {
	s := scopeOf(acct, service, region)
	s.Status = snapshot.ScopeOK
	return &scope{sink: sink, s: s}
}

// scopeOf names a scope, not yet read.
func scopeOf(acct, service, region string) snapshot.Scope {
	return snapshot.Scope{ID: scopeID(acct, service, region), Provider: "aws", Account: acct, Service: service, Region: region}
}

// openFailed is a scope of an account that could not be opened: failed, and without a
// call of its own (the role assumption is the account's, not the scope's).
func openFailed(sink collectors.Sink, acct, service, region string, err error) *scope {
	sc := newScope(sink, acct, service, region)
	sc.fail("assume role", err)
	return sc
}

// scopeID is "aws/ACCOUNT/SERVICE[/REGION]".
func scopeID(acct, service, region string) string {
	id := "aws/" + acct + "/" + service
	if region != "" {
		id += "/" + region
	}
	return id
}

// add records a resource of the scope.
func (sc *scope) add(r snapshot.Resource) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.resources = append(sc.resources, sc.place(r))
}

// place gives r the scope's account, id and region ("global" for a scope of none).
func (sc *scope) place(r snapshot.Resource) snapshot.Resource {
	r.Account, r.Scope = sc.s.Account, sc.s.ID
	if r.Region == "" {
		r.Region = sc.s.Region
		if r.Region == "" {
			r.Region = "global"
		}
	}
	return r
}

// fail marks the scope failed: nothing it read is trustworthy.
func (sc *scope) fail(op string, err error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.s.Status = snapshot.ScopeFailed
	sc.note(op, err)
}

// partial marks the scope partial: what was read is real, the rest unknown.
func (sc *scope) partial(op string, err error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.s.Status == snapshot.ScopeOK {
		sc.s.Status = snapshot.ScopePartial
	}
	sc.note(op, err)
}

// note records an error; the caller holds sc.mu.
func (sc *scope) note(op string, err error) {
	msg := op + ": " + awsapi.Message(err)
	if sc.s.Error == "" {
		sc.s.Error = msg
	} else if len(sc.s.Error) < 1000 {
		sc.s.Error += "; " + msg
	}
}

// done finishes sc and warns of a scope that was not read whole, so that a user sees
// which scope and why without opening the snapshot. A sink that fails is the error.
func (a *account) done(sc *scope) error {
	if err := sc.finish(); err != nil {
		return err
	}
	switch sc.s.Status {
	case snapshot.ScopeFailed:
		a.c.log.Warn("aws scope failed", "scope", sc.s.ID, "error", sc.s.Error)
	case snapshot.ScopePartial:
		a.c.log.Warn("aws scope partly read", "scope", sc.s.ID, "error", sc.s.Error)
	}
	return nil
}

// finish reports the scope and, unless it failed, its resources.
func (sc *scope) finish() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.s.Calls, sc.s.Throttled, sc.s.AccessDenied = sc.cnt.Calls(), sc.cnt.Throttled(), sc.cnt.Denied()
	if sc.s.Status == snapshot.ScopeFailed {
		sc.resources = nil
	}
	sc.s.Resources = len(sc.resources)
	slices.SortFunc(sc.resources, func(a, b snapshot.Resource) int { return strings.Compare(a.UID, b.UID) })
	for _, r := range sc.resources {
		if err := sc.sink.Resource(r); err != nil {
			return fmt.Errorf("aws: %s: write %s: %w", sc.s.ID, r.UID, err)
		}
	}
	sc.sink.Scope(sc.s)
	return nil
}
