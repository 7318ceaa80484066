package gcp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// BenchmarkCollectProjects reads 16 projects of 100 service accounts (2 keys each) and
// 100 firewall rules, 20 ms per call, 20 calls/s per service per project, 4 projects at
// a time. IAM admin has no bulk read of keys: one ListServiceAccountKeys per account is
// the floor, and it sets the pace.
func BenchmarkCollectProjects(b *testing.B) {
	const projects, accounts, firewalls = 16, 100, 100
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &cloudsim.World{
		Latency:    cloudsim.Duration(20 * time.Millisecond),
		RateLimits: map[string]float64{"iamadmin": 20, "compute": 20, "cloudresourcemanager": 20},
		GCP:        cloudsim.GCP{Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "bench.example"}}},
	}
	for i := range projects {
		p := &cloudsim.Project{ID: fmt.Sprintf("bench-%02d", i), Number: fmt.Sprintf("9000000000%02d", i), Parent: "organizations/123456789012",
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{{Role: "roles/viewer", Members: []string{"group:eng@bench.example"}}}},
			Networks:  []*cloudsim.Network{{Name: "vpc"}}}
		for j := range accounts {
			p.ServiceAccounts = append(p.ServiceAccounts, &cloudsim.ServiceAccount{
				Email: fmt.Sprintf("sa-%03d@%s.iam.gserviceaccount.com", j, p.ID),
				Keys: []*cloudsim.SAKey{{ID: fmt.Sprintf("k%03da", j), ValidAfter: t0, ValidBefore: t0.AddDate(10, 0, 0)},
					{ID: fmt.Sprintf("k%03db", j), ValidAfter: t0, ValidBefore: t0.AddDate(10, 0, 0)}},
			})
		}
		for j := range firewalls {
			p.Firewalls = append(p.Firewalls, &cloudsim.Firewall{Name: fmt.Sprintf("fw-%03d", j), Network: "vpc",
				SourceRanges: []string{"10.0.0.0/8"}, Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"443"}}}})
		}
		w.GCP.Projects = append(w.GCP.Projects, p)
	}
	sim, url := simtest.Start(b, w, cloudsim.Options{})
	ids := make([]string, projects)
	for i, p := range w.GCP.Projects {
		ids[i] = p.ID
	}
	for b.Loop() {
		sim.ResetCalls()
		c := gcp.New(gcp.Config{Projects: ids, Endpoint: url, RateLimit: 20})
		var sink collectors.MemorySink
		start := time.Now()
		if err := c.Collect(context.Background(), &sink); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		for _, s := range sink.Scopes {
			if s.Status != "ok" {
				b.Fatalf("scope %s: %s (%s)", s.ID, s.Status, s.Error)
			}
		}
		calls := 0
		for _, v := range sim.Calls() {
			calls += v.Calls
		}
		b.ReportMetric(float64(len(sink.Resources)), "resources")
		b.ReportMetric(float64(calls)/float64(len(sink.Resources)), "calls/resource")
		b.ReportMetric(elapsed.Seconds(), "s/collection")
		b.Logf("calls %d (iam admin %d), %d resources, %v", calls, sim.CallsTo("iamadmin"), len(sink.Resources), elapsed)
	}
}
