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
