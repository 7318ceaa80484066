package config_test

import (
	"testing"

	"github.com/warden-sec/warden/config"
)

// TestTargets_gcpRecommendations: targets.gcp.recommendations reaches collection, off
// unless set.
func TestTargets_gcpRecommendations(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want bool
	}{
		{"targets:\n  gcp:\n    projects: [acme-prod]\n    recommendations: true\n", true},
		{"targets:\n  gcp:\n    projects: [acme-prod]\n", false},
	} {
		c, err := config.Parse([]byte(tc.yaml), "warden.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if g := c.Targets.Collect().GCP; g == nil || g.Recommendations != tc.want {
			t.Errorf("%q: collect.GCP = %+v, want Recommendations %v", tc.yaml, g, tc.want)
		}
	}
	if _, err := config.Parse([]byte("targets:\n  gcp:\n    recommendations: maybe\n"), "warden.yaml"); err == nil {
		t.Error("recommendations: maybe was accepted")
	}
}

// TestTargets_gcpActivity: targets.gcp.activity reaches collection, off unless set, and
// apart from recommendations.
func TestTargets_gcpActivity(t *testing.T) {
	for _, tc := range []struct {
		yaml           string
		activity, recs bool
	}{
		{"targets:\n  gcp:\n    projects: [acme-prod]\n    activity: true\n", true, false},
		{"targets:\n  gcp:\n    projects: [acme-prod]\n    activity: false\n    recommendations: true\n", false, true},
		{"targets:\n  gcp:\n    projects: [acme-prod]\n", false, false},
	} {
		c, err := config.Parse([]byte(tc.yaml), "warden.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if g := c.Targets.Collect().GCP; g == nil || g.Activity != tc.activity || g.Recommendations != tc.recs {
			t.Errorf("%q: collect.GCP = %+v, want Activity %v, Recommendations %v", tc.yaml, g, tc.activity, tc.recs)
		}
	}
	if _, err := config.Parse([]byte("targets:\n  gcp:\n    activity: sometimes\n"), "warden.yaml"); err == nil {
		t.Error("activity: sometimes was accepted")
	}
}
