package aws_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/snapshot"
)

func TestTargets_findTheSmallestPartOrRefuse(t *testing.T) {
	sg := func(def bool) snapshot.Resource {
		return snapshot.Resource{UID: sgARN(webSG), Type: "aws.ec2.security_group", Account: acct, Region: "us-east-1",
			Attributes: map[string]any{"group_id": webSG, "is_default": def,
				"ingress": []any{map[string]any{"id": sgARN(webSG) + "#ingress/tcp/22-22/0.0.0.0/0", "direction": "ingress", "protocol": "tcp",
					"from_port": 22.0, "to_port": 22.0, "cidr": "0.0.0.0/0", "source_group": "", "description": ""}},
				"egress": []any{map[string]any{"id": sgARN(webSG) + "#egress/-1/-1--1/0.0.0.0/0", "direction": "egress", "protocol": "-1",
					"from_port": -1.0, "to_port": -1.0, "cidr": "0.0.0.0/0", "source_group": "", "description": ""}}}}
	}
	user := snapshot.Resource{UID: "arn:aws:iam::" + acct + ":user/alice", Type: "aws.iam.user", Name: "alice", Account: acct,
		Attributes: map[string]any{"password_enabled": false,
			"inline_policies": []any{map[string]any{"name": "admin", "document": map[string]any{"Statement": []any{}}}}}}
	role := func(stmts ...any) snapshot.Resource {
		return snapshot.Resource{UID: "arn:aws:iam::" + acct + ":role/r", Type: "aws.iam.role", Name: "r", Account: acct,
			Attributes: map[string]any{"assume_role_policy": map[string]any{"Version": "2012-10-17", "Statement": stmts}}}
	}
	key := snapshot.Resource{UID: "arn:aws:iam::" + acct + ":user/ops/bob/accesskey/AKIAX", Type: "aws.iam.access_key", Account: acct,
		Attributes: map[string]any{"status": "Inactive"}}
	tests := []struct {
		name    string
		rem     remediators.Remediator
		res     snapshot.Resource
		params  map[string]any
		parts   []string
		wantErr string
	}{
		{"revoke_ingress finds the rule", awsfix.NewRevokeIngress(nil), sg(false), map[string]any{"target": sgARN(webSG) + "#ingress/tcp/22-22/0.0.0.0/0"},
			[]string{sgARN(webSG) + "#ingress/tcp/22-22/0.0.0.0/0"}, ""},
		{"revoke_ingress: a rule gone is no target", awsfix.NewRevokeIngress(nil), sg(false), map[string]any{"target": sgARN(webSG) + "#ingress/tcp/3389-3389/0.0.0.0/0"}, nil, ""},
		{"revoke_ingress refuses an egress rule", awsfix.NewRevokeIngress(nil), sg(false), map[string]any{"target": sgARN(webSG) + "#egress/-1/-1--1/0.0.0.0/0"}, nil, "egress rule"},
		{"revoke_ingress refuses another group's rule", awsfix.NewRevokeIngress(nil), sg(false), map[string]any{"target": sgARN(defaultSG) + "#ingress/tcp/22-22/0.0.0.0/0"}, nil, "not one of its rules"},
		{"revoke_ingress needs target", awsfix.NewRevokeIngress(nil), sg(false), nil, nil, "target is required"},
		{"revoke_default_sg_rules refuses a group that is not default", awsfix.NewRevokeDefaultSGRules(nil), sg(false), map[string]any{"target": sgARN(webSG) + "#egress/-1/-1--1/0.0.0.0/0"}, nil, "not a VPC's default group"},
		{"revoke_default_sg_rules takes egress rules", awsfix.NewRevokeDefaultSGRules(nil), sg(true), map[string]any{"target": sgARN(webSG) + "#egress/-1/-1--1/0.0.0.0/0"},
			[]string{sgARN(webSG) + "#egress/-1/-1--1/0.0.0.0/0"}, ""},
		{"detach_policy on a user needs inline_policy", awsfix.NewDetachPolicy(nil), user, nil, nil, "needs inline_policy"},
		{"detach_policy on a user refuses attachment", awsfix.NewDetachPolicy(nil), user, map[string]any{"attachment": "user/alice"}, nil, "use inline_policy"},
		{"detach_policy: attachments not read is not applicable", awsfix.NewDetachPolicy(nil),
			snapshot.Resource{UID: adminARN, Type: "aws.iam.policy", Attributes: map[string]any{"attachment_count": 2.0}}, nil, nil, "attachments were not read"},
		{"detach_policy: an inline policy gone is no target", awsfix.NewDetachPolicy(nil), user, map[string]any{"inline_policy": "gone"}, nil, ""},
		{"detach_policy: inline_policy is a string", awsfix.NewDetachPolicy(nil), user, map[string]any{"inline_policy": 3}, nil, "want a string"},
		{"delete_login_profile: no password, no target", awsfix.NewDeleteLoginProfile(nil), user, nil, nil, ""},
		{"update_trust_policy needs principal", awsfix.NewUpdateTrustPolicy(nil), role(), nil, nil, "principal is required"},
		{"update_trust_policy: a conditional trust is left alone", awsfix.NewUpdateTrustPolicy(nil),
			role(map[string]any{"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "true"}}}),
			map[string]any{"principal": "*"}, nil, ""},
		{"update_trust_policy: NotPrincipal trusts everyone", awsfix.NewUpdateTrustPolicy(nil),
			role(map[string]any{"Effect": "Allow", "NotPrincipal": map[string]any{"AWS": "arn:aws:iam::1:root"}, "Action": "sts:AssumeRole"}),
			map[string]any{"principal": "*"}, []string{"trust/*"}, ""},
		{"update_trust_policy: a public provider", awsfix.NewUpdateTrustPolicy(nil),
			role(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Federated": "token.actions.githubusercontent.com"}, "Action": "sts:AssumeRoleWithWebIdentity"}),
			map[string]any{"principal": "token.actions.githubusercontent.com"}, []string{"trust/token.actions.githubusercontent.com"}, ""},
		{"deactivate_access_key: an inactive key is no target", awsfix.NewDeactivateAccessKey(nil), key, nil, nil, ""},
		{"set_password_policy: a CIS policy is no target", awsfix.NewSetPasswordPolicy(nil),
			snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
				Attributes: map[string]any{"exists": true, "minimum_password_length": 16.0, "password_reuse_prevention": 24.0}}, nil, nil, ""},
		{"set_password_policy: no policy is a target", awsfix.NewSetPasswordPolicy(nil),
			snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
				Attributes: map[string]any{"exists": false}}, nil, []string{"password_policy"}, ""},
		{"set_password_policy: a setting of no policy is the CIS part, which creates one", awsfix.NewSetPasswordPolicy(nil),
			snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
				Attributes: map[string]any{"exists": false}}, map[string]any{"setting": "require_symbols"}, []string{"password_policy"}, ""},
		{"set_password_policy: a class already required is no target", awsfix.NewSetPasswordPolicy(nil),
			snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
				Attributes: map[string]any{"exists": true, "require_symbols": true}}, map[string]any{"setting": "require_symbols"}, nil, ""},
		{"set_password_policy: expiry within the days is no target", awsfix.NewSetPasswordPolicy(nil),
			snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
				Attributes: map[string]any{"exists": true, "max_password_age": 45.0}}, map[string]any{"setting": "max_password_age"}, nil, ""},
		{"set_password_policy: passwords that never expire are a target", awsfix.NewSetPasswordPolicy(nil),
			snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
				Attributes: map[string]any{"exists": true, "max_password_age": 0.0}}, map[string]any{"setting": "max_password_age"}, []string{"password_policy/max_password_age"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := tt.rem.Targets(tt.res, tt.params)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Targets: %v, want an error saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Targets: %v", err)
			}
			var parts []string
			for _, x := range ts {
				parts = append(parts, x.Part)
			}
			if strings.Join(parts, ",") != strings.Join(tt.parts, ",") {
				t.Errorf("parts = %q, want %q", parts, tt.parts)
			}
		})
	}
}

// planned collects the world and makes the action of one part.
func (e *env) planned(t *testing.T, rem remediators.Remediator, uid string, params map[string]any, part string) remediators.Action {
	t.Helper()
	res, ok := e.collect(t)[uid]
	if !ok {
		t.Fatalf("%s not collected", uid)
	}
	ts, err := rem.Targets(res, params)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if tg.Part == part {
			return action(rem, res, params, tg)
		}
	}
	t.Fatalf("no part %s", part)
	return remediators.Action{}
}

// Denied and throttled writes are errors a caller counts and reports: never "already
// converged", never "gone".
func TestApply_refusedWritesAreErrorsNotConverged(t *testing.T) {
	tests := []struct {
		name  string
		fault cloudsim.Fault
		is    func(error) bool
	}{
		{"denied", cloudsim.Fault{Service: "iam", Writes: true, AccessDenied: true}, awsapi.IsDenied},
		{"throttled", cloudsim.Fault{Service: "iam", Action: "UpdateAccessKey", ThrottleRate: 1}, awsapi.IsThrottled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, world())
			rem := awsfix.NewDeactivateAccessKey(e.sessions)
			a := e.planned(t, rem, "arn:aws:iam::"+acct+":user/alice/accesskey/"+keyID, nil, keyID)
			if err := e.sim.SetFaults([]cloudsim.Fault{tt.fault}, nil); err != nil {
				t.Fatal(err)
			}
			err := rem.Apply(context.Background(), a)
			if err == nil || errors.Is(err, remediators.ErrConverged) || !tt.is(err) {
				t.Fatalf("Apply: %v, want a %s error", err, tt.name)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error shows a secret: %v", err)
			}
			if err := e.sim.SetFaults(nil, nil); err != nil {
				t.Fatal(err)
			}
			if s := keyStatus(t, e, keyID); s != iamtypes.StatusTypeActive {
				t.Errorf("a refused write changed the key: %s", s)
			}
		})
	}
}

// What vanished between plan and apply is converged; what was replaced is refused.
func TestApply_afterTheCloudMovedOn(t *testing.T) {
	ctx := context.Background()
	e := start(t, world())
	key := awsfix.NewDeactivateAccessKey(e.sessions)
	ka := e.planned(t, key, "arn:aws:iam::"+acct+":user/alice/accesskey/"+keyID, nil, keyID)
	cert := awsfix.NewDeleteServerCertificate(e.sessions)
	ca := e.planned(t, cert, "arn:aws:iam::"+acct+":server-certificate/legacy", nil, "legacy")
	if _, err := e.iam().DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String("alice"), AccessKeyId: aws.String(keyID)}); err != nil {
		t.Fatal(err)
	}
	e.sim.Do(func(w *cloudsim.World) { w.AWS.Accounts[0].ServerCertificates[0].ID = "ASCANOTHERONE" })
	e.sim.ResetCalls()
	if err := key.Apply(ctx, ka); !errors.Is(err, remediators.ErrConverged) {
		t.Errorf("deactivate a deleted key: %v, want ErrConverged", err)
	}
	if err := key.Rollback(ctx, ka); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Errorf("reactivate a deleted key: %v, want an error", err)
	}
	if err := cert.Apply(ctx, ca); err == nil || errors.Is(err, remediators.ErrConverged) {
		t.Errorf("delete a certificate replaced since the plan: %v, want a refusal", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("writes %v, want none", w)
	}
}

// A role whose every statement is open is left trusting nobody: IAM wants a statement.
func TestUpdateTrustPolicy_allOpenLeavesADenyAll(t *testing.T) {
	ctx := context.Background()
	w := world()
	w.AWS.Accounts[0].Roles[0].AssumeRolePolicy = `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}}`
	e := start(t, w)
	rem := awsfix.NewUpdateTrustPolicy(e.sessions)
	a := e.planned(t, rem, "arn:aws:iam::"+acct+":role/x/open", map[string]any{"principal": "*"}, "trust/*")
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatal(err)
	}
	doc := trustDoc(t, e)
	st, _ := doc["Statement"].([]any)
	if len(st) != 1 || st[0].(map[string]any)["Effect"] != "Deny" {
		t.Errorf("trust policy after Apply: %v, want one Deny statement", doc)
	}
	if err := rem.Rollback(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := trustDoc(t, e)["Statement"]; got.(map[string]any)["Principal"] != "*" {
		t.Errorf("trust after Rollback: %v", got)
	}
}

// An account without a password policy gets the CIS one; Rollback deletes it again.
func TestSetPasswordPolicy_rollbackDeletesThePolicyItCreated(t *testing.T) {
	ctx := context.Background()
	w := world()
	w.AWS.Accounts[0].PasswordPolicy = nil
	e := start(t, w)
	rem := awsfix.NewSetPasswordPolicy(e.sessions)
	a := e.planned(t, rem, "arn:aws:iam::"+acct+":account-password-policy", nil, "password_policy")
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatal(err)
	}
	p := passwordPolicy(t, e)
	if p == nil || aws.ToInt32(p.MinimumPasswordLength) != 14 || aws.ToInt32(p.PasswordReusePrevention) != 24 || !p.RequireSymbols || !p.AllowUsersToChangePassword {
		t.Errorf("created policy %+v, want the CIS values", p)
	}
	if err := rem.Rollback(ctx, a); err != nil {
		t.Fatal(err)
	}
	if p := passwordPolicy(t, e); p != nil {
		t.Errorf("policy after Rollback: %+v, want none", p)
	}
}

// A fix of a member account's resource runs in that account, through the organisation
// role, and nowhere else.
func TestApply_inAMemberAccount(t *testing.T) {
	ctx := context.Background()
	w := world()
	member := *w.AWS.Accounts[0]
	member.ID = "222222222222"
	member.Users = []*cloudsim.User{{Name: "alice", Created: t0, AccessKeys: []*cloudsim.AccessKey{{ID: keyID, Created: t0}}}}
	member.Roles = []*cloudsim.Role{{Name: "OrganizationAccountAccessRole", Created: t0,
		AssumeRolePolicy: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"sts:AssumeRole"}]}`}}
	member.SecurityGroups, member.ServerCertificates = nil, nil
	w.AWS.Accounts = append(w.AWS.Accounts, &member)
	w.AWS.Organization = &cloudsim.Organization{ID: "o-test", Management: acct}
	e := start(t, w)
	rem := awsfix.NewDeactivateAccessKey(e.sessions)
	res := snapshot.Resource{UID: "arn:aws:iam::222222222222:user/alice/accesskey/" + keyID, Type: "aws.iam.access_key", Account: "222222222222",
		Attributes: map[string]any{"access_key_id": keyID, "user_name": "alice", "status": "Active"}}
	ts, err := rem.Targets(res, nil)
	if err != nil || len(ts) != 1 {
		t.Fatalf("Targets: %v %v", ts, err)
	}
	if err := rem.Apply(ctx, action(rem, res, nil, ts[0])); err != nil {
		t.Fatal(err)
	}
	var mine, theirs string
	e.sim.Do(func(w *cloudsim.World) {
		mine = w.AWS.Accounts[0].Users[0].AccessKeys[0].Status
		theirs = w.AWS.Accounts[1].Users[0].AccessKeys[0].Status
	})
	if theirs != "Inactive" || mine == "Inactive" {
		t.Errorf("key status: management %q, member %q; want the member's only", mine, theirs)
	}
}

// Fixes of two settings of one password policy, planned together, apply one after the
// other: the first changes nothing the second's before-state holds (no drift), and
// rolling the first back leaves the second's change in place.
func TestSetPasswordPolicy_settingsAreIndependentParts(t *testing.T) {
	ctx := context.Background()
	e := start(t, world())
	rem := awsfix.NewSetPasswordPolicy(e.sessions)
	uid := "arn:aws:iam::" + acct + ":account-password-policy"
	upper := e.planned(t, rem, uid, map[string]any{"setting": "require_uppercase_characters"}, "password_policy/require_uppercase_characters")
	lower := e.planned(t, rem, uid, map[string]any{"setting": "require_lowercase_characters"}, "password_policy/require_lowercase_characters")
	if err := rem.Apply(ctx, upper); err != nil {
		t.Fatal(err)
	}
	again := e.planned(t, rem, uid, lower.Params, lower.Part)
	if string(again.Before) != string(lower.Before) {
		t.Errorf("lower-case part's before-state moved when upper case was required: %s, planned %s", again.Before, lower.Before)
	}
	if err := rem.Apply(ctx, lower); err != nil {
		t.Fatal(err)
	}
	if err := rem.Rollback(ctx, upper); err != nil {
		t.Fatal(err)
	}
	p := passwordPolicy(t, e)
	if p == nil || p.RequireUppercaseCharacters || !p.RequireLowercaseCharacters || aws.ToInt32(p.MinimumPasswordLength) != 8 {
		t.Errorf("policy %+v, want lower case still required, upper case rolled back, the rest as before", p)
	}
}

func TestSetPasswordPolicy_refusesBadSettings(t *testing.T) {
	res := snapshot.Resource{UID: "arn:aws:iam::" + acct + ":account-password-policy", Type: "aws.iam.password_policy",
		Attributes: map[string]any{"exists": true, "minimum_password_length": 8.0}}
	for _, params := range []map[string]any{
		{"setting": "minimum_password_length_please"},
		{"setting": "max_password_age", "max_password_age": 0.0},
		{"setting": "max_password_age", "max_password_age": "ninety"},
		{"setting": 7.0},
	} {
		if _, err := awsfix.NewSetPasswordPolicy(nil).Targets(res, params); err == nil {
			t.Errorf("Targets with %v: no error", params)
		}
	}
}
