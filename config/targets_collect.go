package config

import (
	"slices"

	"github.com/warden-sec/warden/collect"
)

// Collect is the targets: section as collection reads it: a copy, so that laying flags
// over it never changes the config.
func (c Targets) Collect() collect.Targets {
	t := collect.Targets{TLS: slices.Clone(c.TLS)}
	if a := c.AWS; a != nil {
		t.AWS = &collect.AWS{Org: a.Org, OrgRole: a.OrgRole, Regions: slices.Clone(a.Regions), Endpoint: a.Endpoint,
			RateLimits: a.RateLimits, Concurrency: a.Concurrency}
	}
	if g := c.GCP; g != nil {
		t.GCP = &collect.GCP{Projects: slices.Clone(g.Projects), Endpoint: g.Endpoint, RateLimit: g.RateLimit}
	}
	return t
}
