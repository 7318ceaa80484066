package collect

import (
	"context"
	"fmt"
	"strings"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
)

// Clouds are the live clients of one remediation run: the sessions remediators and
// verification share, and the collectors that read one resource again.
type Clouds struct {
	// Sessions are the AWS sessions, nil when the targets name no AWS.
	Sessions *awsapi.Sessions
	// GCP are the Google Cloud clients, nil when the targets name no GCP.
	GCP *gcpapi.Clients
	// Readers read one resource again by uid: AWS, then GCP, then TLS endpoints.
	Readers []collectors.Reader
	close   func()
}

// Open connects to the clouds the targets name, sharing one set of clients between the
// fixes and the readers that verify them. Nothing is called yet. Unlike Resolve, empty
// targets are no error: TLS endpoints are read again by probing them whether or not
// they were listed, so that a renewed certificate is verified on the endpoint that serves it.
func Open(ctx context.Context, t Targets) (*Clouds, error) {
	c := &Clouds{close: func() {}}
	if a := t.AWS; a != nil {
		s, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: a.Endpoint, AWS: t.AWSConfig, RateLimits: a.RateLimits, OrgRole: a.OrgRole})
		if err != nil {
			return nil, fmt.Errorf("connect to AWS: %w", err)
		}
		c.Sessions = s
		c.Readers = append(c.Readers, awscollector.New(awscollector.Config{Sessions: s, Regions: a.Regions, Org: a.Org,
			OrgRole: a.OrgRole, Endpoint: a.Endpoint, AWS: t.AWSConfig, RateLimits: a.RateLimits, Usage: a.Usage}))
	}
	if g := t.GCP; g != nil {
		cl, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: g.Endpoint, RateLimit: g.RateLimit})
		if err != nil {
			return nil, fmt.Errorf("connect to Google Cloud: %w", err)
		}
		c.GCP = cl
		gc := gcpcollector.New(gcpcollector.Config{Clients: cl, Projects: g.Projects, Endpoint: g.Endpoint, RateLimit: g.RateLimit,
			Recommendations: g.Recommendations, Activity: g.Activity})
		c.Readers = append(c.Readers, gc)
		c.close = func() { _ = gc.Close(); _ = cl.Close() }
	}
	tlsTargets, err := t.TLSTargets()
	if err != nil {
		return nil, err
	}
	c.Readers = append(c.Readers, &tlsprobe.Collector{Targets: tlsTargets, Timeout: t.TLSTimeout})
	return c, nil
}

// Reach returns t able to reach the resource uid: an AWS ARN needs AWS, a Google Cloud
// full name ("//iam.googleapis.com/projects/P/…") needs GCP, a TLS endpoint nothing
// (Open always probes). A cloud t already names is kept as it is (the config's targets:
// section, the flags); AWS it does not name is added with the standard credential chain
// and AWS_ENDPOINT_URL, as --aws would; GCP it does not name is an error saying which
// flags are missing, since without a project or an endpoint nothing says how to reach it.
// Commands that act on one recorded resource (a rollback) open its cloud so.
func (t Targets) Reach(uid string) (Targets, error) {
	switch {
	case strings.HasPrefix(uid, "arn:"):
		if t.AWS == nil {
			t.AWS = &AWS{}
		}
	case strings.HasPrefix(uid, "//") && strings.Contains(uid, ".googleapis.com/"):
		if t.GCP == nil {
			project := "P"
			if _, rest, ok := strings.Cut(uid, "/projects/"); ok {
				project, _, _ = strings.Cut(rest, "/")
			}
			return t, fmt.Errorf("%s is in Google Cloud, and no GCP target is given: add --gcp-project %s (Application Default Credentials) "+
				"or --gcp-endpoint URL (a simulator or private endpoint), or targets.gcp (projects, endpoint) in --config", uid, project)
		}
	}
	return t, nil
}

// Close closes the clients that hold connections.
func (c *Clouds) Close() { c.close() }

var (
	_ collectors.Reader = (*awscollector.Collector)(nil)
	_ collectors.Reader = (*gcpcollector.Collector)(nil)
)
