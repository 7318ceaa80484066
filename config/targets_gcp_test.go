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
