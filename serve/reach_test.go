package serve_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/serve"
)

func TestReach_namesTheMissingFlag(t *testing.T) {
	aws := collect.Targets{AWS: &collect.AWS{}}
	for _, tc := range []struct {
		targets collect.Targets
		uid     string
		want    string
	}{
		{collect.Targets{}, "arn:aws:ec2:us-east-1:111111111111:security-group/sg-1", "start warden serve with --aws"},
		{aws, "arn:aws:ec2:us-east-1:111111111111:security-group/sg-1", ""},
		{aws, "//iam.googleapis.com/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com", "--gcp-project P, or set targets.gcp"},
		{aws, "tls://example.com:443", "--tls HOST:PORT, or set targets.tls"},
		{collect.Targets{TLS: []string{"example.com:443"}}, "tls://example.com:443", ""},
	} {
		got := serve.Reach(tc.targets)(tc.uid)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Reach(%+v)(%s) = %q, want %q in it", tc.targets, tc.uid, got, tc.want)
		}
	}
}
