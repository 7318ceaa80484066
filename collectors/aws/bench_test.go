package aws_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// The large account: 10,000 roles, 5,000 users, 2,000 security groups in 4
// regions, 20 ms per call, 20 calls/s per service on both sides.
var large = cloudsim.LargeAccount{ID: "444455556666", Roles: 10000, Users: 5000, SecurityGroups: 2000}

const limit = 20.0

// collectLarge collects the large account once and returns the resources as JSON by uid,
// the elapsed time and the simulator's counters.
func collectLarge(b *testing.B, faults []cloudsim.Fault) (map[string]string, time.Duration, *cloudsim.Sim) {
	b.Helper()
	w := &cloudsim.World{
		AWS:        cloudsim.AWS{Accounts: []*cloudsim.Account{large.Build()}},
		Latency:    cloudsim.Duration(20 * time.Millisecond),
		RateLimits: map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit},
		Faults:     faults,
		Seed:       42,
	}
	sim, url := simtest.Start(b, w, cloudsim.Options{})
	c := awscollector.New(awscollector.Config{
		Endpoint:    url,
		AWS:         &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCH", "secret", "")},
		RateLimits:  map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit},
		MaxAttempts: 30,
	})
	ctx := context.Background()
	if _, err := c.Discover(ctx); err != nil {
		b.Fatal(err)
	}
	sim.ResetCalls()
	var sink collectors.MemorySink
	start := time.Now()
	if err := c.Collect(ctx, &sink); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	out := map[string]string{}
	for _, r := range sink.Resources {
		if _, dup := out[r.UID]; dup {
			b.Fatalf("resource %s collected twice", r.UID)
		}
		j, _ := json.Marshal(r)
		out[r.UID] = string(j)
	}
	for _, s := range sink.Scopes {
		if s.Status != "ok" {
			b.Fatalf("scope %s: %s (%s)", s.ID, s.Status, s.Error)
		}
	}
	return out, elapsed, sim
}

// minimum is the least time the rate limits allow for the calls made: the busiest
// service's calls over its limit.
func minimum(sim *cloudsim.Sim) (time.Duration, map[string]int) {
	per := map[string]int{}
	for k, v := range sim.Calls() {
		per[k[:strings.IndexByte(k, ':')]] += v.Calls
	}
	busiest := 0
	for _, n := range per {
		busiest = max(busiest, n)
	}
	return time.Duration(float64(busiest) / limit * float64(time.Second)), per
}

func iamResources(rs map[string]string) int {
	n := 0
	for uid := range rs {
		if strings.HasPrefix(uid, "arn:aws:iam:") {
			n++
		}
	}
	return n
}

func BenchmarkCollectLargeAccount(b *testing.B) {
	for b.Loop() {
		rs, elapsed, sim := collectLarge(b, nil)
		least, per := minimum(sim)
		b.ReportMetric(float64(len(rs)), "resources")
		b.ReportMetric(float64(per["iam"])/float64(iamResources(rs)), "iam-calls/resource")
		b.ReportMetric(elapsed.Seconds()/least.Seconds(), "x-minimum")
		b.ReportMetric(elapsed.Seconds(), "s/collection")
		b.Logf("calls %v, minimum %v, elapsed %v", per, least, elapsed)
	}
}

// BenchmarkCollectLargeAccountFaults injects 10% throttling and 2% 5xx: the snapshot must
// be the same as without faults, nothing missing, nothing doubled.
func BenchmarkCollectLargeAccountFaults(b *testing.B) {
	clean, _, _ := collectLarge(b, nil)
	for b.Loop() {
		rs, elapsed, sim := collectLarge(b, []cloudsim.Fault{{ThrottleRate: 0.10}, {ErrorRate: 0.02}})
		if len(rs) != len(clean) {
			b.Fatalf("%d resources with faults, %d without", len(rs), len(clean))
		}
		for uid, j := range clean {
			if rs[uid] != j {
				b.Fatalf("%s differs with faults:\n%s\n%s", uid, j, rs[uid])
			}
		}
		throttled, failed := 0, 0
		for _, v := range sim.Calls() {
			throttled += v.Throttled
			failed += v.Failed
		}
		b.ReportMetric(float64(throttled), "throttled")
		b.ReportMetric(float64(failed), "5xx")
		b.ReportMetric(elapsed.Seconds(), "s/collection")
	}
}

// BenchmarkCollectOrganization walks an organisation of 8 accounts (1,000 roles, 500
// users, 200 security groups each), 4 at a time: the limits are per account, so the
// walk should take about two accounts' time, not eight.
func BenchmarkCollectOrganization(b *testing.B) {
	const n = 8
	w := &cloudsim.World{
		Latency:    cloudsim.Duration(20 * time.Millisecond),
		RateLimits: map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit, "organizations": limit},
	}
	for i := range n {
		id := fmt.Sprintf("5000000000%02d", i)
		a := cloudsim.LargeAccount{ID: id, Roles: 1000, Users: 500, SecurityGroups: 200}.Build()
		a.Roles = append(a.Roles, &cloudsim.Role{Name: "OrganizationAccountAccessRole", AssumeRolePolicy: cloudsim.Doc(
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::500000000000:root"},"Action":"sts:AssumeRole"}]}`)})
		w.AWS.Accounts = append(w.AWS.Accounts, a)
	}
	w.AWS.Organization = &cloudsim.Organization{ID: "o-benchmark1", Management: "500000000000"}
	sim, url := simtest.Start(b, w, cloudsim.Options{})
	for b.Loop() {
		c := awscollector.New(awscollector.Config{
			Org: true, Endpoint: url,
			AWS:        &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCH", "secret", "")},
			RateLimits: map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit, "organizations": limit},
		})
		sim.ResetCalls()
		var sink collectors.MemorySink
		start := time.Now()
		if _, err := c.Discover(context.Background()); err != nil {
			b.Fatal(err)
		}
		if err := c.Collect(context.Background(), &sink); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		for _, s := range sink.Scopes {
			if s.Status != "ok" {
				b.Fatalf("scope %s: %s (%s)", s.ID, s.Status, s.Error)
			}
		}
		b.ReportMetric(float64(len(sink.Resources)), "resources")
		b.ReportMetric(float64(sim.CallsTo("iam"))/n, "iam-calls/account")
		b.ReportMetric(elapsed.Seconds(), "s/collection")
	}
}

// BenchmarkCollectUsage reads Access Advisor for every principal of a 50-account
// organisation (30 principals an account: 20 roles, 10 users), 20 ms per call, 20 IAM
// calls/s per account, 10 accounts at a time: the calls a principal takes, and the time
// against the floor the rate limits set (the busiest account's IAM calls over the limit,
// once per round of accounts).
func BenchmarkCollectUsage(b *testing.B) {
	const n, concurrency = 50, 10
	w := &cloudsim.World{
		Latency:    cloudsim.Duration(20 * time.Millisecond),
		RateLimits: map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit, "organizations": limit},
	}
	for i := range n {
		id := fmt.Sprintf("6000000000%02d", i)
		a := cloudsim.LargeAccount{ID: id, Roles: 20, Users: 10, Regions: []string{"us-east-1"}}.Build()
		a.Roles = append(a.Roles, &cloudsim.Role{Name: "OrganizationAccountAccessRole", AssumeRolePolicy: cloudsim.Doc(
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::600000000000:root"},"Action":"sts:AssumeRole"}]}`)})
		w.AWS.Accounts = append(w.AWS.Accounts, a)
	}
	w.AWS.Organization = &cloudsim.Organization{ID: "o-usagebench", Management: "600000000000"}
	sim, url := simtest.Start(b, w, cloudsim.Options{})
	for b.Loop() {
		c := awscollector.New(awscollector.Config{
			Org: true, Endpoint: url, Regions: []string{"us-east-1"}, Concurrency: concurrency,
			AWS:        &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDBENCH", "secret", "")},
			RateLimits: map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit, "organizations": limit},
			Usage:      awscollector.UsageConfig{Enabled: true},
		})
		if _, err := c.Discover(context.Background()); err != nil {
			b.Fatal(err)
		}
		sim.ResetCalls()
		var sink collectors.MemorySink
		start := time.Now()
		if err := c.Collect(context.Background(), &sink); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		principals, incomplete := 0, 0
		for _, r := range sink.Resources {
			if u, ok := r.Attributes["usage"].(map[string]any); ok {
				principals++
				if u["complete"] != true {
					incomplete++
				}
			}
		}
		if incomplete > 0 {
			b.Fatalf("%d of %d principals' usage incomplete", incomplete, principals)
		}
		calls := sim.Calls()
		usageCalls := calls["iam:GenerateServiceLastAccessedDetails"].Calls + calls["iam:GetServiceLastAccessedDetails"].Calls
		iamPerAccount := float64(sim.CallsTo("iam")) / n
		rounds := (n + concurrency - 1) / concurrency
		floor := time.Duration(iamPerAccount / limit * float64(rounds) * float64(time.Second))
		b.ReportMetric(float64(principals), "principals")
		b.ReportMetric(float64(usageCalls)/float64(principals), "usage-calls/principal")
		b.ReportMetric(iamPerAccount, "iam-calls/account")
		b.ReportMetric(elapsed.Seconds(), "s/collection")
		b.ReportMetric(floor.Seconds(), "s-floor")
		b.ReportMetric(elapsed.Seconds()/floor.Seconds(), "x-floor")
	}
}
