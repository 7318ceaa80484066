package aws_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

const sharedPolicyARN = "arn:aws:iam::111111111111:policy/shared"

// sharedPolicyWorld: the customer-managed policy shared (s3, kms, sqs) is attached to
// the role deploy, which used s3 two days ago, and to the user ci, which used s3 200
// days ago and sqs ten days ago; kms was never used. deploy also has an inline policy
// granting lambda, which the aggregate leaves out (the policy does not grant it).
func sharedPolicyWorld(now time.Time) *cloudsim.World {
	doc := cloudsim.Doc(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","kms:*","sqs:SendMessage"],"Resource":"*"}]}`)
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"eu-west-1"},
		Policies: []*cloudsim.Policy{{Name: "shared", Created: now.AddDate(-2, 0, 0), Document: doc}},
		Roles: []*cloudsim.Role{{Name: "deploy", Created: now.AddDate(-2, 0, 0), AssumeRolePolicy: trustAccount("111111111111"),
			AttachedPolicies: []string{sharedPolicyARN},
			InlinePolicies:   []cloudsim.InlinePolicy{{Name: "fn", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"lambda:*","Resource":"*"}]}`}},
			LastAccessed: []cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:GetObject", At: now.AddDate(0, 0, -2), Region: "eu-west-1"},
			}}},
		Users: []*cloudsim.User{{Name: "ci", Created: now.AddDate(-1, 0, 0), AttachedPolicies: []string{sharedPolicyARN},
			LastAccessed: []cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:GetObject", At: now.AddDate(0, 0, -200), Region: "eu-west-1"},
				{Service: "sqs", At: now.AddDate(0, 0, -10), Region: "eu-west-1"},
			}}},
	}}}}
}

// TestCollect_policyUsage: a customer-managed policy carries the usage of the principals
// it is attached to, merged (the latest use of each service), restricted to what it
// grants, naming them; read alone it is the same; a new default version asks Access
// Advisor again for its principals.
func TestCollect_policyUsage(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	sim, url := simtest.Start(t, sharedPolicyWorld(now), cloudsim.Options{})
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, Regions: []string{"eu-west-1"},
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		Usage:      awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	var policy snapshot.Resource
	for _, r := range sink.Resources {
		if r.UID == sharedPolicyARN {
			policy = r
		}
	}
	check := func(what string, r snapshot.Resource) {
		t.Helper()
		u, svc := usageServices(t, r)
		if u["complete"] != true || u["aggregated"] != true || u["error"] != "" {
			t.Fatalf("%s: usage header: %v", what, u)
		}
		if len(svc) != 3 || svc["lambda"] != nil {
			t.Errorf("%s: services %v: want s3, kms and sqs (the policy's), not lambda", what, svc)
		}
		if svc["s3"]["last_used"] != now.AddDate(0, 0, -2).Format(time.RFC3339) || svc["sqs"]["last_used"] != now.AddDate(0, 0, -10).Format(time.RFC3339) ||
			svc["kms"]["last_used"] != nil {
			t.Errorf("%s: merged last uses: s3 %v, sqs %v, kms %v", what, svc["s3"]["last_used"], svc["sqs"]["last_used"], svc["kms"]["last_used"])
		}
		if ps, _ := u["principals"].([]any); len(ps) != 2 {
			t.Errorf("%s: principals %v", what, u["principals"])
		}
	}
	check("collected", policy)
	alone, err := c.Read(ctx, sharedPolicyARN)
	if err != nil {
		t.Fatal(err)
	}
	check("read alone", alone)

	// A new default version: the principals' data is asked for again.
	jobs := sim.Calls()["iam:GenerateServiceLastAccessedDetails"].Calls
	cl := iam.NewFromConfig(sdk)
	if _, err := cl.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String(sharedPolicyARN), SetAsDefault: true,
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","sqs:SendMessage"],"Resource":"*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	narrowed, err := c.Read(ctx, sharedPolicyARN)
	if err != nil {
		t.Fatal(err)
	}
	if got := sim.Calls()["iam:GenerateServiceLastAccessedDetails"].Calls - jobs; got != 2 {
		t.Errorf("%d jobs after a new default version, want 2 (one per principal)", got)
	}
	if _, svc := usageServices(t, narrowed); len(svc) != 2 || svc["kms"] != nil {
		t.Errorf("after narrowing: %v", svc)
	}
}

// TestCollect_policyUsageIncomplete: a principal whose data cannot be read leaves the
// policy's usage incomplete, naming it.
func TestCollect_policyUsageIncomplete(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	sim, url := simtest.Start(t, sharedPolicyWorld(now), cloudsim.Options{})
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "iam", Action: "GenerateServiceLastAccessedDetails", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, Regions: []string{"eu-west-1"},
		RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		Usage:      awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond}})
	r, err := c.Read(context.Background(), sharedPolicyARN)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := r.Attributes["usage"].(map[string]any)
	if u["complete"] != false || u["error"] == "" {
		t.Errorf("usage %v: want incomplete with the reason", u)
	}
}

// TestAggregatePolicyUsage_sameEveryTime: a policy attached to a group, a role and a user
// lists them in one order whatever order the attachments are walked in (they come from a
// map), so that the policy reads, and hashes, the same at every sweep. Go changes a map's
// order from one walk to the next: 32 walks of three kinds all agree only if the order is
// the code's own.
func TestAggregatePolicyUsage_sameEveryTime(t *testing.T) {
	usage := map[string]any{"source": "aws.access_advisor", "granularity": "service", "as_of": "2026-12-01T00:00:00Z",
		"tracked_since": "2025-10-27T00:00:00Z", "complete": true, "error": "",
		"services": []any{map[string]any{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"}}}
	principal := func(typ, name string) snapshot.Resource {
		kind := map[string]string{"aws.iam.group": "group", "aws.iam.role": "role", "aws.iam.user": "user"}[typ]
		return snapshot.Resource{UID: "arn:aws:iam::111111111111:" + kind + "/" + name, Type: typ, Name: name, Account: "111111111111",
			Scope: "aws/111111111111/iam", Attributes: map[string]any{"created": "2024-01-01T00:00:00Z", "usage": usage}}
	}
	build := func() []snapshot.Resource {
		policy := snapshot.Resource{UID: sharedPolicyARN, Type: "aws.iam.policy", Name: "shared", Account: "111111111111",
			Scope: "aws/111111111111/iam", Attributes: map[string]any{"managed": "customer", "attachment_count": 3.0,
				"document":    map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}}},
				"attached_to": map[string]any{"groups": []any{"readers"}, "roles": []any{"deploy"}, "users": []any{"ci"}}}}
		return []snapshot.Resource{policy, principal("aws.iam.group", "readers"), principal("aws.iam.role", "deploy"), principal("aws.iam.user", "ci")}
	}
	var first []any
	for i := range 32 {
		rs := build()
		awscollector.AggregatePolicyUsage(rs)
		u, _ := rs[0].Attributes["usage"].(map[string]any)
		who, _ := u["principals"].([]any)
		if len(who) != 3 {
			t.Fatalf("walk %d: principals %v, want the three attached", i, who)
		}
		if i == 0 {
			first = who
			continue
		}
		for j := range who {
			if who[j].(map[string]any)["arn"] != first[j].(map[string]any)["arn"] {
				t.Fatalf("walk %d lists the principals %v, walk 0 %v", i, who, first)
			}
		}
	}
}
