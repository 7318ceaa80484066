package config_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
)

func TestParse(t *testing.T) {
	c, err := config.Parse([]byte(`
settings:
  access_key_max_age_days: 60
  known_accounts: ["444455556666"]
  nested: {a: {b: 1}}
policies: [./ours]
waivers: waivers.yaml
fail_on: critical
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings["access_key_max_age_days"] != 60 || c.FailOn != "critical" || c.Waivers != "waivers.yaml" || len(c.Policies) != 1 {
		t.Errorf("config = %+v", c)
	}
	if _, ok := c.Settings["nested"].(map[string]any)["a"].(map[string]any); !ok {
		t.Errorf("nested settings are not JSON-shaped: %#v", c.Settings["nested"])
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown field", "setings: {}\n", "read config c.yaml: line 1: field setings not found"},
		{"wrong type", "policies: 3\n", "line 1:"},
		{"bad yaml", "settings: [\n", "read config c.yaml"},
	}
	for _, tt := range tests {
		_, err := config.Parse([]byte(tt.in), "c.yaml")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("settings:\n  a: 1\n"))
	f.Add([]byte("settings: {1: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		config.Parse(data, "fuzz.yaml")
	})
}

func TestParseTargets(t *testing.T) {
	c, err := config.Parse([]byte(`
targets:
  aws:
    org: true
    org_role: WardenAudit
    regions: [eu-west-1]
    endpoint: http://127.0.0.1:4566
    rate_limits: {iam: 5}
    concurrency: 2
  gcp:
    projects: [acme-prod]
    endpoint: http://127.0.0.1:4566
  tls: [shop.example.com:443]
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, g := c.Targets.AWS, c.Targets.GCP
	if a == nil || !a.Org || a.OrgRole != "WardenAudit" || a.Regions[0] != "eu-west-1" || a.RateLimits["iam"] != 5 || a.Concurrency != 2 {
		t.Errorf("aws targets = %+v", a)
	}
	if g == nil || g.Projects[0] != "acme-prod" || g.Endpoint == "" || len(c.Targets.TLS) != 1 {
		t.Errorf("gcp targets = %+v", g)
	}
	if _, err := config.Parse([]byte("targets:\n  aws:\n    regoins: [x]\n"), "w.yaml"); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a misspelt target key: %v", err)
	}
}
