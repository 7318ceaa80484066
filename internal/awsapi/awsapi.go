// Package awsapi is warden's one way to call AWS: the base configuration and credentials,
// an account per AWS account id (the caller's own, or a member reached through an assumed
// role), and clients whose every attempt, retries included, is paced by a token bucket per
// service and account and retried on throttling and 5xx with full-jitter backoff. The
// collectors and the remediators share it, so that a scan and a fix running side by side
// stay within one budget per account, and so that AWS's answers are classified once
// (Code, IsThrottled, IsDenied, IsNotFound).
package awsapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/accessanalyzer"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"golang.org/x/time/rate"

	"github.com/warden-sec/warden/internal/backoff"
	"github.com/warden-sec/warden/internal/urgency"
)

// Options say where AWS is and how politely to call it. The zero value calls AWS itself
// with the standard credential chain and the default limits.
type Options struct {
	// Endpoint overrides the endpoint of every service (the simulator); empty uses
	// AWS_ENDPOINT_URL (when the standard chain is loaded) or AWS itself.
	Endpoint string
	// AWS is the base configuration (credentials, region, middleware); nil loads the
	// standard chain.
	AWS *aws.Config
	// RateLimits are calls per second per service and account (iam, sts, ec2, acm,
	// organizations, secretsmanager); a missing service uses DefaultRateLimit, zero or less
	// is unlimited.
	RateLimits map[string]float64
	// MaxAttempts per call, the first included (default 10).
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the full-jitter backoff between attempts (defaults
	// 200ms and 20s).
	BaseBackoff, MaxBackoff time.Duration
	// OrgRole is the role assumed in member accounts (default OrganizationAccountAccessRole).
	OrgRole string
	// RoleSessionName names the sessions of assumed roles in CloudTrail (default "warden").
	RoleSessionName string
	// Logger receives role assumptions at debug level; nil discards.
	Logger *slog.Logger
	// ReplayKeeps bounds the bytes of answers replays keep together (Account.Replay):
	// 0 is DefaultReplayKeeps, negative keeps none.
	ReplayKeeps int64
	// ReplayReads bounds the bytes of answers replays read at once, from the first byte
	// of an answer until it is compared with the tape's and kept or given back: 0 is
	// DefaultReplayReads. An answer past it waits, in its connection, for its turn.
	ReplayReads int64
}

// IdleConns is how many idle connections the sessions' own HTTP client keeps, to an
// endpoint and in all: more than the reads a replica runs at once (daemon.readers, 256
// by default), so that calls reuse connections rather than open new ones. While a call
// waits for a connection, the transport dials one, and the call may take another that
// came back meanwhile: with a cap equal to the reads at once, the dialled one would
// find the idle pool full and be closed. Connections idle 90 s are closed anyway, so a
// cap above what is used costs nothing.
const IdleConns = 1024

// DefaultRateLimit is the calls per second per account warden makes to a service unless
// told otherwise: below AWS's documented steady-state limits, so that warden does not
// starve the account's other tooling.
func DefaultRateLimit(service string) float64 {
	switch service {
	case "ec2":
		return 20
	case "organizations":
		return 5
	}
	return 10 // iam, sts, acm, secretsmanager
}

// Sessions holds the base configuration and the accounts opened from it. It is safe for
// concurrent use; an account is opened once and its token buckets shared by every client
// made from it.
type Sessions struct {
	opts Options
	log  *slog.Logger
	base aws.Config

	mu        sync.Mutex
	callerID  string
	callerARN string
	partition string
	self      *Account // the base credentials' account; its id is set once Caller succeeds
	accounts  map[string]*opening
	// kept counts the bytes of answers replays hold (ReplayKeeps).
	kept atomic.Int64
	// bodies are the buffers replays read answers into.
	bodies bodyPool
}

// opening is an account being opened or opened: done closes when acct or err is set.
type opening struct {
	done chan struct{}
	acct *Account
	err  error
}

// NewSessions loads the base configuration; it makes no call yet.
func NewSessions(ctx context.Context, opts Options) (*Sessions, error) {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 10
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 20 * time.Second
	}
	if opts.OrgRole == "" {
		opts.OrgRole = "OrganizationAccountAccessRole"
	}
	if opts.RoleSessionName == "" {
		opts.RoleSessionName = "warden"
	}
	if opts.ReplayKeeps == 0 {
		opts.ReplayKeeps = DefaultReplayKeeps
	}
	if opts.ReplayReads <= 0 {
		opts.ReplayReads = DefaultReplayReads
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sessions{opts: opts, log: log, accounts: map[string]*opening{}, bodies: newBodyPool(opts.ReplayReads)}
	if opts.AWS != nil {
		s.base = opts.AWS.Copy()
	} else {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("load AWS configuration: %w", Redact(err))
		}
		s.base = cfg
	}
	if s.base.Region == "" {
		s.base.Region = "us-east-1"
	}
	// The SDK's transport keeps 10 idle connections a host: a daemon reading hundreds of
	// accounts at once (daemon.readers) from one endpoint (iam.amazonaws.com) would open
	// and close a connection, and its TLS handshake, for most calls. The SDK's default
	// client (which LoadDefaultConfig sets) keeps its settings, a custom CA bundle
	// included, with more idle connections; a config without a client (one built in
	// code, as for the simulator) gets one, shared, so that every SDK client made from
	// it shares one pool; a client of the caller's own is left as it is.
	idle := func(tr *http.Transport) {
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = IdleConns, IdleConns
	}
	switch c := s.base.HTTPClient.(type) {
	case nil:
		s.base.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(idle)
	case *awshttp.BuildableClient:
		s.base.HTTPClient = c.WithTransportOptions(idle)
	}
	// Under a Recording's context, calls are recorded for a tape (tape.go); otherwise
	// the client only passes them through.
	s.base.HTTPClient = recordingClient{inner: s.base.HTTPClient}
	if opts.Endpoint != "" {
		s.base.BaseEndpoint = aws.String(opts.Endpoint)
	}
	// The SDK's own retry quota gives up under a throttling storm: retries are bounded by
	// MaxAttempts and paced by the token buckets instead.
	// An endpoint that cannot be reached at all (connection refused, no such host) gets
	// one quick retry, not MaxAttempts of backoff: failFast.
	s.base.Retryer = func() aws.Retryer {
		return failFast{retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = opts.MaxAttempts
			o.RateLimiter = ratelimit.None
			o.Backoff = jitter{base: opts.BaseBackoff, max: opts.MaxBackoff}
		})}
	}
	s.self = s.newAccount("", s.base)
	return s, nil
}

func (s *Sessions) newAccount(id string, cfg aws.Config) *Account {
	return &Account{s: s, id: id, cfg: cfg, limiters: map[string]*rate.Limiter{}}
}

// Endpoint is the endpoint every service is called at (Options.Endpoint, or
// AWS_ENDPOINT_URL with the standard chain); empty: AWS's own.
func (s *Sessions) Endpoint() string { return aws.ToString(s.base.BaseEndpoint) }

// Caller identifies the base credentials (sts:GetCallerIdentity, once: the answer is
// kept) and returns their account id and ARN.
func (s *Sessions) Caller(ctx context.Context) (accountID, arn string, err error) {
	s.mu.Lock()
	id, a := s.callerID, s.callerARN
	s.mu.Unlock()
	if id != "" {
		return id, a, nil
	}
	out, err := s.self.STS().GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", "", fmt.Errorf("identify the AWS caller (sts:GetCallerIdentity): %w%s", Redact(err), credentialsHint(err))
	}
	id, a = aws.ToString(out.Account), aws.ToString(out.Arn)
	if id == "" {
		// Every ARN and scope is built from it: "aws//iam" would be no account at all.
		return "", "", errors.New("identify the AWS caller (sts:GetCallerIdentity): the answer names no account")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.callerID == "" {
		s.callerID, s.callerARN, s.partition = id, a, partitionOf(a)
		s.self.id, s.self.partition = id, s.partition
	}
	return s.callerID, s.callerARN, nil
}

// Account opens an account: the caller's own (accountID empty or the caller's), or a
// member through the role Options.OrgRole, whose credentials are fetched now, so that an
// account that cannot be assumed into fails here, once, and not in every call. Opened
// accounts are kept; a failure is not, and the next call tries again.
func (s *Sessions) Account(ctx context.Context, accountID string) (*Account, error) {
	caller, _, err := s.Caller(ctx)
	if err != nil {
		return nil, err
	}
	if accountID == "" || accountID == caller {
		return s.self, nil
	}
	s.mu.Lock()
	op, ok := s.accounts[accountID]
	if !ok {
		op = &opening{done: make(chan struct{})}
		s.accounts[accountID] = op
	}
	s.mu.Unlock()
	if ok {
		// Another caller is opening it, or has: share its outcome, failure included (the
		// next call after a failure tries again).
		select {
		case <-op.done:
			return op.acct, op.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	op.acct, op.err = s.assume(ctx, accountID)
	if op.err != nil {
		s.mu.Lock()
		delete(s.accounts, accountID)
		s.mu.Unlock()
	}
	close(op.done)
	return op.acct, op.err
}

// SessionDuration is how long a session of the organisation role lasts: an hour, which
// every role allows (a role's MaxSessionDuration is at least an hour, and a session
// assumed from another at most one). The SDK's default of 15 minutes had every member
// account assumed again each quarter of an hour: at 500 accounts, 500 AssumeRole calls
// through the caller's STS bucket (50 s at 10 a second), in the middle of the sweeps
// that waited for them (BENCHMARKS.md, "Sessions that outlast a sweep").
const SessionDuration = time.Hour

// sessionRenewal is how long before a session ends it is renewed, less up to half of it
// drawn at random, so that an organisation's sessions are not renewed all at once: a read
// or a replay never signs a request with credentials that end while it is on its way.
const sessionRenewal = 5 * time.Minute

// assume opens a member account through the organisation role.
func (s *Sessions) assume(ctx context.Context, accountID string) (*Account, error) {
	roleARN := fmt.Sprintf("arn:%s:iam::%s:role/%s", s.partition, accountID, s.opts.OrgRole)
	// The assumptions are the caller's STS calls: paced by the caller's STS bucket.
	prov := stscreds.NewAssumeRoleProvider(s.self.STS(), roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = s.opts.RoleSessionName
		o.Duration = SessionDuration
	})
	cache := aws.NewCredentialsCache(prov, func(o *aws.CredentialsCacheOptions) {
		o.ExpiryWindow, o.ExpiryWindowJitterFrac = sessionRenewal, 0.5
	})
	if _, err := cache.Retrieve(ctx); err != nil {
		return nil, fmt.Errorf("assume %s: %w", roleARN, Redact(err))
	}
	s.log.Debug("assumed role", "role", roleARN)
	cfg := s.base.Copy()
	cfg.Credentials = cache
	a := s.newAccount(accountID, cfg)
	a.partition = s.partition
	return a, nil
}

// Account is one AWS account with credentials to call it and its own token buckets.
type Account struct {
	s         *Sessions
	id        string
	partition string
	cfg       aws.Config

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// ID is the account id.
func (a *Account) ID() string { return a.id }

// Partition is the account's ARN partition ("aws", "aws-cn", "aws-us-gov"), read from
// the caller's ARN, so that ARNs are right outside the commercial partition.
func (a *Account) Partition() string {
	if a.partition == "" {
		return "aws"
	}
	return a.partition
}

// Region is the default region of the account's clients (the base configuration's).
func (a *Account) Region() string { return a.cfg.Region }

func (a *Account) limiter(service string) *rate.Limiter {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.limiters[service]
	if l == nil {
		lim, ok := a.s.opts.RateLimits[service]
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

// pace is the middleware that makes every attempt, retries included, wait for the
// service's token bucket. It sits after the retry middleware, so that it sees attempts.
func (a *Account) pace(service string) func(*middleware.Stack) error {
	lim := a.limiter(service)
	return func(st *middleware.Stack) error {
		return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("WardenPace",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				// Urgent work (an event's read, its fix) in progress goes first.
				if err := urgency.Yield(ctx); err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				if err := lim.Wait(ctx); err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
}

// IAM is a paced, retrying IAM client of the account. optFns run after the account's
// own options: a Counter's middleware appended to APIOptions counts each attempt.
func (a *Account) IAM(optFns ...func(*iam.Options)) *iam.Client {
	return iam.NewFromConfig(a.cfg, append([]func(*iam.Options){func(o *iam.Options) {
		o.APIOptions = append(o.APIOptions, a.pace("iam"))
	}}, optFns...)...)
}

// EC2 is a paced, retrying EC2 client of the account in region.
func (a *Account) EC2(region string, optFns ...func(*ec2.Options)) *ec2.Client {
	return ec2.NewFromConfig(a.cfg, append([]func(*ec2.Options){func(o *ec2.Options) {
		o.Region = region
		o.APIOptions = append(o.APIOptions, a.pace("ec2"))
	}}, optFns...)...)
}

// ACM is a paced, retrying ACM client of the account in region.
func (a *Account) ACM(region string, optFns ...func(*acm.Options)) *acm.Client {
	return acm.NewFromConfig(a.cfg, append([]func(*acm.Options){func(o *acm.Options) {
		o.Region = region
		o.APIOptions = append(o.APIOptions, a.pace("acm"))
	}}, optFns...)...)
}

// SecretsManager is a paced, retrying Secrets Manager client of the account in region
// (secrets are regional).
func (a *Account) SecretsManager(region string, optFns ...func(*secretsmanager.Options)) *secretsmanager.Client {
	return secretsmanager.NewFromConfig(a.cfg, append([]func(*secretsmanager.Options){func(o *secretsmanager.Options) {
		o.Region = region
		o.APIOptions = append(o.APIOptions, a.pace("secretsmanager"))
	}}, optFns...)...)
}

// AccessAnalyzer is a paced, retrying IAM Access Analyzer client of the account in
// region (analyzers are regional).
func (a *Account) AccessAnalyzer(region string, optFns ...func(*accessanalyzer.Options)) *accessanalyzer.Client {
	return accessanalyzer.NewFromConfig(a.cfg, append([]func(*accessanalyzer.Options){func(o *accessanalyzer.Options) {
		o.Region = region
		o.APIOptions = append(o.APIOptions, a.pace("access-analyzer"))
	}}, optFns...)...)
}

// STS is a paced, retrying STS client of the account.
func (a *Account) STS(optFns ...func(*sts.Options)) *sts.Client {
	return sts.NewFromConfig(a.cfg, append([]func(*sts.Options){func(o *sts.Options) {
		o.APIOptions = append(o.APIOptions, a.pace("sts"))
	}}, optFns...)...)
}

// Organizations is a paced, retrying Organizations client of the account.
func (a *Account) Organizations(optFns ...func(*organizations.Options)) *organizations.Client {
	return organizations.NewFromConfig(a.cfg, append([]func(*organizations.Options){func(o *organizations.Options) {
		o.APIOptions = append(o.APIOptions, a.pace("organizations"))
	}}, optFns...)...)
}

// credentialsHint says what to fix when a call got no answer from AWS at all: most often
// there are no usable credentials (nothing in the standard chain), or the endpoint is
// unreachable. An error AWS answered (InvalidClientTokenId, ExpiredToken…) says it itself.
func credentialsHint(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ""
	}
	if backoff.Unreachable(err) {
		return fmt.Sprintf(" (nothing answers at %s: check that the endpoint is up, and AWS_ENDPOINT_URL or the endpoint configured, if any)", endpointOf(err))
	}
	return " (check the AWS credentials: AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, " +
		"`aws sso login` for SSO profiles, or an instance role; and that AWS_ENDPOINT_URL, if set, is reachable)"
}

// endpointOf is the endpoint a failed request was sent to (its scheme and host), from
// the URL its transport error names; "the AWS endpoint" when it names none.
func endpointOf(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return u.Scheme + "://" + u.Host
		}
	}
	return "the AWS endpoint"
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

// failFast is the standard retryer, except for an endpoint that cannot be reached
// (backoff.Unreachable): it is tried backoff.UnreachableAttempts times, a short delay
// apart, and then its own error is the call's, instead of half a minute of backoff
// ending in "exceeded maximum number of attempts". Throttling and 5xx keep their retries.
type failFast struct{ aws.RetryerV2 }

func (f failFast) RetryDelay(attempt int, err error) (time.Duration, error) {
	if !backoff.Unreachable(err) {
		return f.RetryerV2.RetryDelay(attempt, err)
	}
	if attempt >= backoff.UnreachableAttempts {
		return 0, err
	}
	return backoff.FullJitter(backoff.UnreachableDelay, backoff.UnreachableDelay, attempt), nil
}

// jitter adapts backoff.FullJitter to the SDK's retryer; the SDK numbers the attempt that
// just failed, 1 for the first, which is the number of the retry to come.
type jitter struct{ base, max time.Duration }

func (j jitter) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return backoff.FullJitter(j.base, j.max, attempt), nil
}
