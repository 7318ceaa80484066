package policies_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// documentCases are IAM policy documents and the document policies each makes fire (the
// policies of the pack that read the documents of all four places: see documentPolicies).
// Every document policy fires on one of them at least, so that a new one is tried too.
var documentCases = []struct {
	name string
	doc  string
	want []string
}{
	{"every action", `{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}}`, []string{"WARDEN-AWS-IAM-001"}},
	{"every action with MFA", `{"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}}`, []string{"WARDEN-AWS-IAM-039"}},
	{"every KMS action from the office", `{"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*", "Condition": {"IpAddress": {"aws:SourceIp": "203.0.113.0/24"}}}]}`, []string{"WARDEN-AWS-IAM-039"}},
	{"every IAM action", `{"Statement": [{"Effect": "Allow", "Action": "iam:*", "Resource": "*"}]}`, []string{"WARDEN-AWS-IAM-002"}},
	{"every STS action", `{"Statement": [{"Effect": "Allow", "Action": "sts:*", "Resource": "*"}]}`, []string{"WARDEN-AWS-IAM-002"}},
	{"every KMS action", `{"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]}`, []string{"WARDEN-AWS-IAM-038"}},
	{"every CloudTrail action", `{"Statement": [{"Effect": "Allow", "Action": "cloudtrail:*", "Resource": "*"}]}`, []string{"WARDEN-AWS-IAM-018"}},
	{"Marketplace subscriptions", `{"Statement": [{"Effect": "Allow", "Action": "aws-marketplace:Subscribe", "Resource": "*"}]}`, []string{"WARDEN-AWS-IAM-019"}},
	{"Marketplace, in lists", `{"Version": "2012-10-17", "Statement": {"Sid": "Buy", "Effect": "Allow", "Action": ["aws-marketplace:Subscribe", "aws-marketplace:ViewSubscriptions"], "Resource": ["*"]}}`, []string{"WARDEN-AWS-IAM-019"}},
	{"every Marketplace action", `{"Statement": [{"Effect": "Allow", "Action": "aws-marketplace:*", "Resource": "*"}, {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}]}`, []string{"WARDEN-AWS-IAM-019"}},
	{"every role to assume", `{"Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "arn:aws:iam::*:role/*"}]}`, []string{"WARDEN-AWS-IAM-020"}},
	{"every function of a region", `{"Statement": [{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:*"}]}`, []string{"WARDEN-AWS-IAM-003"}},
	{"everything but IAM", `{"Statement": [{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]}`,
		[]string{"WARDEN-AWS-IAM-002", "WARDEN-AWS-IAM-003", "WARDEN-AWS-IAM-004", "WARDEN-AWS-IAM-018", "WARDEN-AWS-IAM-019", "WARDEN-AWS-IAM-038"}},
	{"some functions", `{"Statement": [{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:prod-*"}]}`, nil},
	{"one bucket", `{"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": ["arn:aws:s3:::acme-logs", "arn:aws:s3:::acme-logs/*"]}]}`, nil},
}

// places puts one document where IAM keeps documents: inline in a user, a group and a
// role, and as a customer-managed policy attached to a user.
func places(doc json.RawMessage) map[string]snapshot.Resource {
	inline := func(kind string) snapshot.Resource {
		return snapshot.Resource{
			UID: "arn:aws:iam::111111111111:" + kind + "/holder", Type: "aws.iam." + kind, Name: "holder",
			Account: "111111111111", Region: "global", Scope: "aws/111111111111/iam",
			Attributes: map[string]any{"inline_policies": []any{map[string]any{"name": "grant", "document": doc}}},
		}
	}
	role := inline("role")
	role.Attributes["assume_role_policy"] = map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}}}
	return map[string]snapshot.Resource{
		"user inline":  inline("user"),
		"group inline": inline("group"),
		"role inline":  role,
		"customer-managed policy": {
			UID: "arn:aws:iam::111111111111:policy/grant", Type: "aws.iam.policy", Name: "grant",
			Account: "111111111111", Region: "global", Scope: "aws/111111111111/iam",
			Attributes: map[string]any{"aws_managed": false, "attachment_count": 1, "document": doc,
				"attached_to": map[string]any{"users": []any{"holder"}, "groups": []any{}, "roles": []any{}}},
		},
	}
}

// documentPolicies are the policies that judge IAM documents wherever they live: their
// resource types are the customer-managed policy and the three principals.
func documentPolicies(ps []*engine.Policy) map[string]*engine.Policy {
	out := map[string]*engine.Policy{}
	for _, p := range ps {
		if len(p.ResourceTypes) == 4 && !slices.ContainsFunc([]string{"aws.iam.policy", "aws.iam.user", "aws.iam.group", "aws.iam.role"}, func(t string) bool {
			return !slices.Contains(p.ResourceTypes, t)
		}) {
			out[p.ID] = p
		}
	}
	return out
}

// TestDocumentPolicies_sameVerdictInEveryPlace runs every document policy over the same
// document placed in a user's, a group's and a role's inline policies and in an attached
// customer-managed policy, and wants the same policies to fire in each place: a grant is
// no less a grant for living in a group (issue 32, class 4).
func TestDocumentPolicies_sameVerdictInEveryPlace(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		t.Fatal(err)
	}
	docPolicies := documentPolicies(e.Policies())
	if len(docPolicies) < 8 {
		t.Fatalf("%d document policies, want the 8 or more of the pack: %v", len(docPolicies), slices.Sorted(maps.Keys(docPolicies)))
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fired := map[string]bool{}
	for _, c := range documentCases {
		for place, r := range places(json.RawMessage(c.doc)) {
			res, err := e.Evaluate(ctx, snapshot.Header{}, now, []snapshot.Resource{normalized(t, r)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.EvalErrors) > 0 {
				t.Fatalf("%s in %s: %+v", c.name, place, res.EvalErrors)
			}
			var got []string
			for _, f := range res.Findings {
				if docPolicies[f.Policy] != nil && !slices.Contains(got, f.Policy) {
					got = append(got, f.Policy)
					fired[f.Policy] = true
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s in the %s: %v fire, want %v", c.name, place, got, c.want)
			}
		}
	}
	for id, p := range docPolicies {
		if !fired[id] {
			t.Errorf("%s (%s) fires on none of documentCases: add a document it reports", id, p.File)
		}
	}
}

// normalized is r as a snapshot reader gives it, its attributes decoded from JSON as the
// engine sees them in a scan.
func normalized(t *testing.T, r snapshot.Resource) snapshot.Resource {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out snapshot.Resource
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
