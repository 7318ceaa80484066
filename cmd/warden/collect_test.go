//go:build unix

package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
)

// The flags lay over the config's targets: without changing the config.
func TestTargetFlags_layOverTheConfig(t *testing.T) {
	base := func() *config.Config {
		return &config.Config{Targets: config.Targets{TLS: []string{"a.example.com"},
			AWS: &config.AWSTargets{Regions: []string{"eu-west-1"}, OrgRole: "Audit", Concurrency: 2},
			GCP: &config.GCPTargets{Projects: []string{"p1"}}}}
	}
	tests := []struct {
		name  string
		flags targetFlags
		cfg   *config.Config
		check func(t *testing.T, got collect.Targets)
	}{
		{"config alone", targetFlags{}, base(), func(t *testing.T, got collect.Targets) {
			if got.AWS == nil || got.AWS.OrgRole != "Audit" || got.AWS.Concurrency != 2 || !slices.Equal(got.GCP.Projects, []string{"p1"}) || !slices.Equal(got.TLS, []string{"a.example.com"}) {
				t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
			}
		}},
		{"flags add TLS and projects, replace regions and the role", targetFlags{tls: []string{"b.example.com"}, regions: []string{"us-east-1"}, awsOrgRole: "Other", gcpProjects: []string{"p2"}, gcpEndpoint: "http://127.0.0.1:1"}, base(),
			func(t *testing.T, got collect.Targets) {
				if !slices.Equal(got.TLS, []string{"a.example.com", "b.example.com"}) || !slices.Equal(got.AWS.Regions, []string{"us-east-1"}) || got.AWS.OrgRole != "Other" ||
					!slices.Equal(got.GCP.Projects, []string{"p1", "p2"}) || got.GCP.Endpoint != "http://127.0.0.1:1" {
					t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
				}
			}},
		{"--aws-org on an empty config", targetFlags{awsOrg: true}, &config.Config{}, func(t *testing.T, got collect.Targets) {
			if got.AWS == nil || !got.AWS.Org || got.GCP != nil || len(got.TLS) != 0 {
				t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
			}
		}},
		{"nothing anywhere", targetFlags{}, &config.Config{}, func(t *testing.T, got collect.Targets) {
			if !got.Empty() {
				t.Errorf("%+v", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprintf("%+v %+v %+v", tc.cfg.Targets.TLS, tc.cfg.Targets.AWS, tc.cfg.Targets.GCP)
			tc.check(t, tc.flags.targets(tc.cfg))
			if after := fmt.Sprintf("%+v %+v %+v", tc.cfg.Targets.TLS, tc.cfg.Targets.AWS, tc.cfg.Targets.GCP); after != before {
				t.Errorf("the config changed: %s → %s", before, after)
			}
		})
	}
}
