package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediate"
)

// appPolicy is the user's inline policy: what it uses (EC2 and S3 reads) and what it
// never does (Secrets Manager, KMS).
const appPolicy = `{"Version":"2012-10-17","Statement":[{"Sid":"App","Effect":"Allow","Action":["ec2:DescribeSecurityGroups","s3:ListBucket","secretsmanager:ListSecrets","kms:Decrypt"],"Resource":"*"}]}`

// TestLeastPrivilege_throughTheAWSCLI is issue 29's proof, through the official AWS CLI
// against a simulator that enforces IAM: a user is created and given a policy, uses part
// of it with its own credentials 100 days later; warden plans the right-sizing from
// Access Advisor, an approver signs, apply narrows the policy; the AWS CLI reads the new
// document, every call the user made before still succeeds and the removed ones are
// refused; rollback restores the identical document; the audit log verifies.
func TestLeastPrivilege_throughTheAWSCLI(t *testing.T) {
	cli := simtest.AWSCLI(t)
	start := time.Now().UTC().AddDate(0, 0, -200).Truncate(time.Second)
	e := startSimEnv(t, &cloudsim.World{Clock: start, AWS: cloudsim.AWS{EnforceIAM: true,
		Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"us-east-1"},
			SecurityGroups: []*cloudsim.SecurityGroup{{ID: "sg-0000000000000web", Name: "web", Region: "us-east-1", VPC: "vpc-1", Description: "web"}}}},
		S3: cloudsim.S3{Buckets: []*cloudsim.Bucket{{Name: "orders", Account: "111111111111"}}}}})
	run := func(creds []string, wantFail bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"--endpoint-url", e.url, "--output", "json"}, args...)...)
		var base []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "AWS_") {
				base = append(base, kv) // the CLI reads no setting of the test's own
			}
		}
		cmd.Env = append(base, append(creds, "AWS_DEFAULT_REGION=us-east-1", "AWS_PAGER=", "AWS_EC2_METADATA_DISABLED=true",
			"AWS_CONFIG_FILE="+filepath.Join(e.dir, "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(e.dir, "none"), "HOME="+e.dir)...)
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantFail {
			t.Fatalf("aws %s: %v (want failure %v)\n%s", strings.Join(args, " "), err, wantFail, out)
		}
		return string(out)
	}
	operator := []string{"AWS_ACCESS_KEY_ID=AKIDOPERATOR", "AWS_SECRET_ACCESS_KEY=secret"}
	run(operator, false, "iam", "create-user", "--user-name", "app")
	run(operator, false, "iam", "put-user-policy", "--user-name", "app", "--policy-name", "app", "--policy-document", appPolicy)
	var key struct {
		AccessKey struct{ AccessKeyId, SecretAccessKey string }
	}
	if err := json.Unmarshal([]byte(run(operator, false, "iam", "create-access-key", "--user-name", "app")), &key); err != nil {
		t.Fatal(err)
	}
	app := []string{"AWS_ACCESS_KEY_ID=" + key.AccessKey.AccessKeyId, "AWS_SECRET_ACCESS_KEY=" + key.AccessKey.SecretAccessKey}

	// 100 days on, the user works: EC2 and S3 reads, nothing else.
	resp, err := http.Post(e.url+"/_sim/clock", "text/plain", strings.NewReader("2400h"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("move the simulator's clock: %v %v", err, resp)
	}
	resp.Body.Close()
	used := [][]string{{"ec2", "describe-security-groups"}, {"s3api", "list-objects-v2", "--bucket", "orders"}}
	for _, c := range used {
		run(app, false, c...)
	}
	run(app, true, "iam", "list-users") // enforcement is on: never granted

	bobKey, bobPub := sshKeyFile(t, e.dir, "bob")
	e.cfg = write(t, e.dir, "warden.yaml", `gates:
  approvers: [bob]
  signers: {bob: ["`+bobPub+`"]}
  refuse: [critical]
targets:
  aws:
    regions: [us-east-1]
    endpoint: `+e.url+`
    rate_limits: {iam: 0, sts: 0, ec2: 0, acm: 0, organizations: 0}
    usage: {enabled: true}
`)
	planFile := filepath.Join(e.dir, "plan.json")
	later := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
	if code, out, stderr := e.warden(t, "plan", "--out", planFile, "--now", later); code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, stderr)
	}
	p, err := remediate.ReadPlan(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var act *remediate.PlannedAction
	for i, a := range p.Actions {
		if a.Remediator == "aws.iam.rightsize_inline_policy" && strings.HasSuffix(a.Target, ":user/app") {
			act = &p.Actions[i]
		}
	}
	if act == nil || act.Part != "inline/app" || !strings.Contains(string(act.Before), "secretsmanager:ListSecrets") {
		t.Fatalf("no right-sizing of user app's inline policy in the plan: %+v", p.Actions)
	}
	if code, out, _ := e.warden(t, "plan", "--now", later); code != 0 || !strings.Contains(out, "removes") || !strings.Contains(out, "never used since tracking began") {
		t.Errorf("the plan does not show the evidence:\n%s", out)
	}

	// Apply asks bob; bob signs; apply narrows.
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	req := itemsByAction(res)[act.ID].Request
	if code != 0 || req == "" {
		t.Fatalf("apply: exit %d, %+v\n%s", code, res, stderr)
	}
	t.Setenv("WARDEN_ACTOR", "bob")
	if code, out, stderr := e.warden(t, "approve", req, "--sign-key", bobKey, "--reason", "CHG-29"); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	t.Setenv("WARDEN_ACTOR", "alice")
	if code, res, stderr := e.applyJSON(t, planFile, "--confirm"); code != 0 || itemsByAction(res)[act.ID].State != remediate.StateVerified {
		t.Fatalf("apply after approval: exit %d, %+v\n%s", code, itemsByAction(res)[act.ID], stderr)
	}

	// The AWS CLI reads the narrowed document; the calls made before still work, the
	// removed ones are refused.
	var doc struct{ PolicyDocument map[string]any }
	if err := json.Unmarshal([]byte(run(operator, false, "iam", "get-user-policy", "--user-name", "app", "--policy-name", "app")), &doc); err != nil {
		t.Fatal(err)
	}
	narrowed, _ := json.Marshal(doc.PolicyDocument)
	if strings.Contains(string(narrowed), "secretsmanager") || strings.Contains(string(narrowed), "kms") ||
		!strings.Contains(string(narrowed), "ec2:DescribeSecurityGroups") || !strings.Contains(string(narrowed), "s3:ListBucket") {
		t.Errorf("the policy after apply: %s", narrowed)
	}
	for _, c := range used {
		run(app, false, c...)
	}
	if out := run(app, true, "secretsmanager", "list-secrets"); !strings.Contains(out, "AccessDenied") {
		t.Errorf("a removed permission was not refused:\n%s", out)
	}

	// Rollback puts the identical document back.
	if code, out, stderr := e.warden(t, "rollback", act.ID); code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, stderr)
	}
	if err := json.Unmarshal([]byte(run(operator, false, "iam", "get-user-policy", "--user-name", "app", "--policy-name", "app")), &doc); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	_ = json.Unmarshal([]byte(appPolicy), &want)
	got, _ := json.Marshal(doc.PolicyDocument)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("after rollback:\n%s\nwant\n%s", got, wantJSON)
	}
	run(app, false, "secretsmanager", "list-secrets")
	if code, out, stderr := e.warden(t, "audit", "verify"); code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", code, out, stderr)
	}
}
