// Package aws collects AWS accounts into snapshots: IAM (through the bulk
// GetAccountAuthorizationDetails and the credential report), EC2 security groups in every
// enabled region, and ACM certificates, for the account of the current credentials or,
// with Organizations, for every member account through an assumed role.
//
// Every call goes through a token bucket per service and account, and is retried with
// exponential backoff and full jitter on throttling and 5xx. Throttled and denied calls
// are counted per scope; a scope whose reads failed is reported failed, never empty.
package aws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/warden-sec/warden/collectors"
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
}

// DefaultRateLimit is the calls per second per account warden makes to a service unless
// told otherwise: below AWS's documented steady-state limits, so that a scan does
// not starve the account's other tooling.
func DefaultRateLimit(service string) float64 {
	switch service {
	case "ec2":
		return 20
	case "organizations":
		return 5
	}
	return 10 // iam, sts, acm
}

// Collector reads AWS accounts.
type Collector struct {
	cfg  Config
	log  *slog.Logger
	base aws.Config

	once    sync.Once
	initErr error
	caller  string
	// self is the caller's account: discovery, the role assumptions into members and the
	// collection of the caller's own account share its token buckets.
	self *account
	// partition is the ARN partition of the caller ("aws", "aws-cn", "aws-us-gov"),
	// read from its ARN so that uids are right outside the commercial partition.
	partition string
	accounts  []orgAccount
}

// orgAccount is an account to collect, as Organizations lists it.
type orgAccount struct {
	ID, Name string
	Self     bool // the account of the base credentials
}

// New returns a collector; it makes no call until Discover or Collect.
func New(cfg Config) *Collector {
	if cfg.OrgRole == "" {
		cfg.OrgRole = "OrganizationAccountAccessRole"
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 10
	}
	if cfg.BaseBackoff <= 0 {
		cfg.BaseBackoff = 200 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 20 * time.Second
	}
	// A region named twice would be read twice: two scopes of one id and every resource
	// twice, which a snapshot refuses.
	cfg.Regions = unique(cfg.Regions)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Collector{cfg: cfg, log: log}
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

// Discover finds the accounts to collect: the caller's, and with Org every active member.
func (c *Collector) Discover(ctx context.Context) ([]string, error) {
	if err := c.init(ctx); err != nil {
		return nil, err
	}
	ids := make([]string, len(c.accounts))
	for i, a := range c.accounts {
		ids[i] = a.ID
	}
	return ids, nil
}

func (c *Collector) init(ctx context.Context) error {
	c.once.Do(func() { c.initErr = c.discover(ctx) })
	return c.initErr
}

func (c *Collector) discover(ctx context.Context) error {
	if c.cfg.AWS != nil {
		c.base = c.cfg.AWS.Copy()
	} else {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return fmt.Errorf("load AWS configuration: %w", err)
		}
		c.base = cfg
	}
	if c.base.Region == "" {
		c.base.Region = "us-east-1"
	}
	if c.cfg.Endpoint != "" {
		c.base.BaseEndpoint = aws.String(c.cfg.Endpoint)
	}
	// The SDK's own retry quota gives up under a throttling storm; retries are bounded by
	// MaxAttempts and paced by the token buckets instead.
	c.base.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = c.cfg.MaxAttempts
			o.RateLimiter = ratelimit.None
			o.Backoff = jitter{base: c.cfg.BaseBackoff, max: c.cfg.MaxBackoff}
		})
	}
	c.self = &account{c: c, cfg: c.base, limiters: map[string]*rate.Limiter{}}
	sc := &scope{} // discovery calls belong to no scope
	out, err := c.self.sts(sc).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return fmt.Errorf("identify the AWS caller (sts:GetCallerIdentity): %w%s", redacted{err}, credentialsHint(err))
	}
	c.caller = aws.ToString(out.Account)
	c.partition = partitionOf(aws.ToString(out.Arn))
	if c.caller == "" {
		// Every scope id and ARN is built from it: "aws//iam" would be no account at all.
		return errors.New("identify the AWS caller (sts:GetCallerIdentity): the answer names no account")
	}
	c.self.id = c.caller
	c.accounts = []orgAccount{{ID: c.caller, Self: true}}
	if c.cfg.Org {
		members, err := listOrgAccounts(ctx, c.self, sc)
		if err != nil {
			return fmt.Errorf("list the organisation's accounts (organizations:ListAccounts) from %s: %w", c.caller, redacted{err})
		}
		for _, m := range members {
			if m.ID != c.caller {
				c.accounts = append(c.accounts, m)
			}
		}
	}
	return nil
}

// Collect implements collectors.Collector.
func (c *Collector) Collect(ctx context.Context, sink collectors.Sink) error {
	if err := c.init(ctx); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for _, oa := range c.accounts {
		g.Go(func() error {
			a, err := c.open(ctx, oa)
			if err != nil {
				c.log.Warn("cannot open account", "account", oa.ID, "err", err)
				for _, svc := range []string{"iam", "ec2", "acm"} {
					sc := newScope(sink, oa.ID, svc, "")
					sc.fail("assume role", err)
					if err := sc.finish(); err != nil {
						return err
					}
				}
				return nil
			}
			return a.collect(ctx, sink)
		})
	}
	return g.Wait()
}

// open returns the account with credentials to read it: the base ones for the caller's
// account, an assumed role for a member.
func (c *Collector) open(ctx context.Context, oa orgAccount) (*account, error) {
	if oa.Self {
		return c.self, nil
	}
	a := &account{c: c, id: oa.ID, cfg: c.base.Copy(), limiters: map[string]*rate.Limiter{}}
	roleARN := fmt.Sprintf("arn:%s:iam::%s:role/%s", c.partition, oa.ID, c.cfg.OrgRole)
	creds, err := assumeRole(ctx, c, roleARN)
	if err != nil {
		return nil, fmt.Errorf("assume %s: %w", roleARN, redacted{err})
	}
	a.cfg.Credentials = creds
	return a, nil
}

// account is one account being collected, with its own token buckets.
type account struct {
	c   *Collector
	id  string
	cfg aws.Config

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func (a *account) limiter(service string) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.limiters[service]
	if l == nil {
		lim, ok := a.c.cfg.RateLimits[service]
		if !ok {
			lim = DefaultRateLimit(service)
		}
		if lim <= 0 {
			l = rate.NewLimiter(rate.Inf, 1)
		} else {
			l = rate.NewLimiter(rate.Limit(lim), 1)
		}
		a.limiters[service] = l
	}
	return l
}

// pace returns the middleware that paces every attempt (retries included) through the
// service's token bucket and counts the attempts that were throttled or denied in sc.
func (a *account) pace(sc *scope, service string) func(*middleware.Stack) error {
	lim := a.limiter(service)
	return func(st *middleware.Stack) error {
		return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("WardenPace",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if err := lim.Wait(ctx); err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				sc.calls.Add(1)
				out, md, err := next.HandleFinalize(ctx, in)
				if err != nil {
					switch {
					case isThrottle(err):
						sc.throttled.Add(1)
					case isDenied(err):
						sc.denied.Add(1)
					}
				}
				return out, md, err
			}), middleware.After)
	}
}

func (a *account) sts(sc *scope) *sts.Client {
	return sts.NewFromConfig(a.cfg, func(o *sts.Options) { o.APIOptions = append(o.APIOptions, a.pace(sc, "sts")) })
}

func (a *account) iam(sc *scope) *iam.Client {
	return iam.NewFromConfig(a.cfg, func(o *iam.Options) { o.APIOptions = append(o.APIOptions, a.pace(sc, "iam")) })
}

func (a *account) ec2(sc *scope, region string) *ec2.Client {
	return ec2.NewFromConfig(a.cfg, func(o *ec2.Options) {
		o.Region = region
		o.APIOptions = append(o.APIOptions, a.pace(sc, "ec2"))
	})
}

func (a *account) acm(sc *scope, region string) *acm.Client {
	return acm.NewFromConfig(a.cfg, func(o *acm.Options) {
		o.Region = region
		o.APIOptions = append(o.APIOptions, a.pace(sc, "acm"))
	})
}

func (a *account) org(sc *scope) *organizations.Client {
	return organizations.NewFromConfig(a.cfg, func(o *organizations.Options) {
		o.APIOptions = append(o.APIOptions, a.pace(sc, "organizations"))
	})
}

// collect reads every scope of the account: IAM, and EC2 and ACM in each region.
func (a *account) collect(ctx context.Context, sink collectors.Sink) error {
	var wg sync.WaitGroup
	wg.Go(func() { a.collectIAM(ctx, sink) })
	regions := a.c.cfg.Regions
	if len(regions) == 0 {
		var err error
		// A failure is recorded as failed ec2 and acm scopes; IAM goes on.
		regions, err = a.enabledRegions(ctx, sink)
		if err != nil {
			a.c.log.Warn("cannot list regions", "account", a.id, "err", err)
		}
	}
	for _, r := range regions {
		wg.Go(func() { a.collectEC2(ctx, sink, r) })
		wg.Go(func() { a.collectACM(ctx, sink, r) })
	}
	wg.Wait()
	return ctx.Err()
}

// scope tracks one scope while it is read. Resources are held until the scope is done,
// so that a scope that fails emits none.
type scope struct {
	sink      collectors.Sink
	mu        sync.Mutex
	s         snapshot.Scope
	resources []snapshot.Resource
	calls     atomic.Int64
	throttled atomic.Int64
	denied    atomic.Int64
}

func newScope(sink collectors.Sink, acct, service, region string) *scope {
	id := "aws/" + acct + "/" + service
	if region != "" {
		id += "/" + region
	}
	return &scope{sink: sink, s: snapshot.Scope{ID: id, Provider: "aws", Account: acct, Service: service, Region: region, Status: snapshot.ScopeOK}}
}

// add records a resource of the scope.
func (sc *scope) add(r snapshot.Resource) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	r.Account, r.Scope = sc.s.Account, sc.s.ID
	if r.Region == "" {
		r.Region = sc.s.Region
		if r.Region == "" {
			r.Region = "global"
		}
	}
	sc.resources = append(sc.resources, r)
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
	msg := op + ": " + errorText(err)
	if sc.s.Error == "" {
		sc.s.Error = msg
	} else if len(sc.s.Error) < 1000 {
		sc.s.Error += "; " + msg
	}
}

// done finishes sc and warns of a scope that was not read whole, so that a user sees
// which scope and why without opening the snapshot.
func (a *account) done(sc *scope) {
	if err := sc.finish(); err != nil {
		a.c.log.Error("write AWS resources", "scope", sc.s.ID, "err", err)
	}
	switch sc.s.Status {
	case snapshot.ScopeFailed:
		a.c.log.Warn("aws scope failed", "scope", sc.s.ID, "error", sc.s.Error)
	case snapshot.ScopePartial:
		a.c.log.Warn("aws scope partly read", "scope", sc.s.ID, "error", sc.s.Error)
	}
}

// finish reports the scope and, unless it failed, its resources.
func (sc *scope) finish() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.s.Calls = int(sc.calls.Load())
	sc.s.Throttled = int(sc.throttled.Load())
	sc.s.AccessDenied = int(sc.denied.Load())
	if sc.s.Status == snapshot.ScopeFailed {
		sc.resources = nil
	}
	sc.s.Resources = len(sc.resources)
	slices.SortFunc(sc.resources, func(a, b snapshot.Resource) int { return strings.Compare(a.UID, b.UID) })
	for _, r := range sc.resources {
		if err := sc.sink.Resource(r); err != nil {
			return err
		}
	}
	sc.sink.Scope(sc.s)
	return nil
}

// credentialsHint says what to fix when a call got no answer from AWS at all: most often
// there are no usable credentials (nothing in the standard chain), or the endpoint is
// unreachable. An error AWS answered (InvalidClientTokenId, ExpiredToken…) says it itself.
func credentialsHint(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ""
	}
	return " (check the AWS credentials: AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, " +
		"`aws sso login` for SSO profiles, or an instance role; and that AWS_ENDPOINT_URL, if set, is reachable)"
}

// errorText is an error as a scope records it: the API's code and message, without the
// SDK's request ids and wrapping.
func errorText(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return redact(ae.ErrorCode() + ": " + ae.ErrorMessage())
	}
	return redact(err.Error())
}

// canonicalEcho starts what AWS appends to a signature it could not verify: the request as
// it canonicalised it, headers included, and so the x-amz-security-token of temporary
// credentials.
const canonicalEcho = "The Canonical String for this request"

// redact cuts the echoed request out of an error message, so that no session token
// reaches a snapshot, a log or the terminal.
func redact(msg string) string {
	if i := strings.Index(msg, canonicalEcho); i >= 0 {
		return strings.TrimSpace(msg[:i]) + " [the request AWS echoed back is left out: it holds credentials]"
	}
	return msg
}

// redacted is an error whose text is redacted; errors.As and errors.Is still see the
// original.
type redacted struct{ err error }

func (r redacted) Error() string { return redact(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func isThrottle(err error) bool {
	_, ok := retry.DefaultThrottleErrorCodes[apiCode(err)]
	return ok
}

func isDenied(err error) bool {
	switch apiCode(err) {
	case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess", "AuthFailure", "OptInRequired":
		return true
	}
	return false
}

// partitionOf reads the partition of an ARN ("arn:aws-cn:sts::…" → "aws-cn"); "aws"
// when the ARN does not say.
func partitionOf(arn string) string {
	parts := strings.SplitN(arn, ":", 3)
	if len(parts) < 3 || parts[0] != "arn" || parts[1] == "" {
		return "aws"
	}
	return parts[1]
}

// jitter is exponential backoff with full jitter: a random delay up to base·2^attempt,
// capped at max, so that throttled clients spread out instead of retrying in step.
type jitter struct{ base, max time.Duration }

func (j jitter) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	d := j.max
	if attempt < 30 {
		d = min(j.max, j.base<<attempt)
	}
	return time.Duration(rand.Int64N(int64(d) + 1)), nil
}
