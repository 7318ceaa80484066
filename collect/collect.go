// Package collect is warden's collection use case: it resolves the live targets a run
// names (flags and the config's targets: section, merged by the caller into Targets)
// into collectors, and runs them into one streamed snapshot.
package collect

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/collectors/tlsprobe"
)

// ErrNoTargets is returned by Resolve when the targets name nothing to collect; each
// command says in its own words which flags would.
var ErrNoTargets = errors.New("no live targets")

// Targets name what one run collects. The command fills it from its flags and the
// config's targets: section, which has the same keys.
type Targets struct {
	// TLS endpoints as host:port (port 443 when omitted), optionally host:port@sni.
	TLS []string
	// TLSTimeout bounds each TLS connection attempt; 0 means the probe's default.
	TLSTimeout time.Duration
	// AWS, when set (even empty), collects the account of the current credentials, or
	// with Org the whole organisation.
	AWS *AWS
	// GCP, when set, collects its projects; it needs at least one.
	GCP *GCP
	// AWSConfig is the AWS SDK configuration to start from (credentials, region); nil
	// loads the standard chain (environment, profile, SSO, instance role).
	AWSConfig *aws.Config
}

// AWS says which AWS accounts and regions to read, and how fast.
type AWS struct {
	// Org walks every active account of the organisation, assuming OrgRole in each
	// (default OrganizationAccountAccessRole).
	Org     bool
	OrgRole string
	// Regions to read (default every enabled region).
	Regions []string
	// Endpoint overrides AWS_ENDPOINT_URL (a simulator, a VPC endpoint proxy).
	Endpoint string
	// RateLimits are calls per second per service and account ("iam": 10); a service
	// not named gets the collector's default.
	RateLimits map[string]float64
	// Concurrency is the number of accounts read in parallel (default 4).
	Concurrency int
	// Usage collects what each user, group and role used of its grants (Access
	// Advisor), as attributes.usage; off unless Enabled.
	Usage awscollector.UsageConfig
}

// GCP says which GCP projects to read, and how fast.
type GCP struct {
	Projects []string
	// Endpoint overrides Google's endpoints (the simulator); credentials are then not sent.
	Endpoint string
	// RateLimit is calls per second per service and project (default 10).
	RateLimit float64
	// Recommendations adds the IAM recommender's active recommendations to each project's
	// IAM policy (gcpcollector.Config.Recommendations).
	Recommendations bool
	// Activity adds the Policy Analyzer's last authentications to each service account and
	// key (gcpcollector.Config.Activity).
	Activity bool
}

// Empty says whether the targets name nothing to collect.
func (t Targets) Empty() bool { return len(t.TLS) == 0 && t.AWS == nil && t.GCP == nil }

// TLSTargets parses the TLS endpoints; the error names the first that is not one.
func (t Targets) TLSTargets() ([]tlsprobe.Target, error) {
	var out []tlsprobe.Target
	for _, s := range t.TLS {
		tt, err := tlsprobe.ParseTarget(s)
		if err != nil {
			return nil, err
		}
		out = append(out, tt)
	}
	return out, nil
}

// Resolve builds the collectors for the targets: AWS first, then GCP, then TLS. It
// returns ErrNoTargets when the targets are empty, and an error naming the target when
// one is malformed (a TLS endpoint that does not parse, GCP without a project). It makes
// no network call: credentials and endpoints are first used by Collect.
func Resolve(t Targets, log *slog.Logger) ([]collectors.Collector, error) {
	if t.Empty() {
		return nil, ErrNoTargets
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tlsTargets, err := t.TLSTargets()
	if err != nil {
		return nil, err
	}
	var cs []collectors.Collector
	if a := t.AWS; a != nil {
		cs = append(cs, awscollector.New(awscollector.Config{
			Regions: a.Regions, Org: a.Org, OrgRole: a.OrgRole, Concurrency: a.Concurrency,
			RateLimits: a.RateLimits, Endpoint: a.Endpoint, AWS: t.AWSConfig, Logger: log, Usage: a.Usage,
		}))
	}
	if g := t.GCP; g != nil {
		if len(g.Projects) == 0 {
			return nil, fmt.Errorf("GCP needs at least one project: --gcp-project P, or targets.gcp.projects in the config")
		}
		cs = append(cs, gcpcollector.New(gcpcollector.Config{Projects: g.Projects, Endpoint: g.Endpoint, RateLimit: g.RateLimit,
			Recommendations: g.Recommendations, Activity: g.Activity, Logger: log}))
	}
	if len(tlsTargets) > 0 {
		cs = append(cs, &tlsprobe.Collector{Targets: tlsTargets, Timeout: t.TLSTimeout})
	}
	return cs, nil
}
