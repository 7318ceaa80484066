package config_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
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

func TestParse_refusesFailOnThatIsNotASeverity(t *testing.T) {
	_, err := config.Parse([]byte("settings: {}\nwaivers: w.yaml\nfail_on: severe\n"), "warden.yaml")
	want := `read config warden.yaml: line 3: fail_on: unknown severity "severe" (want critical, high, medium, low or info)`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v\nwant it to start with %q", err, want)
	}
	if _, err := config.Parse([]byte("fail_on: hihg\n"), "warden.yaml"); err == nil || !strings.Contains(err.Error(), `(did you mean "high"?)`) {
		t.Errorf("a misspelt severity: %v", err)
	}
}

func TestParse_refusesASecondDocument(t *testing.T) {
	_, err := config.Parse([]byte("fail_on: high\n---\nsettings:\n  access_key_max_age_days: 9999\n"), "warden.yaml")
	if err == nil || !strings.Contains(err.Error(), "read config warden.yaml: line 2: a second YAML document") {
		t.Errorf("error = %v, want the second document refused at its --- (line 2)", err)
	}
}

// The engine judges settings against what the policies declare; the config says where
// each one is written.
func TestSettingError_namesTheLineOfTheSetting(t *testing.T) {
	c, err := config.Parse([]byte(`fail_on: high
settings:
  known_accounts: ["444455556666"]
  access_key_max_age_days: "ninety"
  database_ports:
    - 5432
    - mysql
  acces_key_unused_days: 30
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Settings: c.Settings})
	var se *engine.SettingsError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want an *engine.SettingsError", err)
	}
	var got []string
	for _, e := range se.Errors {
		got = append(got, c.SettingError(e.Name, e.Path, e.Msg).Error())
	}
	want := []string{
		`read config warden.yaml: line 8: settings.acces_key_unused_days: unknown setting (did you mean "access_key_unused_days"?)`,
		`read config warden.yaml: line 4: settings.access_key_max_age_days: is a string ("ninety"), want an integer like its default 90`,
		`read config warden.yaml: line 5: settings.database_ports[1]: is a string ("mysql"), want an integer like its default`,
	}
	if len(got) != len(want) {
		t.Fatalf("errors =\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d = %s\nwant it to start with %s", i, got[i], want[i])
		}
	}
}
