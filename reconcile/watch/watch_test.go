package watch_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/events"
	"github.com/warden-sec/warden/reconcile/watch"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
)

const acct = "111111111111"

var applied = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func fix(id, remediator, target string, before any) *remediate.Record {
	b, _ := json.Marshal(before)
	return &remediate.Record{PlannedAction: remediate.PlannedAction{Action: remediators.Action{ID: id, Remediator: remediator,
		Target: target, Account: acct, Before: b}}, State: remediate.StateVerified, UpdatedAt: applied}
}

func awsDenial(principal, action string, after time.Duration) events.Denial {
	return events.Denial{Provider: "aws", Account: acct, Principal: principal, Actions: []string{action},
		Event: action, Code: "AccessDenied", At: applied.Add(after), Source: "ev-1"}
}

// TestFind: what a fix removed, denied to its principal within the window, is blamed on
// it; what it kept, another principal, another time, or a fix rolled back is not.
func TestFind(t *testing.T) {
	role := "arn:aws:iam::" + acct + ":role/app"
	user := "arn:aws:iam::" + acct + ":user/ci/deployer"
	inline := fix("act-inline", watch.RightsizeInline, role, map[string]any{"kind": "role", "name": "app", "policy_name": "app",
		"document": json.RawMessage(`{"Statement":[{"Effect":"Allow","Action":["s3:ListBucket","kms:*","lambda:*"],"Resource":"*"}]}`),
		"after":    json.RawMessage(`{"Statement":[{"Effect":"Allow","Action":["s3:ListBucket"],"Resource":"*"}]}`),
		"removed":  []string{"kms:*", "lambda:*"}, "window_days": 90})
	star := fix("act-star", watch.RightsizeInline, user, map[string]any{"kind": "user", "name": "deployer", "policy_name": "all",
		"document": json.RawMessage(`{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`),
		"after":    json.RawMessage(`{"Statement":{"Effect":"Allow","Action":["s3:*","ec2:*"],"Resource":"*"}}`),
		"removed":  []string{"*"}})
	group := fix("act-group", watch.RightsizeInline, "arn:aws:iam::"+acct+":group/devs", map[string]any{"kind": "group", "name": "devs",
		"after": nil, "removed": []string{"secretsmanager:ListSecrets"}})
	managed := fix("act-managed", watch.RightsizeManaged, "arn:aws:iam::"+acct+":policy/shared", map[string]any{
		"policy_arn": "arn:aws:iam::" + acct + ":policy/shared", "after": json.RawMessage(`{"Statement":[{"Effect":"Allow","Action":"s3:Get*","Resource":"*"}]}`),
		"removed": []string{"s3:Put*", "dynamodb:*"}})
	batch := "arn:aws:iam::" + acct + ":role/batch"
	replaced := fix("act-replace", watch.ReplaceAttachment, batch, map[string]any{"kind": "role", "name": "batch",
		"policy_arn": "arn:aws:iam::aws:policy/PowerUserAccess", "used_services": []string{"s3", "sqs"}})
	rolledBack := fix("act-old", watch.RightsizeInline, role, map[string]any{"kind": "role", "removed": []string{"sns:*"}})
	rolledBack.State = remediate.StateRolledBack
	sa := "//iam.googleapis.com/projects/acme-prod/serviceAccounts/ci@acme-prod.iam.gserviceaccount.com"
	rec := fix("act-gcp", watch.RoleRecommended, "//cloudresourcemanager.googleapis.com/projects/acme-prod", map[string]any{
		"resource": "projects/acme-prod", "role": "roles/editor", "member": "serviceAccount:ci@acme-prod.iam.gserviceaccount.com",
		"new_roles": []string{"roles/storage.objectViewer"}})
	rec.Account = "acme-prod"
	fixes := []*remediate.Record{inline, star, group, managed, replaced, rolledBack, rec}

	observed := map[string]snapshot.Resource{
		user: {UID: user, Type: "aws.iam.user", Attributes: map[string]any{"groups": []any{"devs"}}},
		"arn:aws:iam::" + acct + ":policy/shared": {Type: "aws.iam.policy", Attributes: map[string]any{
			"attached_to": map[string]any{"roles": []any{"worker"}, "groups": []any{"devs"}, "users": []any{}}}},
	}
	lookup := func(uid string) (snapshot.Resource, bool, error) { r, ok := observed[uid]; return r, ok, nil }
	gcp := func(principal, perm, project string) events.Denial {
		return events.Denial{Provider: "gcp", Account: project, Principal: principal, Actions: []string{perm}, At: applied.Add(time.Hour), Source: "e"}
	}
	for _, tc := range []struct {
		name    string
		d       events.Denial
		want    []string // action ids
		removed string
	}{
		{"a removed pattern covers the action", awsDenial(role, "kms:Decrypt", time.Hour), []string{"act-inline"}, "kms:*"},
		{"case does not matter to IAM", awsDenial(role, "KMS:decrypt", time.Hour), []string{"act-inline"}, "kms:*"},
		{"a kept action", awsDenial(role, "s3:ListBucket", time.Hour), nil, ""},
		{"a service used by the replaced attachment", awsDenial(batch, "sqs:SendMessage", time.Hour), nil, ""},
		{"a service the replaced attachment dropped", awsDenial(batch, "sns:Publish", time.Hour), []string{"act-replace"}, "service sns not kept"},
		{"another principal", awsDenial("arn:aws:iam::"+acct+":role/other", "kms:Decrypt", time.Hour), nil, ""},
		{"the same role by another path", awsDenial("arn:aws:iam::"+acct+":role/svc/app", "lambda:InvokeFunction", time.Hour), []string{"act-inline"}, "lambda:*"},
		{"another account", events.Denial{Provider: "aws", Account: "222222222222", Principal: "arn:aws:iam::222222222222:role/app",
			Actions: []string{"kms:Decrypt"}, At: applied.Add(time.Hour)}, nil, ""},
		{"after the window", awsDenial(role, "kms:Decrypt", 31*24*time.Hour), nil, ""},
		{"before the fix", awsDenial(role, "kms:Decrypt", -time.Hour), nil, ""},
		{"just before its verification", awsDenial(role, "kms:Decrypt", -time.Minute), []string{"act-inline"}, "kms:*"},
		{"* narrowed: a service not kept", awsDenial(user, "iam:CreateUser", time.Hour), []string{"act-star"}, "*"},
		{"* narrowed: a service kept", awsDenial(user, "ec2:RunInstances", time.Hour), nil, ""},
		{"a group member, the policy deleted", awsDenial(user, "secretsmanager:ListSecrets", time.Hour), []string{"act-star", "act-group"}, "*"},
		{"a managed policy through the user's group", awsDenial(user, "dynamodb:PutItem", time.Hour), []string{"act-star", "act-managed"}, "*"},
		{"a managed policy attached to the role", awsDenial("arn:aws:iam::"+acct+":role/worker", "s3:PutObject", time.Hour), []string{"act-managed"}, "s3:Put*"},
		{"a managed policy still allows it", awsDenial("arn:aws:iam::"+acct+":role/worker", "s3:GetObject", time.Hour), nil, ""},
		{"a managed policy not attached", awsDenial(role, "dynamodb:PutItem", time.Hour), nil, ""},
		{"a rolled-back fix", awsDenial(role, "sns:Publish", time.Hour), nil, ""},
		{"gcp: the member a role was taken from", gcp(sa, "storage.buckets.list", "acme-prod"), []string{"act-gcp"}, "role roles/editor"},
		{"gcp: another project", gcp(sa, "storage.buckets.list", "acme-dev"), nil, ""},
		{"gcp: another member", gcp("user:eve@acme.example", "storage.buckets.list", "acme-prod"), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := watch.Find(tc.d, fixes, 0, lookup)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.Fix.ID)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("matched %q, want %q", got, tc.want)
			}
			if len(ms) > 0 && ms[0].Removed != tc.removed {
				t.Errorf("removed by %q, want %q", ms[0].Removed, tc.removed)
			}
		})
	}
}

// TestFinding: the finding is critical, on the principal, in the watch scope, and its
// message names the principal, the denied action, the fix and the rollback command.
func TestFinding(t *testing.T) {
	role := "arn:aws:iam::" + acct + ":role/app"
	r := fix("act-1a2b", watch.RightsizeInline, role, map[string]any{"kind": "role", "removed": []string{"kms:*"}})
	m := watch.Match{Denial: awsDenial(role, "kms:Decrypt", 2*time.Hour), Fix: r, Denied: "kms:Decrypt", Removed: "kms:*"}
	f := watch.Finding(m)
	if f.Policy != watch.PolicyID || f.Severity.String() != "critical" || f.Resource != role || f.ResourceType != "aws.iam.role" ||
		f.Scope != "aws/"+acct+"/watch" || f.Fingerprint == "" || f.Status != "open" {
		t.Errorf("finding %+v", f)
	}
	for _, s := range []string{role, "kms:Decrypt", "act-1a2b", "`warden rollback act-1a2b`", "2h0m0s after"} {
		if !strings.Contains(f.Message, s) {
			t.Errorf("message %q lacks %q", f.Message, s)
		}
	}
	m2 := m
	m2.Denied = "kms:Encrypt"
	if watch.Fingerprint(m2) != f.Fingerprint {
		t.Error("another denial of the same fix makes another finding")
	}
}
