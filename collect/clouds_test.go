package collect_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors/tlsprobe"
)

func TestOpen_readsEndpointsAgainEvenWithoutTargets(t *testing.T) {
	c, err := collect.Open(context.Background(), collect.Targets{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Sessions != nil || c.GCP != nil {
		t.Errorf("no cloud named, but clients were made: %+v", c)
	}
	if len(c.Readers) != 1 {
		t.Fatalf("%d readers, want the TLS prober alone", len(c.Readers))
	}
	if _, ok := c.Readers[0].(*tlsprobe.Collector); !ok {
		t.Errorf("reader %T, want the TLS prober", c.Readers[0])
	}
}

func TestOpen_namesAMalformedEndpoint(t *testing.T) {
	if _, err := collect.Open(context.Background(), collect.Targets{TLS: []string{"host:notaport"}}); err == nil {
		t.Fatal("a malformed TLS endpoint was accepted")
	}
}

// TestTargets_Reach: a resource's uid says its cloud. AWS not named is opened with the
// standard chain; a cloud named is kept as configured; GCP not named is an error naming
// the flags that would name it; a TLS endpoint needs nothing.
func TestTargets_Reach(t *testing.T) {
	configured := collect.Targets{AWS: &collect.AWS{Endpoint: "http://127.0.0.1:4566", Regions: []string{"eu-west-1"}},
		GCP: &collect.GCP{Endpoint: "http://127.0.0.1:4566"}}
	for _, tc := range []struct {
		name    string
		targets collect.Targets
		uid     string
		aws     *collect.AWS // nil: no AWS target
		gcp     bool
		err     []string
	}{
		{"AWS, none named", collect.Targets{}, "arn:aws:iam::111111111111:account-password-policy", &collect.AWS{}, false, nil},
		{"AWS, configured", configured, "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", configured.AWS, true, nil},
		{"GCP, configured", configured, "//iam.googleapis.com/projects/acme-prod/serviceAccounts/a@acme-prod.iam.gserviceaccount.com", configured.AWS, true, nil},
		{"GCP, none named", collect.Targets{}, "//compute.googleapis.com/projects/acme-prod/global/firewalls/ssh", nil, false,
			[]string{"Google Cloud", "--gcp-project acme-prod", "--gcp-endpoint", "targets.gcp"}},
		{"TLS", collect.Targets{}, "tls://shop.example.com:443", nil, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.targets.Reach(tc.uid)
			if len(tc.err) > 0 {
				for _, want := range tc.err {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("Reach(%s) = %v, want an error saying %q", tc.uid, err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.AWS == nil) != (tc.aws == nil) || got.AWS != nil && !reflect.DeepEqual(*got.AWS, *tc.aws) || (got.GCP != nil) != tc.gcp {
				t.Errorf("Reach(%s) = AWS %+v, GCP %+v; want AWS %+v, GCP %v", tc.uid, got.AWS, got.GCP, tc.aws, tc.gcp)
			}
		})
	}
	if configured.AWS.Endpoint != "http://127.0.0.1:4566" || len(configured.TLS) != 0 {
		t.Errorf("Reach changed its receiver: %+v", configured)
	}
}
