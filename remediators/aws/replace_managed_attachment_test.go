package aws_test

import (
	"context"
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

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
)

// generatedDoc reads the generated policy's default document, "" when it does not exist.
func generatedDoc(t *testing.T, e *env, arn string) string {
	t.Helper()
	p, err := e.iam().GetPolicy(context.Background(), &iam.GetPolicyInput{PolicyArn: &arn})
	if awsapi.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.iam().GetPolicyVersion(context.Background(), &iam.GetPolicyVersionInput{PolicyArn: &arn, VersionId: p.Policy.DefaultVersionId})
	if err != nil {
		t.Fatal(err)
	}
	d, err := url.QueryUnescape(aws.ToString(out.PolicyVersion.Document))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const bobUsedDoc = `{"Version":"2012-10-17","Statement":[{"Sid":"UsedServices","Effect":"Allow","Action":["s3:*","sqs:*"],"Resource":"*"}]}`

func replaceParams(used ...any) map[string]any {
	return map[string]any{"policy": adminARN, "used_services": used, "window_days": 90}
}

// AdministratorAccess of bob, who used s3 and sqs lately and kms 300 days ago, gives way
// to a policy of s3 and sqs, read back through the SDK; Rollback attaches it again and
// deletes the generated policy.
func TestReplaceManagedAttachment_lifecycle(t *testing.T) {
	lifecycle{
		fix:    func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewReplaceManagedAttachment(s) },
		uid:    bobARN,
		params: replaceParams("kms", "s3", "sqs"),
		part:   "attachment/AdministratorAccess", parts: []string{"attachment/AdministratorAccess"},
		world: managedWorld(1, "v1"), usage: true,
		fixed: func(t *testing.T, e *env) {
			if got := attached(t, e, "user", "bob"); !slices.Equal(got, []string{bobGenerated}) {
				t.Errorf("bob's policies after Apply: %v, want the generated one only", got)
			}
			if d := generatedDoc(t, e, bobGenerated); d == "" || !sameJSON(t, d, bobUsedDoc) {
				t.Errorf("generated policy: %q, want %s", d, bobUsedDoc)
			}
		},
		undone: func(t *testing.T, e *env) {
			if got := attached(t, e, "user", "bob"); !slices.Equal(got, []string{adminARN}) {
				t.Errorf("bob's policies after Rollback: %v, want AdministratorAccess only", got)
			}
			if d := generatedDoc(t, e, bobGenerated); d != "" {
				t.Errorf("the generated policy is still there: %s", d)
			}
		},
	}.run(t)
}

// A principal that used none of the policy only loses the attachment.
func TestReplaceManagedAttachment_onlyDetachesWhenNothingWasUsed(t *testing.T) {
	lifecycle{
		fix:    func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewReplaceManagedAttachment(s) },
		uid:    bobARN,
		params: replaceParams("kms"),
		part:   "attachment/AdministratorAccess", parts: []string{"attachment/AdministratorAccess"},
		world: managedWorld(1, "v1"), usage: true,
		fixed: func(t *testing.T, e *env) {
			if got := attached(t, e, "user", "bob"); len(got) != 0 {
				t.Errorf("bob's policies after Apply: %v, want none", got)
			}
			if w := e.sim.Writes(); w["iam:CreatePolicy"] != 0 {
				t.Errorf("a policy was created: %v", w)
			}
		},
		undone: func(t *testing.T, e *env) {
			if got := attached(t, e, "user", "bob"); !slices.Equal(got, []string{adminARN}) {
				t.Errorf("bob's policies after Rollback: %v", got)
			}
		},
	}.run(t)
}

// planned collects the world with usage and plans the fix on one principal.
func planned(t *testing.T, uid string, params map[string]any) (*env, remediators.Remediator, remediators.Action) {
	t.Helper()
	e := start(t, managedWorld(1, "v1")())
	e.usage = true
	rem := awsfix.NewReplaceManagedAttachment(e.sessions)
	res, ok := e.collect(t)[uid]
	if !ok {
		t.Fatalf("%s was not collected", uid)
	}
	part := "attachment/" + lastSegment(params["policy"])
	return e, rem, oneTarget(t, rem, res, params, part)
}

func lastSegment(v any) string {
	s, _ := v.(string)
	return s[strings.LastIndexByte(s, '/')+1:]
}

// PowerUserAccess does not grant IAM in full: a policy of iam:* would allow more than it.
func TestReplaceManagedAttachment_refusesAServiceNotWhollyGranted(t *testing.T) {
	e, rem, a := planned(t, carolARN, map[string]any{"policy": powerARN, "used_services": []any{"iam", "s3"}})
	e.sim.ResetCalls()
	err := rem.Apply(context.Background(), a)
	if err == nil || !strings.Contains(err.Error(), "every action of iam ") {
		t.Errorf("Apply: %v, want a refusal naming iam alone", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("wrote %v", w)
	}
	if got := attached(t, e, "user", "carol"); !slices.Equal(got, []string{powerARN}) {
		t.Errorf("carol's policies: %v", got)
	}
}

// The managed policy detached since the plan, and something else attached: plan again.
func TestReplaceManagedAttachment_refusesWhenChangedSinceThePlan(t *testing.T) {
	e, rem, a := planned(t, bobARN, replaceParams("s3", "sqs"))
	ctx := context.Background()
	if _, err := e.iam().DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: aws.String(adminARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam().AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: aws.String(powerARN)}); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	if err := rem.Apply(ctx, a); err == nil || !strings.Contains(err.Error(), "since the plan") {
		t.Errorf("Apply: %v, want changed since the plan", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("wrote %v", w)
	}
}

// A policy of the generated name with another document is not warden's to reuse.
func TestReplaceManagedAttachment_refusesAnotherPolicyOfTheGeneratedName(t *testing.T) {
	e, rem, a := planned(t, bobARN, replaceParams("s3", "sqs"))
	if _, err := e.iam().CreatePolicy(context.Background(), &iam.CreatePolicyInput{PolicyName: aws.String("warden-bob-AdministratorAccess"),
		Path: aws.String("/warden/"), PolicyDocument: aws.String(adminDoc)}); err != nil {
		t.Fatal(err)
	}
	if err := rem.Apply(context.Background(), a); err == nil || !strings.Contains(err.Error(), "another document") {
		t.Errorf("Apply: %v, want a refusal", err)
	}
	if got := attached(t, e, "user", "bob"); !slices.Equal(got, []string{adminARN}) {
		t.Errorf("bob's policies: %v", got)
	}
}

// After a crash that left the generated policy created and attached but the managed one
// still attached, Apply finishes: it detaches the managed policy, and only that.
func TestReplaceManagedAttachment_finishesAfterACrash(t *testing.T) {
	e, rem, a := planned(t, bobARN, replaceParams("s3", "sqs"))
	ctx := context.Background()
	if _, err := e.iam().CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("warden-bob-AdministratorAccess"),
		Path: aws.String("/warden/"), PolicyDocument: aws.String(bobUsedDoc)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam().AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: aws.String(bobGenerated)}); err != nil {
		t.Fatal(err)
	}
	e.sim.ResetCalls()
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if w := e.sim.Writes(); !maps.Equal(w, map[string]int{"iam:DetachUserPolicy": 1}) {
		t.Errorf("wrote %v, want the detachment alone", w)
	}
	if got := attached(t, e, "user", "bob"); !slices.Equal(got, []string{bobGenerated}) {
		t.Errorf("bob's policies: %v", got)
	}
}

// Without complete usage there is no target: the plan says why.
func TestReplaceManagedAttachment_notApplicableWithoutCompleteUsage(t *testing.T) {
	e := start(t, managedWorld(1, "v1")())
	e.usage = true
	rem := awsfix.NewReplaceManagedAttachment(nil)
	res := e.collect(t)[bobARN]
	params := replaceParams("s3", "sqs")
	if ts, err := rem.Targets(res, params); err != nil || len(ts) != 1 {
		t.Fatalf("with complete usage: %v, %v", ts, err)
	}
	// Usage shaped as IAM Access Analyzer's (only what is unused): the services used,
	// which the replacement grants, are unknown.
	u := res.Attributes["usage"].(map[string]any)
	asOf, _ := time.Parse(time.RFC3339, u["as_of"].(string))
	u["listed"], u["window_days"], u["tracked_since"] = "unused", 90, asOf.AddDate(0, 0, -90).Format(time.RFC3339)
	if ts, err := rem.Targets(res, params); len(ts) != 0 || !errors.Is(err, remediators.ErrNotApplicable) || !strings.Contains(err.Error(), "IAM Access Analyzer") {
		t.Errorf("analyzer usage: %v, %v; want not applicable", ts, err)
	}
	u["listed"] = "granted"
	res.Attributes["usage"].(map[string]any)["complete"] = false
	ts, err := rem.Targets(res, params)
	if len(ts) != 0 || !errors.Is(err, remediators.ErrNotApplicable) {
		t.Errorf("incomplete usage: %v, %v; want not applicable", ts, err)
	}
	delete(res.Attributes, "usage")
	if ts, err := rem.Targets(res, params); len(ts) != 0 || !errors.Is(err, remediators.ErrNotApplicable) {
		t.Errorf("no usage: %v, %v; want not applicable", ts, err)
	}
	if ts, err := rem.Targets(res, map[string]any{"policy": powerARN, "used_services": []any{"s3"}}); len(ts) != 0 || err != nil {
		t.Errorf("a policy not attached: %v, %v; want no target", ts, err)
	}
}

// attachFillers attaches AWS-managed policies to bob until he holds IAM's ten.
func attachFillers(t *testing.T, e *env) {
	t.Helper()
	for i := len(attached(t, e, "user", "bob")); i < 10; i++ {
		arn := fmt.Sprintf("arn:aws:iam::aws:policy/Filler%d", i)
		if _, err := e.iam().AttachUserPolicy(context.Background(), &iam.AttachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: &arn}); err != nil {
			t.Fatal(err)
		}
	}
}

// At IAM's quota of ten attached policies, Apply refuses rather than detach first; a
// Rollback makes room with the generated policy, then attaches the managed one.
func TestReplaceManagedAttachment_atTheAttachmentQuota(t *testing.T) {
	ctx := context.Background()
	e, rem, a := planned(t, bobARN, replaceParams("s3", "sqs"))
	attachFillers(t, e)
	if err := rem.Apply(ctx, a); err == nil || !strings.Contains(err.Error(), "quota") {
		t.Errorf("Apply at the quota: %v, want a refusal", err)
	}
	if got := attached(t, e, "user", "bob"); !slices.Contains(got, adminARN) || slices.Contains(got, bobGenerated) || generatedDoc(t, e, bobGenerated) != "" {
		t.Errorf("after the refusal: bob's policies %v, generated policy %q; want AdministratorAccess kept, nothing generated left", got, generatedDoc(t, e, bobGenerated))
	}

	e, rem, a = planned(t, bobARN, replaceParams("s3", "sqs"))
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatal(err)
	}
	attachFillers(t, e)
	if err := rem.Rollback(ctx, a); err != nil {
		t.Fatalf("Rollback at the quota: %v", err)
	}
	if got := attached(t, e, "user", "bob"); !slices.Contains(got, adminARN) || slices.Contains(got, bobGenerated) || generatedDoc(t, e, bobGenerated) != "" {
		t.Errorf("bob's policies after Rollback: %v, generated policy %q", got, generatedDoc(t, e, bobGenerated))
	}
}
