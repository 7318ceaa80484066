package aws_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

// usageWorld is one account whose role deploy is granted s3, kms and lambda and used s3
// two days ago, lambda 300 days ago and kms never; its user ci is granted ec2 only.
func usageWorld(now time.Time) *cloudsim.World {
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"eu-west-1"},
		Roles: []*cloudsim.Role{{Name: "deploy", Created: now.AddDate(-2, 0, 0), AssumeRolePolicy: trustAccount("111111111111"),
			InlinePolicies: []cloudsim.InlinePolicy{{Name: "app", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*","kms:Decrypt","lambda:*"],"Resource":"*"}]}`}},
			LastAccessed: []cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:ListBucket", At: now.AddDate(0, 0, -2), Region: "eu-west-1"},
				{Service: "lambda", At: now.AddDate(0, 0, -300), Region: "eu-west-1"},
			}}},
		Users: []*cloudsim.User{{Name: "ci", Created: now.AddDate(-1, 0, 0),
			InlinePolicies: []cloudsim.InlinePolicy{{Name: "ec2", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}`}}}},
	}}}}
}

// usageServices is a usage attribute's services by namespace.
func usageServices(t *testing.T, r snapshot.Resource) (map[string]any, map[string]map[string]any) {
	t.Helper()
	u, _ := r.Attributes["usage"].(map[string]any)
	if u == nil {
		t.Fatalf("%s has no usage: %v", r.UID, r.Attributes)
	}
	by := map[string]map[string]any{}
	for _, s := range u["services"].([]any) {
		m := s.(map[string]any)
		by[m["service"].(string)] = m
	}
	return u, by
}

// TestCollect_usage: with usage on, every user, group and role carries what Access
// Advisor says it used of its grants, in the snapshot's shape; a second collection
// within the refresh period asks AWS nothing more; a job that cannot be read leaves the
// usage incomplete, never absent or empty.
func TestCollect_usage(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	sim, url := simtest.Start(t, usageWorld(now), cloudsim.Options{})
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, Regions: []string{"eu-west-1"},
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		Usage:      awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func() map[string]snapshot.Resource {
		t.Helper()
		var sink collectors.MemorySink
		if err := c.Collect(ctx, &sink); err != nil {
			t.Fatal(err)
		}
		out := map[string]snapshot.Resource{}
		for _, r := range sink.Resources {
			if err := snapshot.Validate(r); err != nil {
				t.Errorf("not a valid resource: %v", err)
			}
			out[r.UID] = r
		}
		return out
	}
	got := run()
	u, svc := usageServices(t, got["arn:aws:iam::111111111111:role/deploy"])
	if u["complete"] != true || u["granularity"] != "action" || u["source"] != "aws.access_advisor" {
		t.Errorf("usage header: %v", u)
	}
	asOf, err := time.Parse(time.RFC3339, u["as_of"].(string))
	if err != nil || asOf.Before(now.Add(-time.Minute)) {
		t.Errorf("as_of %v: %v", u["as_of"], err)
	}
	if since, _ := time.Parse(time.RFC3339, u["tracked_since"].(string)); !since.Equal(asOf.Add(-400 * 24 * time.Hour)) {
		t.Errorf("tracked_since %v, want 400 days before %v", u["tracked_since"], asOf)
	}
	if len(svc) != 3 || svc["kms"]["last_used"] != nil || svc["lambda"]["last_used"] != now.AddDate(0, 0, -300).Format(time.RFC3339) ||
		svc["s3"]["last_used"] != now.AddDate(0, 0, -2).Format(time.RFC3339) {
		t.Errorf("services: %v", svc)
	}
	var listBucket bool
	for _, a := range svc["s3"]["actions"].([]any) {
		m := a.(map[string]any)
		if !strings.HasPrefix(m["action"].(string), "s3:") {
			t.Errorf("action %v is not namespaced", m["action"])
		}
		listBucket = listBucket || m["action"] == "s3:ListBucket" && m["last_used"] != nil
	}
	if !listBucket {
		t.Errorf("s3:ListBucket not shown used: %v", svc["s3"]["actions"])
	}
	if _, svc := usageServices(t, got["arn:aws:iam::111111111111:user/ci"]); len(svc) != 1 || svc["ec2"] == nil {
		t.Errorf("ci's services: %v", svc)
	}
	calls := sim.Calls()["iam:GenerateServiceLastAccessedDetails"].Calls
	if calls != 2 {
		t.Errorf("%d jobs generated for 2 principals", calls)
	}
	gets := sim.Calls()["iam:GetServiceLastAccessedDetails"].Calls
	if gets > 2*3 {
		t.Errorf("%d result reads for 2 principals: want at most 3 calls a principal in all", gets)
	}

	// Within the refresh period: the same usage, and no call.
	again := run()
	if sim.Calls()["iam:GenerateServiceLastAccessedDetails"].Calls != calls {
		t.Error("a second collection within the refresh period asked Access Advisor again")
	}
	if u2, _ := usageServices(t, again["arn:aws:iam::111111111111:role/deploy"]); u2["as_of"] != u["as_of"] {
		t.Errorf("cached usage changed: %v → %v", u["as_of"], u2["as_of"])
	}
}

// A job AWS refuses leaves every principal's usage incomplete with the reason: the
// policies take that as used.
func TestCollect_usageRefused(t *testing.T) {
	now := time.Now().UTC()
	sim, url := simtest.Start(t, usageWorld(now), cloudsim.Options{})
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "iam", Action: "GenerateServiceLastAccessedDetails", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, Regions: []string{"eu-west-1"}, MaxAttempts: 1,
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		Usage:      awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond}})
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	for _, r := range sink.Resources {
		if r.Type != "aws.iam.role" && r.Type != "aws.iam.user" {
			continue
		}
		u, _ := r.Attributes["usage"].(map[string]any)
		if u == nil || u["complete"] != false || !strings.Contains(u["error"].(string), "iam:GenerateServiceLastAccessedDetails") || u["services"] != nil {
			t.Errorf("%s: usage %v, want incomplete with the reason", r.UID, u)
		}
	}
}
