package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// A rotation killed (SIGKILL) right after it asked for the new key resumes at the right
// step: the next apply finds the key the killed process created — adopted if its secret
// was stored, deleted and created again if not — and the user ends with exactly two
// keys, the new one in Secrets Manager and working through STS.
func TestRotate_sigkillMidStepResumes(t *testing.T) {
	created := time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	used := time.Now().Add(-time.Hour)
	w := &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"us-east-1"},
		Users: []*cloudsim.User{{Name: "deploy", Created: created, AccessKeys: []*cloudsim.AccessKey{
			{ID: "AKIA111111DEPLOY0001", Created: created, LastUsed: &used, LastUsedService: "s3", LastUsedRegion: "us-east-1"}}}}}}}}
	cr := startChildRun(t, w, "gates:\n  auto: [low, medium, high]\n")
	sim, db := cr.sim, cr.db
	p := cr.plan(t)
	var id string
	for _, a := range p.Actions {
		if a.Remediator == "aws.iam.rotate_access_key" {
			id = a.ID
		}
	}
	if id == "" {
		t.Fatalf("the plan has no rotation: %+v", p.Actions)
	}

	// The kill lands after the new key is created and before its secret is stored:
	// the killed process held the only copy of the key's secret. The store call it had
	// started is slow, and dies with it.
	child := cr.warden("apply", cr.planFile, "--confirm")
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	sim.OnNextCall("secretsmanager:CreateSecret", func() {
		sim.SetLatency(200 * time.Millisecond)
		_ = child.Process.Kill()
	})
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	werr := child.Wait()
	if werr == nil {
		t.Fatalf("apply was not killed:\n%s", out.String())
	}
	time.Sleep(300 * time.Millisecond) // the simulator ends the call the client left
	sim.SetLatency(0)
	orphan := deployKeys(sim)
	if len(orphan) != 2 {
		t.Fatalf("keys after the kill: %v, want the old one and the new one nobody knows", orphan)
	}

	again, err := cr.warden("apply", cr.planFile, "--confirm", "--format", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("apply after the kill: %v\n%s", err, again)
	}
	keys := deployKeys(sim)
	if len(keys) != 2 {
		t.Fatalf("keys after the resumed rotation: %v, want the old one and exactly one new one", keys)
	}
	if slices.Equal(keys, orphan) {
		t.Errorf("keys %v: the key whose secret was lost is still there", keys)
	}
	if creates, deletes := sim.Writes()["iam:CreateAccessKey"], sim.Writes()["iam:DeleteAccessKey"]; creates != 2 || deletes != 1 {
		t.Errorf("%d keys created and %d deleted: want the lost one deleted and one created again", creates, deletes)
	}

	ctx := context.Background()
	sdk := simtest.AWSConfig(cr.url)
	sec, err := secretsmanager.NewFromConfig(sdk).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("warden/iam/111111111111/deploy")})
	if err != nil {
		t.Fatalf("the new key's secret: %v", err)
	}
	var v struct{ AccessKeyId, SecretAccessKey string }
	if err := json.Unmarshal([]byte(aws.ToString(sec.SecretString)), &v); err != nil {
		t.Fatal(err)
	}
	keyed := sdk.Copy()
	keyed.Credentials = credentials.NewStaticCredentialsProvider(v.AccessKeyId, v.SecretAccessKey, "")
	who, err := sts.NewFromConfig(keyed).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || !strings.HasSuffix(aws.ToString(who.Arn), ":user/deploy") {
		t.Fatalf("GetCallerIdentity with the handed-over key: %v %v", who, err)
	}
	if strings.Contains(string(again), v.SecretAccessKey) || strings.Contains(out.String(), v.SecretAccessKey) {
		t.Error("warden printed the new key's secret")
	}
	for _, f := range []string{db, db + "-wal"} {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), v.SecretAccessKey) {
			t.Errorf("the new key's secret is in warden's database (%s)", filepath.Base(f))
		}
	}

	st, err := store.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := remediate.New(remediate.Options{Store: st, Log: audit.New(st, audit.Options{})}).Action(ctx, id)
	if err != nil || rec == nil {
		t.Fatal(err)
	}
	if rec.State != remediate.StateInProgress || rec.Progress == nil || rec.Progress.Step != "stored" {
		t.Fatalf("rotation after the resume: %s %+v (%s)", rec.State, rec.Progress, rec.Detail)
	}
}

// deployKeys are the ids of the access keys of the world's one user, in the simulator now.
func deployKeys(sim *cloudsim.Sim) []string {
	var ids []string
	sim.Do(func(w *cloudsim.World) {
		for _, k := range w.AWS.Accounts[0].Users[0].AccessKeys {
			ids = append(ids, k.ID)
		}
	})
	return ids
}
