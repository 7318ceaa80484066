package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/usage/usagetest"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/snapshot"
)

const (
	appPolicyARN = "arn:aws:iam::" + acct + ":policy/app-policy"
	powerARN     = "arn:aws:iam::aws:policy/PowerUserAccess"
	bobARN       = "arn:aws:iam::" + acct + ":user/bob"
	carolARN     = "arn:aws:iam::" + acct + ":user/carol"
	bobGenerated = "arn:aws:iam::" + acct + ":policy/warden/warden-bob-AdministratorAccess"
	// powerDoc is PowerUserAccess as AWS writes it: everything but IAM, Organizations
	// and Account, and a few IAM actions back.
	powerDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","NotAction":["iam:*","organizations:*","account:*"],"Resource":"*"},{"Effect":"Allow","Action":["iam:CreateServiceLinkedRole","iam:DeleteServiceLinkedRole","iam:ListRoles","organizations:DescribeOrganization","account:ListRegions"],"Resource":"*"}]}`
	// appNarrowed is appDoc without what role app did not use (kms, lambda).
	appNarrowed = `{"Statement":[{"Action":["s3:ListBucket"],"Effect":"Allow","Resource":"*","Sid":"App"},{"Action":"kms:*","Effect":"Deny","Resource":"arn:aws:kms:*:*:key/secret"}],"Version":"2012-10-17"}`
)

// oldDoc is the document of an older version i of app-policy.
func oldDoc(i int) string {
	return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Sid":"Old%d","Effect":"Allow","Action":"s3:ListBucket","Resource":"*"}]}`, i)
}

// managedWorld is world() with app-policy, a customer-managed policy attached to role
// app, holding n versions, appDoc the default one (the others oldDoc); user bob holding
// AdministratorAccess who used s3 and sqs lately and kms 300 days ago; user carol holding
// PowerUserAccess who used iam and s3.
func managedWorld(n int, def string) func() *cloudsim.World {
	return func() *cloudsim.World {
		w := world()
		a := w.AWS.Accounts[0]
		now := time.Now().UTC().Truncate(time.Second)
		used := func(svc string, daysAgo int) cloudsim.AccessRecord {
			return cloudsim.AccessRecord{Service: svc, At: now.AddDate(0, 0, -daysAgo), Region: "us-east-1"}
		}
		a.Users = append(a.Users,
			&cloudsim.User{Name: "bob", Created: t0, AttachedPolicies: []string{adminARN},
				LastAccessed: []cloudsim.AccessRecord{used("s3", 2), used("sqs", 10), used("kms", 300)}},
			&cloudsim.User{Name: "carol", Created: t0, AttachedPolicies: []string{powerARN},
				LastAccessed: []cloudsim.AccessRecord{used("iam", 2), used("s3", 3)}})
		a.Roles = append(a.Roles, &cloudsim.Role{Name: "app", Created: t0, AssumeRolePolicy: openTrust, AttachedPolicies: []string{appPolicyARN}})
		p := &cloudsim.Policy{Name: "app-policy", Created: t0, DefaultVersion: def}
		for i := 1; i <= n; i++ {
			id := fmt.Sprintf("v%d", i)
			d := cloudsim.Doc(oldDoc(i))
			if id == def {
				d = appDoc
			}
			p.Versions = append(p.Versions, cloudsim.PolicyVersion{ID: id, Document: d, Created: t0.Add(time.Duration(i) * time.Hour)})
		}
		a.Policies = append(a.Policies, p, &cloudsim.Policy{Name: "PowerUserAccess", AWSManaged: true, Document: powerDoc, Created: t0})
		return w
	}
}

// appPolicy is app-policy as the collector writes it, with its usage aggregated over
// role app: s3:ListBucket used, kms never, lambda 300 days before the data's date.
func appPolicy(t *testing.T, version, document string) snapshot.Resource {
	t.Helper()
	u := usagetest.Attr(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), "s3=2026-11-29", "s3:ListBucket=2026-11-29", "kms=", "lambda=2026-02-04")
	u["principals"] = []any{map[string]any{"arn": "arn:aws:iam::" + acct + ":role/app", "type": "aws.iam.role", "created": t0.Format(time.RFC3339)}}
	var d map[string]any
	if err := json.Unmarshal([]byte(document), &d); err != nil {
		t.Fatal(err)
	}
	return snapshot.Resource{UID: appPolicyARN, Type: "aws.iam.policy", Name: "app-policy", Account: acct, Attributes: map[string]any{
		"document": d, "default_version_id": version, "aws_managed": false,
		"attached_to": map[string]any{"users": []any{}, "groups": []any{}, "roles": []any{"app"}}, "usage": u}}
}

// policyState reads a managed policy back through the SDK: its default version and the
// document of each version.
func policyState(t *testing.T, e *env, arn string) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	p, err := e.iam().GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: &arn})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.iam().ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: &arn})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, v := range vs.Versions {
		out, err := e.iam().GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: &arn, VersionId: v.VersionId})
		if err != nil {
			t.Fatal(err)
		}
		d, err := url.QueryUnescape(aws.ToString(out.PolicyVersion.Document))
		if err != nil {
			t.Fatal(err)
		}
		docs[aws.ToString(v.VersionId)] = d
	}
	return aws.ToString(p.Policy.DefaultVersionId), docs
}

// oneTarget is the one target rem finds on res.
func oneTarget(t *testing.T, rem remediators.Remediator, res snapshot.Resource, params map[string]any, part string) remediators.Action {
	t.Helper()
	ts, err := rem.Targets(res, params)
	if err != nil {
		t.Fatalf("Targets: %v", err)
	}
	if len(ts) != 1 || ts[0].Part != part {
		t.Fatalf("Targets = %+v, want one target %s", ts, part)
	}
	return action(rem, res, params, ts[0])
}

// runSteps runs a multi-step fix's steps from p until it is done, as the machine does.
func runSteps(t *testing.T, st remediators.Stepper, a remediators.Action, p remediators.Progress) remediators.Progress {
	t.Helper()
	for i := 0; !p.Done; i++ {
		if i == 5 {
			t.Fatalf("not done after 5 steps: %+v", p)
		}
		next, err := st.Step(context.Background(), a, p, time.Now())
		if err != nil {
			t.Fatalf("step after %q: %v", p.Step, err)
		}
		p = next
	}
	return p
}

// record is the progress data of aws.iam.rightsize_managed_policy.
type record struct {
	Pruned *struct {
		VersionID string          `json:"version_id"`
		Document  json.RawMessage `json:"document"`
	} `json:"pruned"`
	NewVersion string `json:"new_version"`
	Converged  bool   `json:"converged"`
}

func recordOf(t *testing.T, p remediators.Progress) record {
	t.Helper()
	var r record
	if err := json.Unmarshal(p.Data, &r); err != nil {
		t.Fatalf("progress data %s: %v", p.Data, err)
	}
	return r
}

func stepper(t *testing.T, e *env) remediators.Stepper {
	t.Helper()
	st, ok := remediators.Remediator(awsfix.NewRightsizeManagedPolicy(e.sessions)).(remediators.Stepper)
	if !ok {
		t.Fatal("aws.iam.rightsize_managed_policy is not a Stepper")
	}
	return st
}

// The narrowed document becomes a new default version, read back through the SDK; the
// fix found in place writes nothing; Undo restores the default version and every
// version's document, and writes nothing the second time.
func TestRightsizeManagedPolicy_lifecycle(t *testing.T) {
	ctx := context.Background()
	e := start(t, managedWorld(2, "v2")())
	st := stepper(t, e)
	params := map[string]any{"window_days": 90}
	a := oneTarget(t, st, appPolicy(t, "v2", appDoc), params, "version")
	var b map[string]any
	if err := json.Unmarshal(a.Before, &b); err != nil {
		t.Fatal(err)
	}
	if b["policy_arn"] != appPolicyARN || b["version_id"] != "v2" || fmt.Sprint(b["removed"]) != "[kms:Decrypt lambda:*]" || b["window_days"] != 90.0 ||
		mustMarshal(t, b["after"]) != appNarrowed {
		t.Errorf("before-state %s", a.Before)
	}
	def0, docs0 := policyState(t, e, appPolicyARN)

	e.sim.ResetCalls()
	p := runSteps(t, st, a, remediators.Progress{})
	if e.sim.WriteCount() == 0 {
		t.Fatal("the steps made no write call")
	}
	rec := recordOf(t, p)
	def, docs := policyState(t, e, appPolicyARN)
	if def != "v3" || rec.NewVersion != "v3" || rec.Pruned != nil || !sameJSON(t, docs["v3"], appNarrowed) || !sameJSON(t, docs["v2"], appDoc) {
		t.Errorf("after the steps: default %s, record %+v, versions %v", def, rec, docs)
	}

	e.sim.ResetCalls()
	again := runSteps(t, st, a, remediators.Progress{})
	if w := e.sim.Writes(); len(w) != 0 || !recordOf(t, again).Converged {
		t.Errorf("steps again: wrote %v, record %s; want converged without a write", w, again.Data)
	}

	if err := st.Undo(ctx, a, p); err != nil {
		t.Fatalf("Undo: %v", err)
	}
	def, docs = policyState(t, e, appPolicyARN)
	if def != def0 || !maps.Equal(docs, docs0) {
		t.Errorf("after Undo: default %s, versions %v; want %s, %v", def, docs, def0, docs0)
	}
	if back := oneTarget(t, st, appPolicy(t, def, docs[def]), params, "version"); string(back.Before) != string(a.Before) {
		t.Errorf("after Undo the part is\n%s\nwant\n%s", back.Before, a.Before)
	}
	e.sim.ResetCalls()
	if err := st.Undo(ctx, a, p); err != nil {
		t.Errorf("second Undo: %v", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("second Undo wrote %v", w)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// At AWS's five versions the first step records the oldest non-default version with its
// document, and the second deletes it before creating the narrowed default; Undo does
// not bring it back (its document is in the record).
func TestRightsizeManagedPolicy_atFiveVersionsDeletesTheOldestNonDefault(t *testing.T) {
	e := start(t, managedWorld(5, "v1")())
	st := stepper(t, e)
	a := oneTarget(t, st, appPolicy(t, "v1", appDoc), nil, "version")

	e.sim.ResetCalls()
	p, err := st.Step(context.Background(), a, remediators.Progress{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec := recordOf(t, p)
	if p.Step != "checked" || p.Done || rec.Pruned == nil || rec.Pruned.VersionID != "v2" || !sameJSON(t, string(rec.Pruned.Document), oldDoc(2)) {
		t.Fatalf("first step: %+v (%s), want v2 and its document recorded", p, p.Data)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("the first step wrote %v: the deletion must be recorded before it is made", w)
	}
	p = runSteps(t, st, a, p)
	def, docs := policyState(t, e, appPolicyARN)
	if _, ok := docs["v2"]; ok || def != "v6" || len(docs) != 5 || !sameJSON(t, docs["v6"], appNarrowed) || !sameJSON(t, docs["v1"], appDoc) {
		t.Errorf("after the steps: default %s, versions %v; want v2 deleted, v6 the narrowed default", def, slices.Sorted(maps.Keys(docs)))
	}
	if r := recordOf(t, p); r.Pruned == nil || r.Pruned.VersionID != "v2" || r.NewVersion != "v6" {
		t.Errorf("final record %s", p.Data)
	}
	if err := st.Undo(context.Background(), a, p); err != nil {
		t.Fatal(err)
	}
	def, docs = policyState(t, e, appPolicyARN)
	if got := slices.Sorted(maps.Keys(docs)); def != "v1" || !slices.Equal(got, []string{"v1", "v3", "v4", "v5"}) {
		t.Errorf("after Undo: default %s, versions %v", def, got)
	}
}

// Another default set since the plan stops the fix before any write.
func TestRightsizeManagedPolicy_refusesAPolicyChangedSinceThePlan(t *testing.T) {
	e := start(t, managedWorld(2, "v2")())
	st := stepper(t, e)
	a := oneTarget(t, st, appPolicy(t, "v2", appDoc), nil, "version")
	if _, err := e.iam().SetDefaultPolicyVersion(context.Background(), &iam.SetDefaultPolicyVersionInput{PolicyArn: aws.String(appPolicyARN), VersionId: aws.String("v1")}); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	_, err := st.Step(context.Background(), a, remediators.Progress{}, time.Now())
	if err == nil || !strings.Contains(err.Error(), "changed since the plan") {
		t.Errorf("Step: %v, want changed since the plan", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("wrote %v", w)
	}
}

// A second step interrupted after it created the version finds it and is done.
func TestRightsizeManagedPolicy_resumesAfterTheVersionWasCreated(t *testing.T) {
	e := start(t, managedWorld(2, "v2")())
	st := stepper(t, e)
	a := oneTarget(t, st, appPolicy(t, "v2", appDoc), nil, "version")
	p, err := st.Step(context.Background(), a, remediators.Progress{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam().CreatePolicyVersion(context.Background(), &iam.CreatePolicyVersionInput{PolicyArn: aws.String(appPolicyARN),
		PolicyDocument: aws.String(appNarrowed), SetAsDefault: true}); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	p = runSteps(t, st, a, p)
	if w := e.sim.Writes(); len(w) != 0 || recordOf(t, p).NewVersion != "v3" {
		t.Errorf("resumed step wrote %v, record %s", w, p.Data)
	}
}

// What the plan cannot rest on is not applicable, with the reason; nothing unused is no
// target.
func TestRightsizeManagedPolicy_targets(t *testing.T) {
	rem := awsfix.NewRightsizeManagedPolicy(nil)
	tests := []struct {
		name   string
		change func(r snapshot.Resource)
		want   string // "" : no target, no error
	}{
		{"AWS-managed", func(r snapshot.Resource) { r.Attributes["aws_managed"] = true }, "AWS-managed"},
		{"usage incomplete", func(r snapshot.Resource) {
			u := r.Attributes["usage"].(map[string]any)
			u["complete"], u["error"] = false, "GetServiceLastAccessedDetails failed for role app"
		}, "failed for role app"},
		{"no usage", func(r snapshot.Resource) { delete(r.Attributes, "usage") }, "no usage data"},
		{"a principal younger than the window", func(r snapshot.Resource) {
			p := r.Attributes["usage"].(map[string]any)["principals"].([]any)[0].(map[string]any)
			p["created"] = "2026-11-20T00:00:00Z"
		}, "role app was created on 2026-11-20"},
		{"attached to a principal the usage does not cover", func(r snapshot.Resource) {
			r.Attributes["attached_to"].(map[string]any)["users"] = []any{"zed"}
		}, "does not cover user zed"},
		{"every grant unused", func(r snapshot.Resource) {
			r.Attributes["document"] = map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}}}
		}, "cannot be empty"},
		{"nothing unused", func(r snapshot.Resource) {
			r.Attributes["document"] = map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}}}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := appPolicy(t, "v2", appDoc)
			tt.change(res)
			ts, err := rem.Targets(res, nil)
			if len(ts) != 0 {
				t.Errorf("targets %+v, want none", ts)
			}
			if tt.want == "" {
				if err != nil {
					t.Errorf("Targets: %v", err)
				}
				return
			}
			if !errors.Is(err, remediators.ErrNotApplicable) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Targets: %v, want not applicable saying %q", err, tt.want)
			}
		})
	}
}

// A narrowing someone else made between the plan and the first step: the steps write
// nothing, and Undo makes the planned default the default again without deleting the
// version it did not create.
func TestRightsizeManagedPolicy_undoAfterConvergedKeepsTheirVersion(t *testing.T) {
	ctx := context.Background()
	e := start(t, managedWorld(2, "v2")())
	st := stepper(t, e)
	a := oneTarget(t, st, appPolicy(t, "v2", appDoc), map[string]any{"window_days": 90}, "version")
	if _, err := e.iam().CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String(appPolicyARN),
		PolicyDocument: aws.String(appNarrowed), SetAsDefault: true}); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	p := runSteps(t, st, a, remediators.Progress{})
	if w := e.sim.Writes(); len(w) != 0 || !recordOf(t, p).Converged {
		t.Fatalf("steps: wrote %v, record %s; want converged without a write", w, p.Data)
	}
	if err := st.Undo(ctx, a, p); err != nil {
		t.Fatalf("Undo: %v", err)
	}
	def, docs := policyState(t, e, appPolicyARN)
	if def != "v2" || !sameJSON(t, docs["v3"], appNarrowed) {
		t.Errorf("after Undo: default %s, versions %v; want v2 the default and their v3 kept", def, docs)
	}
}
