package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// usagePrincipals are users, roles and groups with attributes.usage (IAM's last-accessed
// data, issue 29), small enough to read, with incomplete data besides (which
// fixtures/acme does not hold), built here past the snapshot reader: the data is as of
// 2026-11-30T11:52:00Z, tracked since 400 days before.
const usagePrincipals = `[
{"uid": "arn:aws:iam::222222222222:role/staging-deployer", "type": "aws.iam.role", "name": "staging-deployer", "account": "222222222222",
 "attributes": {"path": "/", "created": "2023-01-10T12:30:00Z", "service_linked": false, "assume_role_policy": {},
  "attached_policies": [{"arn": "arn:aws:iam::aws:policy/PowerUserAccess", "name": "PowerUserAccess"}],
  "usage": {"source": "aws.access_advisor", "granularity": "action", "as_of": "2026-11-30T11:52:00Z", "tracked_since": "2025-10-26T11:52:00Z", "complete": true, "error": "",
   "services": [
    {"service": "ecs", "name": "Amazon ECS", "last_used": "2026-11-30T10:46:00Z", "region": "eu-west-1"},
    {"service": "sts", "name": "AWS STS", "last_used": "2026-11-30T10:46:00Z", "region": "eu-west-1"},
    {"service": "kms", "name": "AWS KMS", "last_used": null, "region": null},
    {"service": "lambda", "name": "AWS Lambda", "last_used": "2026-02-10T16:00:00Z", "region": "eu-west-1"},
    {"service": "sqs", "name": "Amazon SQS", "last_used": null, "region": null},
    {"service": "s3", "name": "Amazon S3", "last_used": "2026-11-29T08:00:00Z", "region": "eu-west-1", "actions": [
     {"action": "s3:GetObject", "last_used": "2026-11-29T08:00:00Z", "region": "eu-west-1"},
     {"action": "s3:DeleteObject", "last_used": null, "region": null}]}]}}},
{"uid": "arn:aws:iam::333333333333:group/identity-admins", "type": "aws.iam.group", "name": "identity-admins", "account": "333333333333",
 "attributes": {"path": "/", "attached_policies": [{"arn": "arn:aws:iam::aws:policy/IAMFullAccess", "name": "IAMFullAccess"}],
  "usage": {"source": "aws.access_advisor", "granularity": "action", "as_of": "2026-11-30T11:52:00Z", "tracked_since": "2025-10-26T11:52:00Z", "complete": true, "error": "",
   "services": [
    {"service": "iam", "name": "AWS IAM", "last_used": "2026-03-18T16:45:00Z", "region": "us-east-1"},
    {"service": "organizations", "name": "AWS Organizations", "last_used": null, "region": null}]}}},
{"uid": "arn:aws:iam::111111111111:user/alice", "type": "aws.iam.user", "name": "alice", "account": "111111111111",
 "attributes": {"path": "/", "created": "2023-02-06T09:14:00Z",
  "usage": {"source": "aws.access_advisor", "granularity": "service", "as_of": "2026-11-30T11:52:00Z", "tracked_since": "2025-10-26T11:52:00Z", "complete": false, "error": "job failed",
   "services": [{"service": "kms", "name": "AWS KMS", "last_used": null, "region": null}]}}},
{"uid": "arn:aws:iam::111111111111:role/aws-service-role/AWSServiceRoleForSupport", "type": "aws.iam.role", "name": "AWSServiceRoleForSupport", "account": "111111111111",
 "attributes": {"path": "/aws-service-role/support.amazonaws.com/", "created": "2022-09-01T00:00:00Z", "service_linked": true, "assume_role_policy": {},
  "usage": {"source": "aws.access_advisor", "granularity": "service", "as_of": "2026-11-30T11:52:00Z", "tracked_since": "2025-10-26T11:52:00Z", "complete": true, "error": "",
   "services": [{"service": "support", "name": "AWS Support", "last_used": null, "region": null}]}}}
]`

// The policies on usage decide the same with topdown alone and with the fast path, for
// the default window and a configured one, and decide what their tests say.
func TestUsagePolicies_fastPathMatchesTopdown(t *testing.T) {
	var rs []snapshot.Resource
	if err := json.Unmarshal([]byte(usagePrincipals), &rs); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h := snapshot.Header{Version: 1, CollectedAt: now}
	tests := []struct {
		settings map[string]any
		want     []string // policy and resource name of each finding of the three policies
	}{
		{nil, []string{
			"WARDEN-AWS-IAM-034 group/identity-admins", "WARDEN-AWS-IAM-034 role/staging-deployer",
			"WARDEN-AWS-IAM-035 role/staging-deployer",
			"WARDEN-AWS-IAM-036 group/identity-admins", "WARDEN-AWS-IAM-036 role/staging-deployer",
		}},
		// Over 365 days, lambda and iam count as used: IAMFullAccess is used, s3 is
		// still used, and the never-used kms, sqs, organizations and DeleteObject remain.
		{map[string]any{"unused_access_window_days": 365, "managed_policy_small_share_services": 2}, []string{
			"WARDEN-AWS-IAM-034 group/identity-admins", "WARDEN-AWS-IAM-034 role/staging-deployer",
			"WARDEN-AWS-IAM-035 role/staging-deployer",
		}},
	}
	for _, tc := range tests {
		var got [2][]string
		for i, baseline := range []bool{true, false} {
			e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Baseline: baseline, Workers: 1, Settings: tc.settings})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Evaluate(context.Background(), h, now, rs)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.EvalErrors) > 0 {
				t.Fatalf("settings %v, baseline %v: eval errors %+v", tc.settings, baseline, res.EvalErrors)
			}
			var short []string
			for _, f := range res.Findings {
				got[i] = append(got[i], line(f))
				if strings.Compare(f.Policy, "WARDEN-AWS-IAM-034") >= 0 && strings.Compare(f.Policy, "WARDEN-AWS-IAM-036") <= 0 {
					_, name, _ := strings.Cut(f.Resource, ":iam::")
					_, name, _ = strings.Cut(name, ":")
					short = append(short, f.Policy+" "+name)
				}
			}
			slices.Sort(got[i])
			slices.Sort(short)
			if !slices.Equal(short, tc.want) {
				t.Errorf("settings %v, baseline %v: findings\n%s\nwant\n%s", tc.settings, baseline, strings.Join(short, "\n"), strings.Join(tc.want, "\n"))
			}
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("settings %v: topdown\n%s\nfast path\n%s", tc.settings, strings.Join(got[0], "\n"), strings.Join(got[1], "\n"))
		}
	}
}
