package aws

// Usage: what IAM's Access Advisor says each user, group and role used of what it is
// granted (GenerateServiceLastAccessedDetails, then GetServiceLastAccessedDetails until
// the job completes, every page), as the resource's attributes.usage (issue 29). Data the
// cloud cannot speak for is marked so (complete: false), never left out: a policy must
// take it as used.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/snapshot"
)

// Usage defaults.
const (
	// DefaultUsageRefresh is how long a principal's usage is reused before it is asked
	// again: AWS updates Access Advisor data within hours, not minutes.
	DefaultUsageRefresh = 4 * time.Hour
	// DefaultUsageJobTimeout bounds the wait for one principal's job.
	DefaultUsageJobTimeout = 2 * time.Minute
	// trackingPeriod is how far back Access Advisor reports use: AWS's 400 days.
	trackingPeriod = 400 * 24 * time.Hour
	// usageConcurrency is how many principals' jobs one account runs at once; the IAM
	// rate limit, not this, sets the pace.
	usageConcurrency = 8
)

// UsageConfig turns usage collection on and tunes it.
type UsageConfig struct {
	// Enabled collects attributes.usage for every user, group and role (three IAM calls
	// a principal at least: generate, one poll, the result).
	Enabled bool
	// ServiceLevel asks SERVICE_LEVEL data only; the default is ACTION_LEVEL, which AWS
	// answers per action for the services it tracks by action, per service otherwise.
	ServiceLevel bool
	// Refresh is how long a principal's data is reused by this collector before it is
	// asked again (0: DefaultUsageRefresh).
	Refresh time.Duration
	// JobTimeout bounds the wait for one job (0: DefaultUsageJobTimeout).
	JobTimeout time.Duration
	// PollInterval is the first wait between two polls of a job, doubled up to 5s
	// (0: 100ms).
	PollInterval time.Duration
	// Source is where usage is read: UsageSourceAccessAdvisor ("" too: IAM's
	// service-last-accessed data, three calls a principal or more) or
	// UsageSourceAccessAnalyzer (an unused-access analyzer's findings, a few calls an
	// account and one a principal with unused permissions; see usage_analyzer.go).
	Source string
	// AnalyzerRegion is the region of the unused-access analyzer (analyzers are
	// regional; "": the region of the AWS configuration, AWS_REGION or the profile's).
	AnalyzerRegion string
}

// usagePermissions are the actions of usage collection: Access Advisor's, and Access
// Analyzer's for the access_analyzer source.
func usagePermissions() []string {
	return append([]string{"iam:GenerateServiceLastAccessedDetails", "iam:GetServiceLastAccessedDetails"}, analyzerPermissions()...)
}

// usageCache keeps each principal's usage for UsageConfig.Refresh, so that a daemon's
// sweeps ask AWS no more often than the data changes, and an unchanged principal keeps
// the same attributes (its hash, and so its evaluation, unchanged).
type usageCache struct {
	mu sync.Mutex
	m  map[string]cachedUsage // principal ARN →

	// analyzers are the accounts' Access Analyzer answers (the access_analyzer source),
	// read whole under analyzerMu.
	analyzerMu sync.Mutex
	analyzers  map[string]*cachedAnalyzer // account ID →
}

type cachedUsage struct {
	fetched  time.Time
	usage    map[string]any
	versions map[string]string // managed policy ARN → the default version it was read with
}

// get is the cached usage under key, unless it is older than refresh or was read with
// another default version of a policy versions names (a caller that knows no versions
// passes nil and takes the copy as it is).
func (c *usageCache) get(key string, now time.Time, refresh time.Duration, versions map[string]string) (map[string]any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.m[key]
	if !ok || now.Sub(u.fetched) >= refresh {
		return nil, false
	}
	for arn, v := range versions {
		if had, ok := u.versions[arn]; ok && had != v {
			return nil, false
		}
	}
	return u.usage, true
}

func (c *usageCache) put(key string, now time.Time, usage map[string]any, versions map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedUsage{}
	}
	c.m[key] = cachedUsage{fetched: now, usage: usage, versions: versions}
}

// principalTypes are the resource types that get attributes.usage.
var principalTypes = map[string]bool{"aws.iam.user": true, "aws.iam.group": true, "aws.iam.role": true}

// addUsage sets attributes.usage on every user, group and role sc holds. A principal
// whose data could not be read gets complete: false with the reason; a complete one is
// cached for the refresh period.
func (a *account) addUsage(ctx context.Context, cl *iam.Client, sc *scope) {
	cfg := a.c.cfg.Usage
	if !cfg.Enabled {
		return
	}
	sc.mu.Lock()
	var principals []snapshot.Resource
	versions := map[string]string{}
	for _, r := range sc.resources {
		if principalTypes[r.Type] {
			principals = append(principals, r)
		}
		if r.Type == "aws.iam.policy" {
			versions[r.UID] = str(r.Attributes["default_version_id"])
		}
	}
	sc.mu.Unlock()
	if cfg.Source == UsageSourceAccessAnalyzer {
		// One read for the account, then a look-up per principal.
		u := a.analyzerRead(ctx, a.analyzerClient(sc))
		sc.mu.Lock()
		now := newGrantsNow(sc.resources)
		sc.mu.Unlock()
		for _, r := range principals {
			setUsage(sc, r, now.narrow(r, u.of(r)))
		}
		addPolicyUsage(sc)
		return
	}
	sem := make(chan struct{}, usageConcurrency)
	var wg sync.WaitGroup
	for _, r := range principals {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			setUsage(sc, r, a.usageOf(ctx, cl, r, versions))
		})
	}
	wg.Wait()
	addPolicyUsage(sc)
}

// usageOf is the usage of the principal r: this collector's copy while it is younger
// than the refresh period and the principal's grants are those it was read with, else
// Access Advisor's answer (kept when complete). A change of the principal's policies or
// groups, or a new default version of an attached managed policy (versions: policy ARN →
// default version id, as far as the caller knows), asks again at once: the services AWS lists are
// those the policies grant now, and a fix that narrowed them is verified against the new
// list, not the old one.
func (a *account) usageOf(ctx context.Context, cl *iam.Client, r snapshot.Resource, versions map[string]string) map[string]any {
	cfg := a.c.cfg.Usage
	if cfg.Source == UsageSourceAccessAnalyzer {
		return a.analyzerRead(ctx, a.analyzerClient(nil)).of(r)
	}
	refresh := cfg.Refresh
	if refresh <= 0 {
		refresh = DefaultUsageRefresh
	}
	key := r.UID + "|" + grantsKey(r.Attributes)
	known := attachedVersions(r.Attributes, versions)
	if u, ok := a.c.usage.get(key, time.Now(), refresh, known); ok {
		return u
	}
	u := readUsage(ctx, cl, r.UID, cfg)
	if u["complete"] == true {
		a.c.usage.put(key, time.Now(), u, known)
	}
	return u
}

// grantsKey fingerprints what decides a principal's grants: its attached and inline
// policies and, for a user, its groups. (The default versions of its managed policies
// are checked beside it: see attachedVersions. A group's policies are not its members':
// a change there waits for the refresh.)
func grantsKey(attrs map[string]any) string {
	b, err := json.Marshal([]any{attrs["attached_policies"], attrs["inline_policies"], attrs["groups"]})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// attachedVersions are the default versions versions knows of the managed policies
// attached to the principal: a new default version of one asks AWS again, as the
// services it lists are those the policies grant now.
func attachedVersions(attrs map[string]any, versions map[string]string) map[string]string {
	out := map[string]string{}
	l, _ := attrs["attached_policies"].([]any)
	for _, p := range l {
		m, _ := p.(map[string]any)
		if v := versions[str(m["arn"])]; v != "" {
			out[str(m["arn"])] = v
		}
	}
	return out
}

// setUsage sets r's usage under sc's lock: the resources share their attribute maps with
// sc's list.
func setUsage(sc *scope, r snapshot.Resource, u map[string]any) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if r.Attributes != nil {
		r.Attributes["usage"] = u
	}
}

// readUsage asks Access Advisor for one principal's data: generate the job, poll it until
// it completes (or the timeout), and read every page. The answer is always a usage
// attribute: complete, or not with the reason.
func readUsage(ctx context.Context, cl *iam.Client, arn string, cfg UsageConfig) map[string]any {
	granularity := iamtypes.AccessAdvisorUsageGranularityTypeActionLevel
	if cfg.ServiceLevel {
		granularity = iamtypes.AccessAdvisorUsageGranularityTypeServiceLevel
	}
	incomplete := func(op string, err error) map[string]any {
		return map[string]any{"source": "aws.access_advisor", "complete": false, "error": op + ": " + awsapi.Message(err)}
	}
	gen, err := cl.GenerateServiceLastAccessedDetails(ctx, &iam.GenerateServiceLastAccessedDetailsInput{Arn: aws.String(arn), Granularity: granularity})
	if err == nil && aws.ToString(gen.JobId) == "" {
		err = errors.New("the answer holds no JobId")
	}
	if err != nil {
		return incomplete("iam:GenerateServiceLastAccessedDetails", err)
	}
	timeout := cfg.JobTimeout
	if timeout <= 0 {
		timeout = DefaultUsageJobTimeout
	}
	wait := cfg.PollInterval
	if wait <= 0 {
		wait = 100 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	var services []any
	var out *iam.GetServiceLastAccessedDetailsOutput
	in := &iam.GetServiceLastAccessedDetailsInput{JobId: gen.JobId}
	for {
		out, err = cl.GetServiceLastAccessedDetails(ctx, in)
		if err != nil {
			return incomplete("iam:GetServiceLastAccessedDetails", err)
		}
		switch out.JobStatus {
		case iamtypes.JobStatusTypeCompleted:
		case iamtypes.JobStatusTypeFailed:
			msg := "the job failed"
			if out.Error != nil {
				msg += ": " + aws.ToString(out.Error.Code) + " " + aws.ToString(out.Error.Message)
			}
			return incomplete("iam:GetServiceLastAccessedDetails", errors.New(strings.TrimSpace(msg)))
		default: // IN_PROGRESS
			if in.Marker != nil {
				return incomplete("iam:GetServiceLastAccessedDetails", errors.New("the job went back to "+string(out.JobStatus)+" between two pages"))
			}
			if time.Now().Add(wait).After(deadline) {
				return incomplete("iam:GetServiceLastAccessedDetails", fmt.Errorf("the job did not complete within %s", timeout))
			}
			select {
			case <-ctx.Done():
				return incomplete("iam:GetServiceLastAccessedDetails", ctx.Err())
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
			continue
		}
		for _, s := range out.ServicesLastAccessed {
			services = append(services, serviceUsage(s))
		}
		if !out.IsTruncated || aws.ToString(out.Marker) == "" {
			break
		}
		in = &iam.GetServiceLastAccessedDetailsInput{JobId: gen.JobId, Marker: out.Marker}
	}
	asOf := time.Now().UTC()
	if out.JobCompletionDate != nil {
		asOf = out.JobCompletionDate.UTC()
	}
	level := "action"
	if out.JobType == iamtypes.AccessAdvisorUsageGranularityTypeServiceLevel {
		level = "service"
	}
	if services == nil {
		services = []any{}
	}
	return map[string]any{"source": "aws.access_advisor", "granularity": level, "as_of": asOf.Format(time.RFC3339),
		"tracked_since": asOf.Add(-trackingPeriod).Format(time.RFC3339), "complete": true, "error": "", "services": services}
}

// serviceUsage is one service of the answer, normalized: its actions only where AWS
// tracks them.
func serviceUsage(s iamtypes.ServiceLastAccessed) map[string]any {
	out := map[string]any{"service": strings.ToLower(aws.ToString(s.ServiceNamespace)), "name": aws.ToString(s.ServiceName),
		"last_used": optTime(s.LastAuthenticated), "region": optString(s.LastAuthenticatedRegion)}
	if s.TrackedActionsLastAccessed != nil {
		actions := make([]any, 0, len(s.TrackedActionsLastAccessed))
		for _, a := range s.TrackedActionsLastAccessed {
			name := aws.ToString(a.ActionName)
			if !strings.Contains(name, ":") {
				name = out["service"].(string) + ":" + name
			}
			actions = append(actions, map[string]any{"action": name, "last_used": optTime(a.LastAccessedTime),
				"region": optString(a.LastAccessedRegion)})
		}
		out["actions"] = actions
	}
	return out
}

func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func optString(s *string) any {
	if s == nil || *s == "" {
		return nil
	}
	return *s
}
