package remediate_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/store/storetest"
)

const oldKey = "AKIA111111ALICE0001"

// clock is a test's settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rotation is one rotation's environment: the old key, the clock, the machine.
type rotation struct {
	e     *remediatetest.Env
	clk   *clock
	m     *remediate.Machine
	p     *remediate.Plan
	id    string
	iam   *iam.Client
	sm    *secretsmanager.Client
	grace time.Duration
}

func startRotation(t *testing.T, dsn string) *rotation {
	t.Helper()
	cfg := awsfix.RotationConfig{Grace: 7 * 24 * time.Hour, DeleteAfter: 3 * 24 * time.Hour, Recheck: 24 * time.Hour}
	e := remediatetest.Start(t, dsn, remediatetest.World(0), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium, findings.RiskHigh}},
		remediatetest.Options{Deps: builtin.Deps{Rotation: cfg}})
	clk := &clock{t: time.Now().UTC()}
	e.SetNow(clk.Now)
	// An old key in use: rotated, not deactivated (deactivation supersedes rotation of
	// an unused key).
	inUse := clk.Now().Add(-24 * time.Hour)
	e.Sim.Do(func(w *cloudsim.World) { w.AWS.Accounts[0].Users[0].AccessKeys[0].LastUsed = &inUse })
	r := &rotation{e: e, clk: clk, m: e.Machine("alice", remediate.Limits{}), iam: iam.NewFromConfig(e.SDK),
		sm: secretsmanager.NewFromConfig(e.SDK), grace: cfg.Grace}
	r.p = remediatetest.Only(e.Plan(t, "alice"), "aws.iam.rotate_access_key", 1)
	if len(r.p.Actions) != 1 || r.p.Actions[0].Part != oldKey {
		t.Fatalf("plan: %+v, want one rotation of %s", r.p.Actions, oldKey)
	}
	r.id = r.p.Actions[0].ID
	return r
}

func (r *rotation) record(t *testing.T) *remediate.Record {
	t.Helper()
	rec, err := r.m.Action(context.Background(), r.id)
	if err != nil || rec == nil {
		t.Fatalf("action %s: %v", r.id, err)
	}
	return rec
}

// keys lists alice's keys and their status, through the IAM SDK.
func (r *rotation) keys(t *testing.T) map[string]string {
	t.Helper()
	out, err := r.iam.ListAccessKeys(context.Background(), &iam.ListAccessKeysInput{UserName: aws.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, k := range out.AccessKeyMetadata {
		m[aws.ToString(k.AccessKeyId)] = string(k.Status)
	}
	return m
}

// handedOver reads the secret through the Secrets Manager SDK and authenticates with
// the key it holds through STS: the new key must work.
func (r *rotation) handedOver(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	out, err := r.sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("warden/iam/" + remediatetest.Account + "/alice")})
	if err != nil {
		t.Fatalf("read the handed-over secret: %v", err)
	}
	var v struct{ AccessKeyId, SecretAccessKey, UserName string }
	if err := json.Unmarshal([]byte(aws.ToString(out.SecretString)), &v); err != nil || v.AccessKeyId == "" || v.SecretAccessKey == "" || v.UserName != "alice" {
		t.Fatalf("secret holds %q (%v)", aws.ToString(out.SecretString), err)
	}
	id, err := r.callerIdentity(v.AccessKeyId, v.SecretAccessKey)
	if err != nil || !strings.HasSuffix(id, ":user/alice") {
		t.Fatalf("GetCallerIdentity with the new key: %q, %v", id, err)
	}
	return v.AccessKeyId
}

func (r *rotation) callerIdentity(key, secret string) (string, error) {
	cfg := r.e.SDK.Copy()
	cfg.Credentials = credentials.NewStaticCredentialsProvider(key, secret, "")
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.Arn), nil
}

func (r *rotation) apply(t *testing.T) *remediate.Result {
	t.Helper()
	res, err := r.m.ApplyDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A rotation end to end on both databases: the new key is created, stored in Secrets
// Manager and works through STS; after the grace period (the test's clock) the old key
// is deactivated and no longer authenticates; after the deletion period it is deleted
// and the fix is verified by observing again.
func TestRotate_endToEnd(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r := startRotation(t, dsn(t))
			res, err := r.m.Apply(ctx, r.p, true)
			if err != nil {
				t.Fatal(err)
			}
			it := remediatetest.ItemOf(t, res, r.id)
			if it.State != remediate.StateInProgress || !strings.Contains(it.Outcome, "step stored done") {
				t.Fatalf("after apply: %+v", it)
			}
			newKey := r.handedOver(t)
			if k := r.keys(t); len(k) != 2 || k[oldKey] != "Active" || k[newKey] != "Active" {
				t.Fatalf("keys after the hand-over: %v", k)
			}
			// Not due yet: nothing moves.
			r.clk.Advance(r.grace - time.Hour)
			r.apply(t)
			if k := r.keys(t); k[oldKey] != "Active" {
				t.Fatalf("the old key was deactivated before the grace period ended: %v", k)
			}
			r.clk.Advance(2 * time.Hour)
			r.apply(t)
			if rec := r.record(t); rec.State != remediate.StateInProgress || rec.Progress.Step != "deactivated" {
				t.Fatalf("after the grace period: %s, %+v", rec.State, rec.Progress)
			}
			if k := r.keys(t); k[oldKey] != "Inactive" || k[newKey] != "Active" {
				t.Fatalf("keys after the grace period: %v", k)
			}
			if _, err := r.callerIdentity(oldKey, "unknown"); err == nil || !strings.Contains(err.Error(), "InvalidClientTokenId") {
				t.Errorf("the deactivated key still authenticates: %v", err)
			}
			r.clk.Advance(3*24*time.Hour + time.Minute)
			r.apply(t)
			if rec := r.record(t); rec.State != remediate.StateVerified {
				t.Fatalf("after the deletion period: %s (%s)", rec.State, rec.Detail)
			}
			if k := r.keys(t); len(k) != 1 || k[newKey] != "Active" {
				t.Fatalf("keys at the end: %v", k)
			}
			r.handedOver(t)
			var steps []string
			all, err := r.m.Actions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range all {
				if a.ID != r.id {
					continue
				}
				for _, h := range a.History {
					steps = append(steps, string(h.State)+":"+h.Detail)
				}
			}
			if !slices.ContainsFunc(steps, func(s string) bool { return strings.Contains(s, "step creating done") }) {
				t.Errorf("history %v lacks the steps", steps)
			}
			r.e.VerifyAudit(t)
		})
	}
}

// Rolled back before the deactivation, the new key and its secret are gone and the old
// key is as it was; rolled back after it, the old key is active again.
func TestRotate_rollbackAtBothStages(t *testing.T) {
	ctx := context.Background()
	t.Run("before deactivation", func(t *testing.T) {
		r := startRotation(t, storetest.Backends(t)["sqlite"](t))
		if _, err := r.m.Apply(ctx, r.p, true); err != nil {
			t.Fatal(err)
		}
		r.handedOver(t)
		it, err := r.m.Rollback(ctx, r.id)
		if err != nil || it.State != remediate.StateRolledBack {
			t.Fatalf("rollback: %+v, %v", it, err)
		}
		if k := r.keys(t); len(k) != 1 || k[oldKey] != "Active" {
			t.Errorf("keys after rollback: %v", k)
		}
		if _, err := r.sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("warden/iam/" + remediatetest.Account + "/alice")}); err == nil {
			t.Error("the secret created for the new key is still there")
		}
	})
	t.Run("after deactivation", func(t *testing.T) {
		r := startRotation(t, storetest.Backends(t)["sqlite"](t))
		if _, err := r.m.Apply(ctx, r.p, true); err != nil {
			t.Fatal(err)
		}
		newKey := r.handedOver(t)
		r.clk.Advance(r.grace + time.Minute)
		r.apply(t)
		if k := r.keys(t); k[oldKey] != "Inactive" {
			t.Fatalf("keys: %v", k)
		}
		it, err := r.m.Rollback(ctx, r.id)
		if err != nil || it.State != remediate.StateRolledBack {
			t.Fatalf("rollback: %+v, %v", it, err)
		}
		if k := r.keys(t); k[oldKey] != "Active" || k[newKey] != "Active" {
			t.Errorf("keys after rollback: %v", k)
		}
	})
}

// An old key used after the new one was stored holds the rotation: it is not
// deactivated, the hold says why, and once the key stays unused for the recheck period
// the rotation moves on.
func TestRotate_heldWhileTheOldKeyIsUsed(t *testing.T) {
	ctx := context.Background()
	r := startRotation(t, storetest.Backends(t)["sqlite"](t))
	if _, err := r.m.Apply(ctx, r.p, true); err != nil {
		t.Fatal(err)
	}
	used := r.clk.Now().Add(time.Hour)
	r.e.Sim.Do(func(w *cloudsim.World) {
		for _, k := range w.AWS.Accounts[0].Users[0].AccessKeys {
			if k.ID == oldKey {
				k.LastUsed = &used
			}
		}
	})
	r.clk.Advance(r.grace + time.Minute)
	r.apply(t)
	rec := r.record(t)
	if rec.State != remediate.StateInProgress || rec.Progress.Hold == "" || !strings.Contains(rec.Detail, "have not moved") {
		t.Fatalf("after the grace period with the old key in use: %s, %q, %+v", rec.State, rec.Detail, rec.Progress)
	}
	if k := r.keys(t); k[oldKey] != "Active" {
		t.Fatalf("a key in use was deactivated: %v", k)
	}
	r.clk.Advance(24*time.Hour + time.Minute)
	r.apply(t)
	if k := r.keys(t); k[oldKey] != "Inactive" {
		t.Errorf("unused for the recheck period, the old key is still %s", k[oldKey])
	}
}

// A user already at two keys is refused before anything is changed, with the reason.
func TestRotate_refusesAUserWithTwoKeys(t *testing.T) {
	ctx := context.Background()
	r := startRotation(t, storetest.Backends(t)["sqlite"](t))
	if _, err := r.iam.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	res, err := r.m.Apply(ctx, r.p, true)
	if err != nil {
		t.Fatal(err)
	}
	it := remediatetest.ItemOf(t, res, r.id)
	if it.State != remediate.StateFailed || !strings.Contains(it.Outcome, "already has two access keys") {
		t.Fatalf("rotation of a user with two keys: %+v", it)
	}
	if _, err := r.sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("warden/iam/" + remediatetest.Account + "/alice")}); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("a secret was stored for a refused rotation (%v)", err)
	}
}
