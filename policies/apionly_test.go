package policies_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// TestAPIOnlyUserWithoutMFA_judgedByItsKeys: a user with no console password and no MFA
// device who calls AWS with an old active access key is reported for the key (its age),
// not for MFA: no MFA device guards a request signed with a key (issue 32, class 7; the
// decision is in docs/coverage.md's notes). With a console password the same user is
// reported for MFA too.
func TestAPIOnlyUserWithoutMFA_judgedByItsKeys(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	user := func(password bool) snapshot.Resource {
		return snapshot.Resource{
			UID: "arn:aws:iam::111111111111:user/etl-bot", Type: "aws.iam.user", Name: "etl-bot",
			Account: "111111111111", Region: "global", Scope: "aws/111111111111/iam",
			Attributes: map[string]any{"created": "2024-01-10T09:00:00Z", "password_enabled": password, "password_last_used": "2026-11-28T08:00:00Z", "mfa_active": false, "mfa_devices": []any{},
				"access_keys": []any{map[string]any{"id": "AKIAETLBOT000000001", "status": "Active", "created": "2025-01-10T09:00:00Z", "last_used": "2026-11-29T03:00:00Z"}}},
		}
	}
	key := snapshot.Resource{
		UID: "arn:aws:iam::111111111111:user/etl-bot/accesskey/AKIAETLBOT000000001", Type: "aws.iam.access_key",
		Account: "111111111111", Region: "global", Scope: "aws/111111111111/iam",
		Attributes: map[string]any{"access_key_id": "AKIAETLBOT000000001", "user_name": "etl-bot", "status": "Active",
			"created": "2025-01-10T09:00:00Z", "last_used": "2026-11-29T03:00:00Z"},
	}
	mfaPolicies := []string{"WARDEN-AWS-IAM-010", "WARDEN-AWS-IAM-030"}
	for _, tc := range []struct {
		password bool
		want     []string
	}{
		{false, []string{"WARDEN-AWS-IAM-008"}},
		{true, []string{"WARDEN-AWS-IAM-008", "WARDEN-AWS-IAM-010", "WARDEN-AWS-IAM-030"}},
	} {
		res, err := e.Evaluate(ctx, snapshot.Header{}, now, []snapshot.Resource{normalized(t, user(tc.password)), normalized(t, key)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			if !slices.Contains(got, f.Policy) {
				got = append(got, f.Policy)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("password %v: %v fire, want %v (MFA policies %v only with a password)", tc.password, got, tc.want, mfaPolicies)
		}
	}
}
