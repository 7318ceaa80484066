package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/warden-sec/warden/collectors/tlsprobe"
)

// checkTargets checks the targets: section's values, each problem with its line: TLS
// endpoints as the probe parses them, region names, rates and concurrency that are not
// negative, and endpoints that are http(s) URLs without credentials in them (AWS and
// Google credentials come from their standard chains, never from the config). Projects
// are not required here: --gcp-project adds them to a gcp: section that only names the
// endpoint.
func (c *Config) checkTargets() []*Error {
	var errs []*Error
	add := func(key, field, msg string) {
		line := c.lines["@targets"+key]
		if line == 0 {
			line = c.lines["@targets"]
		}
		errs = append(errs, &Error{File: c.File, Line: line, Field: field, Msg: msg})
	}
	t := c.Targets
	for i, s := range t.TLS {
		if _, err := tlsprobe.ParseTarget(s); err != nil {
			key := fmt.Sprintf(".tls[%d]", i)
			add(key, "targets"+key, err.Error()+" (want host:port, or host:port@sni)")
		}
	}
	if a := t.AWS; a != nil {
		for i, r := range a.Regions {
			if !validRegion(r) {
				key := fmt.Sprintf(".aws.regions[%d]", i)
				add(key, "targets"+key, fmt.Sprintf("%q is not an AWS region (eu-west-1, us-east-1, …)", r))
			}
		}
		for _, svc := range slices.Sorted(maps.Keys(a.RateLimits)) {
			if a.RateLimits[svc] < 0 {
				key := ".aws.rate_limits." + svc
				add(key, "targets"+key, fmt.Sprintf("%v: want calls per second (0: no limit; leave the service out for the default)", a.RateLimits[svc]))
			}
		}
		if a.Concurrency < 0 {
			add(".aws.concurrency", "targets.aws.concurrency", fmt.Sprintf("%d: want a number of accounts read at once (0: the default, 4)", a.Concurrency))
		}
		if u := a.Usage; u != nil {
			if !slices.Contains([]string{"", "action", "service"}, u.Granularity) {
				add(".aws.usage.granularity", "targets.aws.usage.granularity", fmt.Sprintf("%q: want action (per action where AWS tracks them, the default) or service", u.Granularity))
			}
			if !slices.Contains([]string{"", "access_advisor", "access_analyzer"}, u.Source) {
				add(".aws.usage.source", "targets.aws.usage.source", fmt.Sprintf("%q: want access_advisor (IAM's last-accessed data, the default) or access_analyzer (an IAM Access Analyzer unused-access analyzer's findings)", u.Source))
			}
			if u.AnalyzerRegion != "" && u.Source != "access_analyzer" {
				add(".aws.usage.analyzer_region", "targets.aws.usage.analyzer_region", fmt.Sprintf("%q: only read with source: access_analyzer", u.AnalyzerRegion))
			}
			if u.Refresh < 0 {
				add(".aws.usage.refresh", "targets.aws.usage.refresh", fmt.Sprintf("%s: want a positive duration such as 4h (0: the default, 4h)", u.Refresh))
			}
		}
		if msg := checkEndpoint(a.Endpoint, "the AWS credential chain (environment, profile, role)"); msg != "" {
			add(".aws.endpoint", "targets.aws.endpoint", msg)
		}
	}
	if g := t.GCP; g != nil {
		if g.RateLimit < 0 {
			add(".gcp.rate_limit", "targets.gcp.rate_limit", fmt.Sprintf("%v: want calls per second (0: the default, 10)", g.RateLimit))
		}
		if msg := checkEndpoint(g.Endpoint, "Application Default Credentials"); msg != "" {
			add(".gcp.endpoint", "targets.gcp.endpoint", msg)
		}
	}
	return errs
}

// checkEndpoint says what is wrong with an endpoint override, or "". What it says
// never holds a password the URL may carry: creds names where credentials come from.
func checkEndpoint(s, creds string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // without the URL, which may hold a password
		}
		return fmt.Sprintf("not a URL (want an http:// or https:// URL): %v", err)
	}
	switch {
	case u.User != nil:
		return fmt.Sprintf("%q: no user or password in the URL: secrets are never written in the config (credentials come from %s)", u.Redacted(), creds)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q: want an http:// or https:// URL", u.Redacted())
	case u.Host == "":
		return fmt.Sprintf("%q: no host", u.Redacted())
	}
	return ""
}
