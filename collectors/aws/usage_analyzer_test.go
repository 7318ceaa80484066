package aws_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/internal/usage/usagetest"
	"github.com/warden-sec/warden/snapshot"
)

// analyzerWorld is one account of n roles and n users, each granted s3, kms and lambda:
// every one used s3:GetObject two days ago, the odd ones lambda 300 days ago, none kms;
// and a group. An unused-access analyzer of 90 days is in us-east-1 unless analyzer is
// nil.
func analyzerWorld(now time.Time, n int, analyzer *cloudsim.AccessAnalyzer) *cloudsim.World {
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject","kms:Decrypt","lambda:*"],"Resource":"*"}]}`
	a := &cloudsim.Account{ID: "111111111111", Regions: []string{"eu-west-1"}, AccessAnalyzer: analyzer,
		Groups: []*cloudsim.Group{{Name: "devs", InlinePolicies: []cloudsim.InlinePolicy{{Name: "app", Document: cloudsim.Doc(doc)}}}}}
	records := func(i int) []cloudsim.AccessRecord {
		r := []cloudsim.AccessRecord{{Service: "s3", Action: "s3:GetObject", At: now.AddDate(0, 0, -2), Region: "eu-west-1"}}
		if i%2 == 1 {
			r = append(r, cloudsim.AccessRecord{Service: "lambda", At: now.AddDate(0, 0, -300), Region: "eu-west-1"})
		}
		return r
	}
	for i := range n {
		a.Roles = append(a.Roles, &cloudsim.Role{Name: fmt.Sprintf("role%02d", i), Created: now.AddDate(-2, 0, 0), AssumeRolePolicy: trustAccount("111111111111"),
			InlinePolicies: []cloudsim.InlinePolicy{{Name: "app", Document: cloudsim.Doc(doc)}}, LastAccessed: records(i)})
		a.Users = append(a.Users, &cloudsim.User{Name: fmt.Sprintf("user%02d", i), Created: now.AddDate(-2, 0, 0),
			InlinePolicies: []cloudsim.InlinePolicy{{Name: "app", Document: cloudsim.Doc(doc)}}, LastAccessed: records(i)})
	}
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{a}}}
}

func analyzerCollector(url string, source string) *awscollector.Collector {
	sdk := simtest.AWSConfig(url)
	return awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, Regions: []string{"eu-west-1"}, MaxAttempts: 1,
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0, "access-analyzer": 0},
		Usage:      awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond, Source: source}})
}

func collectPrincipals(t *testing.T, c *awscollector.Collector) map[string]snapshot.Resource {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	out := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		if err := snapshot.Validate(r); err != nil {
			t.Errorf("not a valid resource: %v", err)
		}
		if r.Type == "aws.iam.role" || r.Type == "aws.iam.user" || r.Type == "aws.iam.group" {
			out[r.UID] = r
		}
	}
	return out
}

// TestCollect_usageAnalyzer: with source access_analyzer, every role and user carries
// what the account's unused-access analyzer found unused (listed: unused, its age as
// window_days), in a few calls for the account where Access Advisor takes three a
// principal; groups, which the analyzer does not analyze, are incomplete.
func TestCollect_usageAnalyzer(t *testing.T) {
	const n = 25 // 25 roles and 25 users: 50 principals
	now := time.Now().UTC().Truncate(time.Second)
	sim, url := simtest.Start(t, analyzerWorld(now, n, &cloudsim.AccessAnalyzer{UnusedAccessAge: 90, Region: "us-east-1"}), cloudsim.Options{})
	got := collectPrincipals(t, analyzerCollector(url, awscollector.UsageSourceAccessAnalyzer))
	if len(got) != 2*n+1 {
		t.Fatalf("%d principals, want %d", len(got), 2*n+1)
	}
	for uid, r := range got {
		u, _ := r.Attributes["usage"].(map[string]any)
		if r.Type == "aws.iam.group" {
			if u == nil || u["complete"] != false || !strings.Contains(u["error"].(string), "does not analyze groups") {
				t.Errorf("group %s: usage %v, want incomplete with the reason", uid, u)
			}
			continue
		}
		u, svc := usageServices(t, r)
		if u["source"] != "aws.access_analyzer" || u["listed"] != "unused" || u["window_days"] != 90 || u["complete"] != true || u["error"] != "" {
			t.Errorf("%s: usage header %v", uid, u)
		}
		asOf, err := time.Parse(time.RFC3339, u["as_of"].(string))
		since, err2 := time.Parse(time.RFC3339, u["tracked_since"].(string))
		if err != nil || err2 != nil || asOf.Before(now.Add(-time.Minute)) || !since.Equal(asOf.AddDate(0, 0, -90)) {
			t.Errorf("%s: as_of %v tracked_since %v", uid, u["as_of"], u["tracked_since"])
		}
		// kms never used, lambda 300 days ago or never; s3 used, s3:PutObject not.
		if len(svc) != 3 || svc["kms"]["last_used"] != nil || svc["lambda"] == nil || svc["s3"] == nil {
			t.Fatalf("%s: services %v", uid, svc)
		}
		acts, _ := svc["s3"]["actions"].([]any)
		if len(acts) != 1 || acts[0].(map[string]any)["action"] != "s3:PutObject" {
			t.Errorf("%s: s3's unused actions %v, want s3:PutObject", uid, acts)
		}
		g, err := usage.Unused(u, 90*24*time.Hour)
		if err != nil || !g.Services["kms"] || !g.Services["lambda"] || g.Services["s3"] || !g.Actions["s3:putobject"] || g.AllGranted {
			t.Errorf("%s: judged %+v %v", uid, g, err)
		}
	}
	aa := sim.CallsTo("access-analyzer")
	t.Logf("access analyzer: %d calls for %d principals (%.2f a principal): %v", aa, 2*n, float64(aa)/float64(2*n), sim.Calls())
	if aa > 2*n+3 {
		t.Errorf("%d Access Analyzer calls for %d principals", aa, 2*n)
	}
	if iam := sim.Calls()["iam:GenerateServiceLastAccessedDetails"].Calls; iam != 0 {
		t.Errorf("Access Advisor asked %d times with source access_analyzer", iam)
	}

	// Access Advisor on the same world, for the comparison.
	sim2, url2 := simtest.Start(t, analyzerWorld(now, n, nil), cloudsim.Options{})
	collectPrincipals(t, analyzerCollector(url2, awscollector.UsageSourceAccessAdvisor))
	calls := sim2.Calls()
	advisor := calls["iam:GenerateServiceLastAccessedDetails"].Calls + calls["iam:GetServiceLastAccessedDetails"].Calls
	t.Logf("access advisor: %d calls for %d principals and a group (%.2f a principal)", advisor, 2*n, float64(advisor)/float64(2*n+1))
	if aa >= advisor {
		t.Errorf("Access Analyzer took %d calls, Access Advisor %d", aa, advisor)
	}
}

// Without an active unused-access analyzer every principal's usage is incomplete with
// the reason: absence of findings proves nothing.
func TestCollect_usageAnalyzerAbsent(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	for name, an := range map[string]*cloudsim.AccessAnalyzer{
		"none":             nil,
		"another region":   {Region: "eu-west-1"},
		"not active":       {Region: "us-east-1", Status: "DISABLED"},
		"findings refused": {Region: "us-east-1"},
		"details refused":  {Region: "us-east-1"},
	} {
		t.Run(name, func(t *testing.T) {
			sim, url := simtest.Start(t, analyzerWorld(now, 2, an), cloudsim.Options{})
			want := "no active unused-access analyzer"
			if strings.HasPrefix(name, "findings refused") {
				if err := sim.SetFaults([]cloudsim.Fault{{Service: "access-analyzer", Action: "ListFindingsV2", AccessDenied: true}}, nil); err != nil {
					t.Fatal(err)
				}
				want = "access-analyzer:ListFindingsV2: AccessDeniedException"
			}
			if name == "details refused" {
				if err := sim.SetFaults([]cloudsim.Fault{{Service: "access-analyzer", Action: "GetFindingV2", AccessDenied: true}}, nil); err != nil {
					t.Fatal(err)
				}
				want = "access-analyzer:GetFindingV2"
			}
			for uid, r := range collectPrincipals(t, analyzerCollector(url, awscollector.UsageSourceAccessAnalyzer)) {
				u, _ := r.Attributes["usage"].(map[string]any)
				if r.Type == "aws.iam.group" {
					continue
				}
				if u == nil || u["complete"] != false || !strings.Contains(fmt.Sprint(u["error"]), want) || u["services"] != nil {
					t.Errorf("%s: usage %v, want incomplete: %s", uid, u, want)
				}
				if g, err := usage.Unused(u, 90*24*time.Hour); err == nil || !g.Empty() {
					t.Errorf("%s: judged %+v from incomplete data", uid, g)
				}
			}
			// One read of the account, however many principals and whatever failed.
			if n := sim.Calls()["access-analyzer:ListAnalyzers"].Calls; n > 2 {
				t.Errorf("ListAnalyzers called %d times for one account", n)
			}
		})
	}
}

// A customer-managed policy's usage needs what each principal used: from a principal
// whose usage comes from IAM Access Analyzer it is incomplete, with the reason.
func TestAnalyzerUsage_policyAggregateIncomplete(t *testing.T) {
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	role := snapshot.Resource{UID: "arn:aws:iam::111111111111:role/deploy", Type: "aws.iam.role", Name: "deploy",
		Attributes: map[string]any{"created": "2024-01-01T00:00:00Z", "usage": usagetest.Analyzer(asOf, 90, "kms=")}}
	policy := snapshot.Resource{UID: "arn:aws:iam::111111111111:policy/shared", Type: "aws.iam.policy", Name: "shared",
		Attributes: map[string]any{"aws_managed": false, "attachment_count": 1, "attached_to": map[string]any{"roles": []any{"deploy"}},
			"document": map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}}}}}
	awscollector.AggregatePolicyUsage([]snapshot.Resource{role, policy})
	u, _ := policy.Attributes["usage"].(map[string]any)
	if u == nil || u["complete"] != false || !strings.Contains(fmt.Sprint(u["error"]), "comes from IAM Access Analyzer") {
		t.Errorf("policy usage %v, want incomplete: the role's usage comes from the analyzer", u)
	}
	role.Attributes["usage"] = usagetest.Attr(asOf, "kms=")
	awscollector.AggregatePolicyUsage([]snapshot.Resource{role, policy})
	if u := policy.Attributes["usage"].(map[string]any); u["complete"] != true {
		t.Errorf("policy usage from Access Advisor %v, want complete", u)
	}
}
