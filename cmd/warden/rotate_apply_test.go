package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
)

// A rotation moves on under warden apply alone, to its end: once the old key is
// deactivated its finding is gone and a fresh plan no longer names the rotation, yet the
// next apply --confirm deletes the old key when that step is due.
func TestApplyCLI_finishesARotationItNoLongerPlans(t *testing.T) {
	const old = "AKIA111111DEPLOY0001"
	created := time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	used := time.Now().Add(-time.Hour)
	e := startSimEnv(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: cliAccount, Regions: []string{"us-east-1"},
		Users: []*cloudsim.User{{Name: "deploy", Created: created, AccessKeys: []*cloudsim.AccessKey{
			{ID: old, Created: created, LastUsed: &used, LastUsedService: "s3", LastUsedRegion: "us-east-1"}}}}}}}})
	// The rotation's waits shortened to a second each: the steps come due as the test sleeps.
	e.cfg = write(t, e.dir, "rotate.yaml", `gates:
  auto: [low, medium, high]
rotation:
  grace: 1s
  delete_after: 1s
targets:
  aws:
    regions: [us-east-1]
    endpoint: `+e.url+`
    rate_limits: {iam: 0, sts: 0, ec2: 0, acm: 0, organizations: 0}
`)
	keys := func() map[string]string {
		t.Helper()
		out, err := iam.NewFromConfig(e.sdk).ListAccessKeys(context.Background(), &iam.ListAccessKeysInput{UserName: aws.String("deploy")})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, k := range out.AccessKeyMetadata {
			m[aws.ToString(k.AccessKeyId)] = string(k.Status)
		}
		return m
	}
	rotation := func(p *remediate.Plan) string {
		for _, a := range p.Actions {
			if a.Remediator == "aws.iam.rotate_access_key" && a.Part == old {
				return a.ID
			}
		}
		return ""
	}
	apply := func(planFile string) {
		t.Helper()
		if code, out, stderr := e.warden(t, "apply", planFile, "--confirm"); code != 0 {
			t.Fatalf("apply %s --confirm: exit %d\n%s%s", planFile, code, out, stderr)
		}
	}

	planFile, p := e.plan(t)
	id := rotation(p)
	if id == "" {
		t.Fatalf("the plan has no rotation of %s: %+v", old, p.Actions)
	}
	apply(planFile) // the new key, stored
	if k := keys(); len(k) != 2 || k[old] != "Active" {
		t.Fatalf("keys after the first apply: %v, want the old key and a new one, both active", k)
	}
	time.Sleep(1500 * time.Millisecond)
	apply(planFile) // the grace period over: the old key deactivated
	if k := keys(); len(k) != 2 || k[old] != "Inactive" {
		t.Fatalf("keys after the grace period: %v, want the old key inactive", k)
	}
	if st := e.actionStates(t)[id]; st != remediate.StateInProgress {
		t.Fatalf("the rotation is %s after the deactivation, want in_progress", st)
	}

	// The old key inactive, a fresh plan no longer names the rotation.
	if err := os.Remove(planFile); err != nil {
		t.Fatal(err)
	}
	fresh, p2 := e.plan(t)
	if rotation(p2) != "" {
		t.Fatalf("the fresh plan still names the rotation: %+v", p2.Actions)
	}
	time.Sleep(1500 * time.Millisecond)
	apply(fresh)
	k := keys()
	if _, ok := k[old]; ok || len(k) != 1 {
		t.Fatalf("keys after the deletion period: %v, want only the new key (the old one deleted)", k)
	}
	if st := e.actionStates(t)[id]; st != remediate.StateVerified {
		t.Errorf("the rotation is %s at the end, want verified", st)
	}
}
