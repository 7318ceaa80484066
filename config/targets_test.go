package config_test

import (
	"testing"
	"time"

	"github.com/warden-sec/warden/config"
)

// targets.aws.usage reaches the AWS collector: off when absent, on with its granularity
// and refresh when enabled.
func TestTargets_usage(t *testing.T) {
	for _, tt := range []struct {
		name, yaml   string
		enabled, svc bool
		refresh      time.Duration
	}{
		{"absent", "targets:\n  aws: {}\n", false, false, 0},
		{"enabled", "targets:\n  aws:\n    usage: {enabled: true}\n", true, false, 0},
		{"service level, refreshed daily", "targets:\n  aws:\n    usage: {enabled: true, granularity: service, refresh: 24h}\n", true, true, 24 * time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte(tt.yaml), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			u := c.Targets.Collect().AWS.Usage
			if u.Enabled != tt.enabled || u.ServiceLevel != tt.svc || u.Refresh != tt.refresh {
				t.Errorf("usage = %+v, want enabled %v, service level %v, refresh %v", u, tt.enabled, tt.svc, tt.refresh)
			}
		})
	}
}

// targets.aws.usage.source and analyzer_region reach the AWS collector.
func TestTargets_usageSource(t *testing.T) {
	c, err := config.Parse([]byte("targets:\n  aws:\n    usage: {enabled: true, source: access_analyzer, analyzer_region: eu-west-1}\n"), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if u := c.Targets.Collect().AWS.Usage; u.Source != "access_analyzer" || u.AnalyzerRegion != "eu-west-1" {
		t.Errorf("usage = %+v, want source access_analyzer in eu-west-1", u)
	}
}
