package show_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/show"
	"github.com/warden-sec/warden/remediators"
)

func TestApproval_saysWhoMayApprove(t *testing.T) {
	for _, tc := range []struct {
		ap        remediate.Approvals
		approvers []string
		want      string
	}{
		{remediate.Approvals{Verdict: "auto"}, nil, "none: applied automatically"},
		{remediate.Approvals{Verdict: "refused", Reason: "risk critical is never applied"}, nil, "refused: risk critical is never applied"},
		{remediate.Approvals{Verdict: "approval", Needed: 2}, []string{"alice", "bob"}, "2 of alice, bob, never the requester"},
		{remediate.Approvals{Verdict: "approval", Needed: 1}, nil, "1 needed, but no approvers are configured (gates.approvers): nobody can approve it yet"},
	} {
		if got := show.Approval(tc.ap, tc.approvers); got != tc.want {
			t.Errorf("Approval(%+v) = %q, want %q", tc.ap, got, tc.want)
		}
	}
}

func TestApply_namesTheRequestToApproveAndWhyTheRunStopped(t *testing.T) {
	var buf bytes.Buffer
	show.Apply(&buf, &remediate.Result{DryRun: true, Stopped: "circuit breaker", Deferred: "blast-radius cap: 2 actions deferred", Recovered: 1, Items: []remediate.Item{
		{Action: "act-1", Remediator: "aws.ec2.revoke_ingress", Part: strings.Repeat("p", 80), Risk: "medium", State: remediate.StatePending,
			Outcome: "waits for approval", Request: "apr-1"},
	}})
	got := buf.String()
	for _, want := range []string{"dry run: nothing is changed", "waits for approval — warden approve apr-1", strings.Repeat("p", 59) + "…",
		"resolved 1 action an interrupted run had left", "stopped: circuit breaker",
		"deferred: blast-radius cap: 2 actions deferred; the next run takes them up"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestCount(t *testing.T) {
	if got := show.Count(1, "fix"); got != "1 fix" {
		t.Errorf("Count(1) = %q", got)
	}
	if got := show.Count(3, "action"); got != "3 actions" {
		t.Errorf("Count(3) = %q", got)
	}
}

// A fix that narrows a grant shows what it removes and what it leaves (the evidence is
// the finding's, on its "why" line); a terminal escape in a name is neutralised.
func TestPlan_showsANarrowingWithItsEvidence(t *testing.T) {
	before := `{"after":{"Statement":[{"Action":["s3:Get*"],"Effect":"Allow","Resource":"*"}]},"document":{"Statement":[{"Action":["s3:Get*","kms:Decrypt","lambda:*"],"Effect":"Allow","Resource":"*"}]},` +
		`"kind":"role","name":"deploy","policy_name":"app","removed":["kms:Decrypt","lambda:\u001b[31m*"],"window_days":90}`
	p := &remediate.Plan{Hash: "0123456789abcdef", Actions: []remediate.PlannedAction{{Action: remediators.Action{
		ID: "act-1", Remediator: "aws.iam.rightsize_inline_policy", Target: "arn:aws:iam::111111111111:role/deploy",
		Part: "inline/app", Before: json.RawMessage(before), Rollback: remediators.Rollback{Possible: true}}}}}
	var out strings.Builder
	show.Plan(&out, p, []string{"bob"})
	for _, want := range []string{"inline/app → narrowed to what was used", "kms:Decrypt: unused for 90 days",
		`lambda:\x1b[31m*: unused for 90 days`, `leaves    {"Statement":[{"Action":["s3:Get*"]`,
		`was       {"Statement":[{"Action":["s3:Get*","kms:Decrypt","lambda:*"]`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("a terminal escape reached the output:\n%q", out.String())
	}
}

// A fix that replaces an AWS-managed policy shows what it detaches and what it attaches
// in its place, or that it attaches nothing.
func TestPlan_showsAReplacement(t *testing.T) {
	for _, tt := range []struct {
		before string
		want   []string
	}{
		{`{"document":{"Statement":[{"Action":["s3:*","sqs:*"],"Effect":"Allow","Resource":"*","Sid":"UsedServices"}],"Version":"2012-10-17"},` +
			`"generated_name":"warden-bob-AdministratorAccess","generated_path":"/warden/","kind":"user","name":"bob",` +
			`"policy_arn":"arn:aws:iam::aws:policy/AdministratorAccess","used_services":["s3","sqs"],"window_days":90}`,
			[]string{"attachment/AdministratorAccess → replaced by a policy of the services used", "detaches  arn:aws:iam::aws:policy/AdministratorAccess",
				"attaches  /warden/warden-bob-AdministratorAccess (created), granting every action of s3, sqs: the services used within 90 days"}},
		{`{"document":null,"generated_name":"warden-bob-AdministratorAccess","generated_path":"/warden/","kind":"user","name":"bob",` +
			`"policy_arn":"arn:aws:iam::aws:policy/AdministratorAccess","used_services":[],"window_days":30}`,
			[]string{"attaches  nothing: none of its services was used within 30 days"}},
	} {
		p := &remediate.Plan{Hash: "0123456789abcdef", Actions: []remediate.PlannedAction{{Action: remediators.Action{
			ID: "act-1", Remediator: "aws.iam.replace_managed_attachment", Target: "arn:aws:iam::111111111111:user/bob",
			Part: "attachment/AdministratorAccess", Before: json.RawMessage(tt.before), Rollback: remediators.Rollback{Possible: true}}}}}
		var out strings.Builder
		show.Plan(&out, p, []string{"carol"})
		for _, want := range tt.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("plan lacks %q:\n%s", want, out.String())
			}
		}
	}
}
