package remediate_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

const usedDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:ListBucket","kms:Decrypt","lambda:*"],"Resource":"*"}]}`

// usedWorld is an account whose role app is granted s3, kms and lambda by its inline
// policy and used s3 two days ago, lambda 300 days ago, kms never.
func usedWorld() *cloudsim.World {
	now := time.Now().UTC().Truncate(time.Second)
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: acct, Regions: []string{"us-east-1"},
		Roles: []*cloudsim.Role{{Name: "app", Created: now.AddDate(-2, 0, 0), LastUsed: &now, LastUsedRegion: "us-east-1",
			AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			InlinePolicies:   []cloudsim.InlinePolicy{{Name: "app", Document: usedDoc}},
			LastAccessed: []cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:ListBucket", At: now.AddDate(0, 0, -2), Region: "us-east-1"},
				{Service: "lambda", At: now.AddDate(0, 0, -300), Region: "us-east-1"},
			}}}}}}}
}

// TestRightsize_lifecycle: on both databases, the usage the collector reads makes the
// pack plan a right-sizing of the role's inline policy at high risk; it waits for an
// approver, applies, is verified (the finding gone in a fresh read), and rolls back to
// the identical document; the audit log verifies.
func TestRightsize_lifecycle(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := remediatetest.Start(t, dsn(t), usedWorld(), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
				remediatetest.Options{Usage: true})
			p := only(e.Plan(t, "alice"), "aws.iam.rightsize_inline_policy", 1)
			if len(p.Actions) != 1 || p.Actions[0].Part != "inline/app" || p.Actions[0].Risk.String() != "high" {
				t.Fatalf("plan: %+v", p.Actions)
			}
			id := p.Actions[0].ID
			alice := e.Machine("alice", remediate.Limits{})
			res, err := alice.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			pending := itemOf(t, res, id)
			if pending.State != remediate.StatePending || pending.Request == "" || e.Sim.WriteCount() != 0 {
				t.Fatalf("before approval: %+v, %d writes", pending, e.Sim.WriteCount())
			}
			if _, err := e.Gate.Decide(ctx, pending.Request, "bob", "cli", true, "CHG-29"); err != nil {
				t.Fatal(err)
			}
			res, err = alice.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, id); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("after approval: %+v", it)
			}
			if got := roleDoc(t, e); got != `{"Statement":[{"Action":["s3:ListBucket"],"Effect":"Allow","Resource":"*"}],"Version":"2012-10-17"}` {
				t.Errorf("the policy after the fix: %s", got)
			}
			if it, err := alice.Rollback(ctx, id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			var want any
			_ = json.Unmarshal([]byte(usedDoc), &want)
			wantJSON, _ := json.Marshal(want)
			if got := roleDoc(t, e); got != string(wantJSON) {
				t.Errorf("after rollback: %s\nwant %s", got, wantJSON)
			}
			e.VerifyAudit(t)
		})
	}
}

// roleDoc is role app's inline policy as IAM holds it, re-encoded canonically.
func roleDoc(t *testing.T, e *remediatetest.Env) string {
	t.Helper()
	out, err := iam.NewFromConfig(e.SDK).GetRolePolicy(context.Background(), &iam.GetRolePolicyInput{RoleName: aws.String("app"), PolicyName: aws.String("app")})
	if err != nil {
		t.Fatal(err)
	}
	text, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
