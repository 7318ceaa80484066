package remediate_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// sharedARN is the customer-managed policy of sharedWorld.
const sharedARN = "arn:aws:iam::" + acct + ":policy/app-shared"

// narrowedDoc is usedDoc without what nobody used: kms never, lambda 300 days ago.
const narrowedDoc = `{"Statement":[{"Action":["s3:ListBucket"],"Effect":"Allow","Resource":"*"}],"Version":"2012-10-17"}`

// sharedWorld is an account whose customer-managed policy app-shared (usedDoc: s3, kms
// and lambda) is attached to role app, which used s3:ListBucket two days ago, and to
// user deploy, which used lambda 300 days ago; nobody used kms. The policy and both
// principals are two years old. versions, when given, are the policy's versions (the
// last the default), else it has one holding usedDoc.
func sharedWorld(versions ...cloudsim.PolicyVersion) *cloudsim.World {
	now := time.Now().UTC().Truncate(time.Second)
	old := now.AddDate(-2, 0, 0)
	pol := &cloudsim.Policy{Name: "app-shared", Created: old, Updated: old, Document: usedDoc, Versions: versions}
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: acct, Regions: []string{"us-east-1"},
		Policies: []*cloudsim.Policy{pol},
		Roles: []*cloudsim.Role{{Name: "app", Created: old, LastUsed: &now, LastUsedRegion: "us-east-1",
			AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			AttachedPolicies: []string{sharedARN},
			LastAccessed: []cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:ListBucket", At: now.AddDate(0, 0, -2), Region: "us-east-1"},
			}}},
		Users: []*cloudsim.User{{Name: "deploy", Created: old, AttachedPolicies: []string{sharedARN},
			LastAccessed: []cloudsim.AccessRecord{{Service: "lambda", At: now.AddDate(0, 0, -300), Region: "us-east-1"}}}},
	}}}}
}

// policyState is a managed policy as IAM holds it, read through the SDK: its default
// version, that version's document (canonical) and every version's document by id.
type policyState struct {
	Default  string
	Document string
	Versions map[string]string
}

func readPolicy(t *testing.T, e *remediatetest.Env, arn string) policyState {
	t.Helper()
	ctx := context.Background()
	cl := iam.NewFromConfig(e.SDK)
	out, err := cl.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("read policy %s: %v", arn, err)
	}
	s := policyState{Default: aws.ToString(out.Policy.DefaultVersionId), Versions: map[string]string{}}
	vs, err := cl.ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs.Versions {
		id := aws.ToString(v.VersionId)
		got, err := cl.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: aws.String(id)})
		if err != nil {
			t.Fatal(err)
		}
		s.Versions[id] = canonicalDoc(t, aws.ToString(got.PolicyVersion.Document))
		if v.IsDefaultVersion != (id == s.Default) {
			t.Errorf("policy %s: version %s says default=%v, the policy says %s", arn, id, v.IsDefaultVersion, s.Default)
		}
	}
	s.Document = s.Versions[s.Default]
	return s
}

// canonicalDoc is a policy document as IAM returns it (URL-encoded) or as written,
// re-encoded canonically.
func canonicalDoc(t *testing.T, text string) string {
	t.Helper()
	if dec, err := url.QueryUnescape(text); err == nil {
		text = dec
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("policy document %q: %v", text, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// approvedApply applies p as alice: pending with no write to the cloud, approved by bob,
// applied again; it returns the item of action id after the approval.
func approvedApply(t *testing.T, e *remediatetest.Env, m *remediate.Machine, p *remediate.Plan, id string) remediate.Item {
	t.Helper()
	ctx := context.Background()
	res, err := m.Apply(ctx, p, true)
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
	if res, err = m.Apply(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	return itemOf(t, res, id)
}

// planOne plans as alice and keeps the one action of remediator, which must be the only
// one of it in the plan, at high risk.
func planOne(t *testing.T, e *remediatetest.Env, remediator string) *remediate.Plan {
	t.Helper()
	full := e.Plan(t, "alice")
	p := full.Only(func(a remediate.PlannedAction) bool { return a.Remediator == remediator })
	if len(p.Actions) != 1 || p.Actions[0].Risk.String() != "high" {
		t.Fatalf("plan: %+v, want one %s at high risk", p.Actions, remediator)
	}
	return p
}

// auditOf is the data of the audit entries of kind about action id, oldest first.
func auditOf(t *testing.T, e *remediatetest.Env, id, kind string) []map[string]any {
	t.Helper()
	es, err := e.Log.Entries(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, en := range es {
		if en.Subject != id || en.Kind != kind {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(en.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestRightsizeManagedPolicy_lifecycle: on both databases, the usage of the role and
// the user a customer-managed policy is attached to (aggregated by the collector) makes
// the pack plan a narrowing of the policy at high risk; it waits for an approver, runs
// its steps, is verified, and the cloud holds a new default version with only what was
// used beside the old default; rollback makes the old default the default again and
// deletes the narrowed version. At AWS's five versions, the oldest non-default one is
// deleted to make room, and the action's record and audit log name it.
func TestRightsizeManagedPolicy_lifecycle(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := remediatetest.Start(t, dsn(t), sharedWorld(), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
				remediatetest.Options{Usage: true})
			before := readPolicy(t, e, sharedARN)
			if before.Document != canonicalDoc(t, usedDoc) || len(before.Versions) != 1 {
				t.Fatalf("the world's policy: %+v", before)
			}
			p := planOne(t, e, "aws.iam.rightsize_managed_policy")
			if a := p.Actions[0]; a.Part != "version" || a.Target != sharedARN {
				t.Fatalf("plan: %+v", a)
			}
			id := p.Actions[0].ID
			alice := e.Machine("alice", remediate.Limits{})
			if it := approvedApply(t, e, alice, p, id); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("after approval: %+v", it)
			}
			after := readPolicy(t, e, sharedARN)
			if after.Default == before.Default || after.Document != narrowedDoc {
				t.Errorf("after the fix the default is %s: %s\nwant a new version: %s", after.Default, after.Document, narrowedDoc)
			}
			if after.Versions[before.Default] != before.Document || len(after.Versions) != 2 {
				t.Errorf("after the fix the versions are %v: the old default %s must stay as it was", after.Versions, before.Default)
			}
			rec, err := alice.Action(ctx, id)
			if err != nil || rec.Progress == nil || !rec.Progress.Done || rec.Progress.Step != "versioned" {
				t.Fatalf("record after the fix: %+v %v", rec, err)
			}
			if steps := auditOf(t, e, id, audit.KindActionStep); len(steps) != 2 || steps[0]["step"] != "checked" || steps[1]["step"] != "versioned" {
				t.Errorf("audited steps: %v", steps)
			}
			if it, err := alice.Rollback(ctx, id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			back := readPolicy(t, e, sharedARN)
			if back.Default != before.Default || back.Document != before.Document || len(back.Versions) != 1 {
				t.Errorf("after rollback: %+v\nwant %+v", back, before)
			}
			e.VerifyAudit(t)
		})
	}
}

// TestRightsizeManagedPolicy_atFiveVersions: the policy already has AWS's five versions;
// the oldest non-default one (v1) is deleted to make room, the others kept as they were,
// and the record and the audit entry of the first step, written before the deletion,
// hold its id and document. Rollback makes v5 the default again; v1 is not restored.
func TestRightsizeManagedPolicy_atFiveVersions(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			old := time.Now().UTC().Truncate(time.Second).AddDate(-2, 0, 0)
			version := func(n int, action string) cloudsim.PolicyVersion {
				return cloudsim.PolicyVersion{ID: "v" + string(rune('0'+n)), Created: old.AddDate(0, 0, n),
					Document: cloudsim.Doc(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"` + action + `","Resource":"*"}]}`)}
			}
			versions := []cloudsim.PolicyVersion{version(1, "s3:GetObject"), version(2, "s3:PutObject"), version(3, "s3:DeleteObject"), version(4, "s3:ListAllMyBuckets"),
				{ID: "v5", Created: old.AddDate(0, 0, 5), Document: usedDoc}}
			e := remediatetest.Start(t, dsn(t), sharedWorld(versions...), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
				remediatetest.Options{Usage: true})
			before := readPolicy(t, e, sharedARN)
			if before.Default != "v5" || len(before.Versions) != 5 {
				t.Fatalf("the world's policy: %+v", before)
			}
			p := planOne(t, e, "aws.iam.rightsize_managed_policy")
			id := p.Actions[0].ID
			alice := e.Machine("alice", remediate.Limits{})
			if it := approvedApply(t, e, alice, p, id); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("after approval: %+v", it)
			}
			after := readPolicy(t, e, sharedARN)
			if _, ok := after.Versions["v1"]; ok || len(after.Versions) != 5 || after.Document != narrowedDoc {
				t.Fatalf("after the fix: %+v, want v1 gone and a narrowed default", after)
			}
			for _, v := range []string{"v2", "v3", "v4", "v5"} {
				if after.Versions[v] != before.Versions[v] {
					t.Errorf("version %s changed: %s", v, after.Versions[v])
				}
			}
			// The record, read from the store, names what was deleted and holds it.
			rec, err := alice.Action(ctx, id)
			if err != nil || rec.Progress == nil {
				t.Fatalf("record: %+v %v", rec, err)
			}
			var data struct {
				Pruned *struct {
					VersionID string          `json:"version_id"`
					Document  json.RawMessage `json:"document"`
				} `json:"pruned"`
				NewVersion string `json:"new_version"`
			}
			if err := json.Unmarshal(rec.Progress.Data, &data); err != nil || data.Pruned == nil || data.Pruned.VersionID != "v1" ||
				canonicalDoc(t, string(data.Pruned.Document)) != before.Versions["v1"] || data.NewVersion != after.Default {
				t.Fatalf("the record's step data: %s (%v)", rec.Progress.Data, err)
			}
			// The audit entry of the first step, before anything was written, names it.
			steps := auditOf(t, e, id, audit.KindActionStep)
			if len(steps) == 0 || steps[0]["step"] != "checked" {
				t.Fatalf("audited steps: %v", steps)
			}
			first, _ := json.Marshal(steps[0]["data"])
			if !strings.Contains(string(first), `"version_id":"v1"`) || !strings.Contains(string(first), "s3:GetObject") {
				t.Errorf("the first step's audit entry: %s", first)
			}
			if it, err := alice.Rollback(ctx, id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			back := readPolicy(t, e, sharedARN)
			var ids []string
			for v := range back.Versions {
				ids = append(ids, v)
			}
			slices.Sort(ids)
			if back.Default != "v5" || back.Document != before.Document || !slices.Equal(ids, []string{"v2", "v3", "v4", "v5"}) {
				t.Errorf("after rollback: %+v (v1 is not restored: its document is in the record)", back)
			}
			e.VerifyAudit(t)
		})
	}
}

const (
	adminARN    = "arn:aws:iam::aws:policy/AdministratorAccess"
	powerARN    = "arn:aws:iam::aws:policy/PowerUserAccess"
	generatedOf = "arn:aws:iam::" + acct + ":policy/warden/warden-ops-"
)

// opsWorld is an account whose two-year-old role ops has the AWS-managed policy managed
// attached (spelled out with doc: the simulator's placeholder grants nothing), and
// inline policies inline; it used s3 and the services of more within 90 days.
func opsWorld(managed, doc string, inline []cloudsim.InlinePolicy, more ...cloudsim.AccessRecord) *cloudsim.World {
	now := time.Now().UTC().Truncate(time.Second)
	old := now.AddDate(-2, 0, 0)
	_, name, _ := strings.Cut(managed, ":policy/")
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: acct, Regions: []string{"us-east-1"},
		Policies: []*cloudsim.Policy{{Name: name, ARN: managed, AWSManaged: true, Created: old, Updated: old, Document: cloudsim.Doc(doc)}},
		Roles: []*cloudsim.Role{{Name: "ops", Created: old, LastUsed: &now, LastUsedRegion: "us-east-1",
			AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			AttachedPolicies: []string{managed}, InlinePolicies: inline,
			LastAccessed: append([]cloudsim.AccessRecord{
				{Service: "s3", Action: "s3:GetObject", At: now.AddDate(0, 0, -3), Region: "us-east-1"},
			}, more...)}},
	}}}}
}

// attachedTo is the ARNs of the managed policies attached to role ops, read through the
// SDK.
func attachedTo(t *testing.T, e *remediatetest.Env) []string {
	t.Helper()
	out, err := iam.NewFromConfig(e.SDK).ListAttachedRolePolicies(context.Background(), &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ops")})
	if err != nil {
		t.Fatal(err)
	}
	var arns []string
	for _, p := range out.AttachedPolicies {
		arns = append(arns, aws.ToString(p.PolicyArn))
	}
	slices.Sort(arns)
	return arns
}

// wardenPolicies is the ARNs of the policies under /warden/, read through the SDK.
func wardenPolicies(t *testing.T, e *remediatetest.Env) []string {
	t.Helper()
	out, err := iam.NewFromConfig(e.SDK).ListPolicies(context.Background(), &iam.ListPoliciesInput{PathPrefix: aws.String("/warden/")})
	if err != nil {
		t.Fatal(err)
	}
	var arns []string
	for _, p := range out.Policies {
		arns = append(arns, aws.ToString(p.Arn))
	}
	return arns
}

// TestReplaceManagedAttachment_lifecycle: on both databases, a role with
// AdministratorAccess that used only s3 and sqs within 90 days is planned a replacement
// at high risk; approved and applied, the role holds a generated /warden/ policy
// granting s3:* and sqs:* and no longer AdministratorAccess; rollback attaches
// AdministratorAccess again and deletes the generated policy.
func TestReplaceManagedAttachment_lifecycle(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now().UTC()
			w := opsWorld(adminARN, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`, nil,
				cloudsim.AccessRecord{Service: "sqs", At: now.AddDate(0, 0, -20), Region: "us-east-1"},
				cloudsim.AccessRecord{Service: "ec2", At: now.AddDate(0, 0, -200), Region: "us-east-1"})
			e := remediatetest.Start(t, dsn(t), w, gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
				remediatetest.Options{Usage: true})
			admin := readPolicy(t, e, adminARN)
			if admin.Document != `{"Statement":[{"Action":"*","Effect":"Allow","Resource":"*"}],"Version":"2012-10-17"}` {
				t.Fatalf("AdministratorAccess in the simulator: %s", admin.Document)
			}
			p := planOne(t, e, "aws.iam.replace_managed_attachment")
			if a := p.Actions[0]; a.Part != "attachment/AdministratorAccess" || !strings.HasSuffix(a.Target, ":role/ops") {
				t.Fatalf("plan: %+v", a)
			}
			id := p.Actions[0].ID
			alice := e.Machine("alice", remediate.Limits{})
			if it := approvedApply(t, e, alice, p, id); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("after approval: %+v", it)
			}
			gen := generatedOf + "AdministratorAccess"
			if got := attachedTo(t, e); !slices.Equal(got, []string{gen}) {
				t.Fatalf("attached to ops after the fix: %q, want only %s", got, gen)
			}
			if got := readPolicy(t, e, gen); got.Document != `{"Statement":[{"Action":["s3:*","sqs:*"],"Effect":"Allow","Resource":"*","Sid":"UsedServices"}],"Version":"2012-10-17"}` {
				t.Errorf("the generated policy: %s", got.Document)
			}
			if it, err := alice.Rollback(ctx, id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			if got := attachedTo(t, e); !slices.Equal(got, []string{adminARN}) {
				t.Errorf("attached to ops after rollback: %q", got)
			}
			_, err := iam.NewFromConfig(e.SDK).GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(gen)})
			if !awsapi.IsNotFound(err) {
				t.Errorf("the generated policy after rollback: %v, want NoSuchEntity", err)
			}
			if got := readPolicy(t, e, adminARN); got.Document != admin.Document || got.Default != admin.Default {
				t.Errorf("AdministratorAccess changed: %+v", got)
			}
			e.VerifyAudit(t)
		})
	}
}

// TestReplaceManagedAttachment_refusesAPartialGrant: PowerUserAccess grants everything
// but IAM (and Organizations and Account); a role holding it that used IAM (through its
// inline policy) and s3 is offered the replacement with iam among the used services, and
// applying it is refused, naming iam, before anything is written: PowerUserAccess stays
// attached and no /warden/ policy is created ("iam:*" would grant more than before).
func TestReplaceManagedAttachment_refusesAPartialGrant(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			now := time.Now().UTC()
			w := opsWorld(powerARN, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":["iam:*","organizations:*","account:*"],"Resource":"*"}]}`,
				[]cloudsim.InlinePolicy{{Name: "list-roles", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"iam:ListRoles","Resource":"*"}]}`}},
				cloudsim.AccessRecord{Service: "iam", Action: "iam:ListRoles", At: now.AddDate(0, 0, -4), Region: "us-east-1"})
			e := remediatetest.Start(t, dsn(t), w, gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
				remediatetest.Options{Usage: true})
			p := planOne(t, e, "aws.iam.replace_managed_attachment")
			a := p.Actions[0]
			if a.Part != "attachment/PowerUserAccess" {
				t.Fatalf("plan: %+v", a)
			}
			used, _ := json.Marshal(a.Params["used_services"])
			if string(used) != `["iam","s3"]` {
				t.Fatalf("the finding's used services: %s, want iam and s3", used)
			}
			alice := e.Machine("alice", remediate.Limits{})
			it := approvedApply(t, e, alice, p, a.ID)
			if it.State != remediate.StateFailed || !strings.Contains(it.Outcome, "does not grant every action of iam") {
				t.Fatalf("after approval: %+v, want refused naming iam", it)
			}
			if got := attachedTo(t, e); !slices.Equal(got, []string{powerARN}) {
				t.Errorf("attached to ops after the refusal: %q", got)
			}
			if got := wardenPolicies(t, e); len(got) != 0 {
				t.Errorf("policies created by a refused fix: %q", got)
			}
			if n := e.Sim.WriteCount(); n != 0 {
				t.Errorf("a refused fix made %d writes", n)
			}
			e.VerifyAudit(t)
		})
	}
}

// TestRightsizeManagedPolicy_rollbackKeepsVersionsItDidNotCreate: an older version of
// the policy already holds the narrowed document (someone narrowed it once, then widened
// it again). Rollback deletes the version the fix created, and that one only: the older
// version is the customer's, and nothing would restore it.
func TestRightsizeManagedPolicy_rollbackKeepsVersionsItDidNotCreate(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			old := time.Now().UTC().Truncate(time.Second).AddDate(-2, 0, 0)
			versions := []cloudsim.PolicyVersion{{ID: "v1", Created: old, Document: cloudsim.Doc(narrowedDoc)},
				{ID: "v2", Created: old.AddDate(0, 0, 1), Document: usedDoc}}
			e := remediatetest.Start(t, dsn(t), sharedWorld(versions...), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true},
				remediatetest.Options{Usage: true})
			before := readPolicy(t, e, sharedARN)
			p := planOne(t, e, "aws.iam.rightsize_managed_policy")
			id := p.Actions[0].ID
			alice := e.Machine("alice", remediate.Limits{})
			if it := approvedApply(t, e, alice, p, id); it.State != remediate.StateVerified {
				t.Fatalf("after approval: %+v", it)
			}
			after := readPolicy(t, e, sharedARN)
			if after.Default == "v1" || after.Default == "v2" || after.Document != narrowedDoc || len(after.Versions) != 3 {
				t.Fatalf("after the fix: %+v", after)
			}
			if it, err := alice.Rollback(ctx, id); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}
			back := readPolicy(t, e, sharedARN)
			if back.Default != "v2" || len(back.Versions) != 2 || back.Versions["v1"] != before.Versions["v1"] {
				t.Errorf("after rollback: %+v\nwant %+v", back, before)
			}
			e.VerifyAudit(t)
		})
	}
}
