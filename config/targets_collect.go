package config

import (
	"slices"

	"github.com/warden-sec/warden/collect"
	awscollector "github.com/warden-sec/warden/collectors/aws"
)

// Collect is the targets: section as collection reads it: a copy, so that laying flags
// over it never changes the config.
func (c Targets) Collect() collect.Targets {
	t := collect.Targets{TLS: slices.Clone(c.TLS)}
	if a := c.AWS; a != nil {
		t.AWS = &collect.AWS{Org: a.Org, OrgRole: a.OrgRole, Regions: slices.Clone(a.Regions), Endpoint: a.Endpoint,
			RateLimits: a.RateLimits, Concurrency: a.Concurrency}
		if u := a.Usage; u != nil {
			t.AWS.Usage = awscollector.UsageConfig{Enabled: u.Enabled, ServiceLevel: u.Granularity == "service", Refresh: u.Refresh,
				Source: u.Source, AnalyzerRegion: u.AnalyzerRegion}
		}
	}
	if g := c.GCP; g != nil {
		t.GCP = &collect.GCP{Projects: slices.Clone(g.Projects), Endpoint: g.Endpoint, RateLimit: g.RateLimit,
			Recommendations: g.Recommendations, Activity: g.Activity}
	}
	return t
}
