package collect_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/warden-sec/warden/collect"
)

// The command line lays over the config's targets without changing them.
func TestTargets_With(t *testing.T) {
	base := func() collect.Targets {
		return collect.Targets{TLS: []string{"a.example.com"},
			AWS: &collect.AWS{Regions: []string{"eu-west-1"}, OrgRole: "Audit", Concurrency: 2},
			GCP: &collect.GCP{Projects: []string{"p1"}}}
	}
	tests := []struct {
		name  string
		o     collect.Overrides
		base  collect.Targets
		check func(t *testing.T, got collect.Targets)
	}{
		{"config alone", collect.Overrides{}, base(), func(t *testing.T, got collect.Targets) {
			if got.AWS == nil || got.AWS.OrgRole != "Audit" || got.AWS.Concurrency != 2 || !slices.Equal(got.GCP.Projects, []string{"p1"}) || !slices.Equal(got.TLS, []string{"a.example.com"}) {
				t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
			}
		}},
		{"flags add TLS and projects, replace regions and the role", collect.Overrides{TLS: []string{"b.example.com"}, Regions: []string{"us-east-1"}, AWSOrgRole: "Other", GCPProjects: []string{"p2"}, GCPEndpoint: "http://127.0.0.1:1"}, base(),
			func(t *testing.T, got collect.Targets) {
				if !slices.Equal(got.TLS, []string{"a.example.com", "b.example.com"}) || !slices.Equal(got.AWS.Regions, []string{"us-east-1"}) || got.AWS.OrgRole != "Other" ||
					!slices.Equal(got.GCP.Projects, []string{"p1", "p2"}) || got.GCP.Endpoint != "http://127.0.0.1:1" {
					t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
				}
			}},
		{"--aws-org on an empty config", collect.Overrides{AWSOrg: true}, collect.Targets{}, func(t *testing.T, got collect.Targets) {
			if got.AWS == nil || !got.AWS.Org || got.GCP != nil || len(got.TLS) != 0 {
				t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
			}
		}},
		{"nothing anywhere", collect.Overrides{}, collect.Targets{}, func(t *testing.T, got collect.Targets) {
			if !got.Empty() {
				t.Errorf("%+v", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprintf("%+v %+v %+v", tc.base.TLS, tc.base.AWS, tc.base.GCP)
			tc.check(t, tc.base.With(tc.o))
			if after := fmt.Sprintf("%+v %+v %+v", tc.base.TLS, tc.base.AWS, tc.base.GCP); after != before {
				t.Errorf("the base targets changed: %s → %s", before, after)
			}
		})
	}
}
