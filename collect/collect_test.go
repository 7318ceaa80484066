package collect_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/snapshot"
)

const world = "testdata/world.yaml"

func names(cs []collectors.Collector) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		targets collect.Targets
		want    []string
		wantErr string
	}{
		{"nothing named", collect.Targets{}, nil, collect.ErrNoTargets.Error()},
		{"only a timeout is not a target", collect.Targets{TLSTimeout: time.Second}, nil, collect.ErrNoTargets.Error()},
		{"every cloud, in pipeline order", collect.Targets{TLS: []string{"shop.example.com"}, GCP: &collect.GCP{Projects: []string{"p"}}, AWS: &collect.AWS{}},
			[]string{"aws", "gcp", "tls"}, ""},
		{"an empty AWS target is the current account", collect.Targets{AWS: &collect.AWS{}}, []string{"aws"}, ""},
		{"a TLS port out of range", collect.Targets{TLS: []string{"ok.example.com:443", "bad.example.com:99999"}}, nil, `TLS target "bad.example.com:99999": port`},
		{"GCP without a project", collect.Targets{GCP: &collect.GCP{Endpoint: "http://127.0.0.1:1"}}, nil, "GCP needs at least one project"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := collect.Resolve(tc.targets, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("collectors %v, error %v; want an error containing %q", names(cs), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(cs); !slices.Equal(got, tc.want) {
				t.Errorf("collectors %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := collect.Resolve(collect.Targets{}, nil); !errors.Is(err, collect.ErrNoTargets) {
		t.Errorf("empty targets: %v, want ErrNoTargets", err)
	}
}

func startSim(t *testing.T, file string) *collect.Simulator {
	t.Helper()
	sim, err := collect.StartSimulator(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim
}

// With no cloud named, the demo reads every account and project of its world, with what
// each principal used and the IAM recommendations; a cloud named is read alone, at the
// simulator.
func TestSimulator_Target(t *testing.T) {
	sim := startSim(t, world)
	all := sim.Target(collect.Targets{TLS: []string{"shop.example.com"}})
	if all.AWS == nil || all.AWS.Endpoint != sim.URL || all.AWS.Org || all.AWSConfig == nil {
		t.Errorf("AWS target %+v (SDK config %v): want the simulator's endpoint and credentials", all.AWS, all.AWSConfig)
	}
	if all.GCP == nil || all.GCP.Endpoint != sim.URL || !slices.Equal(all.GCP.Projects, []string{"small-project-1"}) {
		t.Errorf("GCP target %+v: want the world's project at the simulator", all.GCP)
	}
	if !all.AWS.Usage.Enabled || !all.GCP.Recommendations || all.AWS.RateLimits["iam"] != 0 || len(all.AWS.RateLimits) != 1 {
		t.Errorf("AWS target %+v, GCP %+v: want usage and recommendations read, IAM unpaced", all.AWS, all.GCP)
	}
	if !slices.Equal(all.TLS, []string{"shop.example.com"}) {
		t.Errorf("TLS targets %v changed", all.TLS)
	}
	named := &collect.AWS{Regions: []string{"us-east-1"}}
	only := sim.Target(collect.Targets{AWS: named})
	if only.GCP != nil || only.AWS.Endpoint != sim.URL || named.Endpoint != "" {
		t.Errorf("AWS alone: %+v, GCP %+v, the caller's target %+v: want AWS only, the caller's target unchanged", only.AWS, only.GCP, named)
	}
	if only.AWS.Usage.Enabled || named.RateLimits != nil {
		t.Errorf("AWS alone: usage %+v, the caller's rate limits %v: want what was named, the caller's target unchanged", only.AWS.Usage, named.RateLimits)
	}
	if _, err := collect.StartSimulator(filepath.Join(t.TempDir(), "nope.yaml"), nil); err == nil || !strings.Contains(err.Error(), "read world") {
		t.Errorf("missing world: %v", err)
	}
}

// Run reads both clouds through the real SDK clients into one snapshot the reader
// accepts: accounts in the header first, collected_at from the clock, every scope, and
// a summary that counts what was read.
func TestRun_collectsTheWorldIntoOneSnapshot(t *testing.T) {
	sim := startSim(t, world)
	cs, err := collect.Resolve(sim.Target(collect.Targets{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var progressed atomic.Int64
	var done []collect.Summary
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum, err := collect.Run(ctx, &buf, cs, collect.Options{
		Source: "collect test", Now: func() time.Time { return at },
		Progress: func(n int, scopes func() string) {
			progressed.Add(1)
			if !strings.Contains(scopes(), "scopes read") {
				t.Errorf("progress detail %q", scopes())
			}
		},
		Done: func(s collect.Summary) { done = append(done, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	h, rs, err := snapshot.ReadAll(&buf, "collected")
	if err != nil {
		t.Fatalf("the collected snapshot does not read back: %v", err)
	}
	if !h.CollectedAt.Equal(at) || h.Source != "collect test" || !slices.Contains(h.Accounts, "111111111111") || !slices.Contains(h.Accounts, "small-project-1") {
		t.Errorf("header %+v", h)
	}
	types := map[string]int{}
	for _, r := range rs {
		types[r.Type]++
	}
	for _, typ := range []string{"aws.iam.root_user", "aws.ec2.security_group", "gcp.project.iam_policy"} {
		if types[typ] == 0 {
			t.Errorf("no %s collected (%v)", typ, types)
		}
	}
	if sum.Resources != len(rs) || sum.Scopes != len(h.Scopes) || sum.Calls == 0 || sum.Incomplete != 0 || !sum.CollectedAt.Equal(at) {
		t.Errorf("summary %+v for %d resources in %d scopes", sum, len(rs), len(h.Scopes))
	}
	if int(progressed.Load()) != len(rs) || len(done) != 1 || done[0] != sum {
		t.Errorf("progress called %d times for %d resources; done %+v", progressed.Load(), len(rs), done)
	}
}

// A scope the cloud refuses is a failed scope in the snapshot and counted as such, not
// an error of the run.
func TestRun_countsADeniedScope(t *testing.T) {
	b, err := os.ReadFile(world)
	if err != nil {
		t.Fatal(err)
	}
	denied := filepath.Join(t.TempDir(), "denied.yaml")
	faults := "faults:\n  - service: ec2\n    action: DescribeSecurityGroups\n    access_denied: true\n"
	if err := os.WriteFile(denied, append(b, faults...), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, denied)
	cs, err := collect.Resolve(sim.Target(collect.Targets{GCP: nil, AWS: &collect.AWS{}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sum, err := collect.Run(context.Background(), &buf, cs, collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := snapshot.ReadAll(&buf, "collected")
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, s := range h.Scopes {
		if !s.Complete() {
			failed = append(failed, s.ID)
		}
	}
	if !slices.Equal(failed, []string{"aws/111111111111/ec2/us-east-1"}) || sum.Incomplete != 1 || sum.Denied == 0 {
		t.Errorf("failed scopes %v, summary %+v: want the EC2 scope failed and counted", failed, sum)
	}
	if line := sum.String(); !strings.Contains(line, "; 1 scope incomplete (their resources are unknown)") {
		t.Errorf("summary line %q", line)
	}
}

// With the endpoint gone once the accounts are known, every scope is recorded as failed
// (its resources unknown, never read as deleted), within seconds and naming the
// endpoint: nothing listening is reported, not retried for half a minute per scope.
func TestRun_endpointDownFailsEachScopeFast(t *testing.T) {
	sim := startSim(t, world)
	cs, err := collect.Resolve(sim.Target(collect.Targets{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if d, ok := c.(collectors.Discoverer); ok {
			if _, err := d.Discover(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	sim.Close()
	var buf bytes.Buffer
	begin := time.Now()
	sum, err := collect.Run(context.Background(), &buf, cs, collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("the collection took %v with nothing listening", d)
	}
	h, rs, err := snapshot.ReadAll(&buf, "collected")
	if err != nil {
		t.Fatal(err)
	}
	providers := map[string]bool{}
	for _, s := range h.Scopes {
		providers[s.Provider] = true
		if s.Complete() || !strings.Contains(s.Error, "connection refused") || !strings.Contains(s.Error, strings.TrimPrefix(sim.URL, "http://")) {
			t.Errorf("scope %s: %s %q, want failed: connection refused at %s", s.ID, s.Status, s.Error, sim.URL)
		}
	}
	if !providers["aws"] || !providers["gcp"] || len(rs) != 0 || sum.Incomplete != len(h.Scopes) {
		t.Errorf("%d resources, scopes of %v, summary %+v: want every AWS and GCP scope failed", len(rs), providers, sum)
	}
}

// A collector that cannot go on stops the run with an error naming it; Done is not
// called and what was written is no snapshot.
func TestRun_stopsOnACollectorError(t *testing.T) {
	cs, err := collect.Resolve(collect.Targets{GCP: &collect.GCP{Projects: []string{"p"}, Endpoint: "notaurl"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err = collect.Run(context.Background(), &buf, cs, collect.Options{Done: func(collect.Summary) { t.Error("Done called on a failed run") }})
	if err == nil || !strings.HasPrefix(err.Error(), "collect gcp: ") {
		t.Fatalf("error %v, want one naming the gcp collector", err)
	}
	if _, _, err := snapshot.ReadAll(&buf, "partial"); err == nil {
		t.Error("a failed run wrote a complete snapshot")
	}
}

func TestSummary_String(t *testing.T) {
	tests := []struct {
		sum  collect.Summary
		want string
	}{
		{collect.Summary{Resources: 10, Scopes: 2, Calls: 5, Elapsed: 1500 * time.Millisecond},
			"collected 10 resources in 2 scopes with 5 API calls (0.50 per resource) in 1.5s; 0 throttled, 0 denied"},
		{collect.Summary{Scopes: 3, Calls: 4, Throttled: 1, Denied: 2, Incomplete: 2, Elapsed: time.Second},
			"collected 0 resources in 3 scopes with 4 API calls in 1s; 1 throttled, 2 denied; 2 scopes incomplete (their resources are unknown)"},
	}
	for _, tc := range tests {
		if got := tc.sum.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// usageWorld is one user whose use of S3 the world records on 2026-11-29.
const usageWorld = `aws:
  caller: "111111111111"
  accounts:
    - id: "111111111111"
      regions: [us-east-1]
      users:
        - name: ci
          created: 2025-01-01T00:00:00Z
          inline_policies:
            - name: read
              document: {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
          last_accessed:
            - {service: s3, action: "s3:GetObject", at: 2026-11-29T10:00:00Z, region: eu-west-1}
`

// The simulator's clock starts where StartSimulatorAt says: IAM's last-accessed data is as
// of that clock, and a use the world records later has not happened yet.
func TestStartSimulatorAt_clock(t *testing.T) {
	file := filepath.Join(t.TempDir(), "world.yaml")
	if err := os.WriteFile(file, []byte(usageWorld), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at       time.Time
		lastUsed any
	}{
		{time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), "2026-11-29T10:00:00Z"},
		{time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), nil},
	} {
		sim, err := collect.StartSimulatorAt(file, tc.at, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Close() })
		targets := sim.Target(collect.Targets{})
		if !targets.AWS.Usage.Enabled {
			t.Fatal("the simulator's default targets do not read usage")
		}
		cs, err := collect.Resolve(targets, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := collect.Run(context.Background(), &buf, cs, collect.Options{}); err != nil {
			t.Fatal(err)
		}
		_, rs, err := snapshot.ReadAll(&buf, "collected")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rs, func(r snapshot.Resource) bool { return r.Type == "aws.iam.user" })
		if i < 0 {
			t.Fatal("no user collected")
		}
		u, _ := rs[i].Attributes["usage"].(map[string]any)
		asOf, err := time.Parse(time.RFC3339, fmt.Sprint(u["as_of"]))
		if err != nil || asOf.Before(tc.at) || asOf.After(tc.at.Add(time.Minute)) {
			t.Errorf("at %s: usage as of %v (%v), want the simulator's clock", tc.at, u["as_of"], err)
		}
		services, _ := u["services"].([]any)
		if len(services) != 1 {
			t.Fatalf("at %s: services %v, want s3 alone", tc.at, u["services"])
		}
		if got := services[0].(map[string]any)["last_used"]; got != tc.lastUsed {
			t.Errorf("at %s: s3 last used %v, want %v", tc.at, got, tc.lastUsed)
		}
	}
}
