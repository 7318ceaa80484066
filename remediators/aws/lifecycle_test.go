package aws_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
)

const adminARN = "arn:aws:iam::aws:policy/AdministratorAccess"

func keyStatus(t *testing.T, e *env, id string) iamtypes.StatusType {
	t.Helper()
	out, err := e.iam().ListAccessKeys(context.Background(), &iam.ListAccessKeysInput{UserName: aws.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range out.AccessKeyMetadata {
		if aws.ToString(k.AccessKeyId) == id {
			return k.Status
		}
	}
	t.Fatalf("key %s is gone", id)
	return ""
}

func attached(t *testing.T, e *env, kind, name string) []string {
	t.Helper()
	var ps []iamtypes.AttachedPolicy
	var err error
	switch kind {
	case "user":
		var out *iam.ListAttachedUserPoliciesOutput
		if out, err = e.iam().ListAttachedUserPolicies(context.Background(), &iam.ListAttachedUserPoliciesInput{UserName: &name}); err == nil {
			ps = out.AttachedPolicies
		}
	case "group":
		var out *iam.ListAttachedGroupPoliciesOutput
		if out, err = e.iam().ListAttachedGroupPolicies(context.Background(), &iam.ListAttachedGroupPoliciesInput{GroupName: &name}); err == nil {
			ps = out.AttachedPolicies
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var arns []string
	for _, p := range ps {
		arns = append(arns, aws.ToString(p.PolicyArn))
	}
	return arns
}

func inlineDoc(t *testing.T, e *env, name string) (string, bool) {
	t.Helper()
	out, err := e.iam().GetUserPolicy(context.Background(), &iam.GetUserPolicyInput{UserName: aws.String("alice"), PolicyName: &name})
	if awsapi.IsNotFound(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	return d, true
}

func trustDoc(t *testing.T, e *env) map[string]any {
	t.Helper()
	out, err := e.iam().GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("open")})
	if err != nil {
		t.Fatal(err)
	}
	d, err := url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(d), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	bx, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(bx) == string(by)
}

func passwordPolicy(t *testing.T, e *env) *iamtypes.PasswordPolicy {
	t.Helper()
	out, err := e.iam().GetAccountPasswordPolicy(context.Background(), &iam.GetAccountPasswordPolicyInput{})
	if awsapi.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.PasswordPolicy
}

// rules lists a group's rules as "in|tcp|22-22|0.0.0.0/0|description".
func rules(t *testing.T, e *env, group string) []string {
	t.Helper()
	out, err := e.ec2().DescribeSecurityGroupRules(context.Background(), &ec2.DescribeSecurityGroupRulesInput{
		Filters: []ec2types.Filter{{Name: aws.String("group-id"), Values: []string{group}}}})
	if err != nil {
		t.Fatal(err)
	}
	var rs []string
	for _, r := range out.SecurityGroupRules {
		dir := "in"
		if aws.ToBool(r.IsEgress) {
			dir = "out"
		}
		peer := aws.ToString(r.CidrIpv4) + aws.ToString(r.CidrIpv6)
		if r.ReferencedGroupInfo != nil {
			peer = aws.ToString(r.ReferencedGroupInfo.GroupId)
		}
		rs = append(rs, strings.Join([]string{dir, aws.ToString(r.IpProtocol),
			itoa(aws.ToInt32(r.FromPort)) + "-" + itoa(aws.ToInt32(r.ToPort)), peer, aws.ToString(r.Description)}, "|"))
	}
	return rs
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDeactivateAccessKey_lifecycle(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewDeactivateAccessKey(s) }, uid: "arn:aws:iam::" + acct + ":user/alice/accesskey/" + keyID,
		part: keyID, parts: []string{keyID},
		fixed: func(t *testing.T, e *env) {
			if s := keyStatus(t, e, keyID); s != iamtypes.StatusTypeInactive {
				t.Errorf("key %s is %s after Apply", keyID, s)
			}
			if s := keyStatus(t, e, keyID2); s != iamtypes.StatusTypeActive {
				t.Errorf("the other key is %s: only the one key may change", s)
			}
		},
		undone: func(t *testing.T, e *env) {
			if s := keyStatus(t, e, keyID); s != iamtypes.StatusTypeActive {
				t.Errorf("key %s is %s after Rollback", keyID, s)
			}
		},
	}.run(t)
}

func TestDetachPolicy_managedFromOneUserOnly(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewDetachPolicy(s) }, uid: adminARN, part: "user/alice", parts: []string{"user/alice", "group/admins"},
		fixed: func(t *testing.T, e *env) {
			if contains(attached(t, e, "user", "alice"), adminARN) {
				t.Error("AdministratorAccess still attached to alice")
			}
			if !contains(attached(t, e, "group", "admins"), adminARN) {
				t.Error("AdministratorAccess detached from the group too: only one attachment may change")
			}
		},
		undone: func(t *testing.T, e *env) {
			if !contains(attached(t, e, "user", "alice"), adminARN) {
				t.Error("AdministratorAccess not attached to alice again")
			}
		},
	}.run(t)
}

// With attachment, the violation of one attachment plans that attachment alone.
func TestDetachPolicy_oneNamedAttachment(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewDetachPolicy(s) }, uid: adminARN,
		params: map[string]any{"attachment": "group/admins"}, part: "group/admins", parts: []string{"group/admins"},
		fixed: func(t *testing.T, e *env) {
			if contains(attached(t, e, "group", "admins"), adminARN) {
				t.Error("AdministratorAccess still attached to the group")
			}
			if !contains(attached(t, e, "user", "alice"), adminARN) {
				t.Error("AdministratorAccess detached from alice too: only the named attachment may change")
			}
		},
		undone: func(t *testing.T, e *env) {
			if !contains(attached(t, e, "group", "admins"), adminARN) {
				t.Error("AdministratorAccess not attached to the group again")
			}
		},
	}.run(t)
}

func TestDetachPolicy_deletesOneInlinePolicyAndPutsItBack(t *testing.T) {
	params := map[string]any{"inline_policy": "admin"}
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewDetachPolicy(s) }, uid: "arn:aws:iam::" + acct + ":user/alice", params: params,
		part: "inline/admin", parts: []string{"inline/admin"},
		fixed: func(t *testing.T, e *env) {
			if _, ok := inlineDoc(t, e, "admin"); ok {
				t.Error("inline policy admin still there")
			}
			if _, ok := inlineDoc(t, e, "other"); !ok {
				t.Error("inline policy other deleted too")
			}
			if !contains(attached(t, e, "user", "alice"), adminARN) {
				t.Error("the managed attachment changed")
			}
		},
		undone: func(t *testing.T, e *env) {
			if d, ok := inlineDoc(t, e, "admin"); !ok || !sameJSON(t, d, adminDoc) {
				t.Errorf("inline policy admin after Rollback: %q, want %s", d, adminDoc)
			}
		},
	}.run(t)
}

func TestUpdateTrustPolicy_removesOnlyTheOpenPrincipal(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewUpdateTrustPolicy(s) }, uid: "arn:aws:iam::" + acct + ":role/x/open", params: map[string]any{"principal": "*"},
		part: "trust/*", parts: []string{"trust/*"},
		fixed: func(t *testing.T, e *env) {
			got, _ := json.Marshal(trustDoc(t, e)["Statement"])
			want := `[{"Action":"sts:AssumeRole","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::111111111111:role/ci"]},"Sid":"Anyone"},` +
				`{"Action":"sts:AssumeRole","Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"}},` +
				`{"Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-1"}},"Effect":"Allow","Principal":"*"}]`
			if string(got) != want {
				t.Errorf("trust statements after Apply:\n%s\nwant\n%s", got, want)
			}
		},
		undone: func(t *testing.T, e *env) {
			got, _ := json.Marshal(trustDoc(t, e))
			if !sameJSON(t, string(got), openTrust) {
				t.Errorf("trust policy after Rollback: %s, want %s", got, openTrust)
			}
		},
	}.run(t)
}

func TestSetPasswordPolicy_raisesToCISAndKeepsTheRest(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewSetPasswordPolicy(s) }, uid: "arn:aws:iam::" + acct + ":account-password-policy",
		part: "password_policy", parts: []string{"password_policy"},
		fixed: func(t *testing.T, e *env) {
			p := passwordPolicy(t, e)
			if p == nil || aws.ToInt32(p.MinimumPasswordLength) != 14 || aws.ToInt32(p.PasswordReusePrevention) != 24 ||
				!p.RequireNumbers || aws.ToInt32(p.MaxPasswordAge) != 90 || p.RequireSymbols {
				t.Errorf("password policy after Apply: %+v, want length 14, reuse 24, the rest kept", p)
			}
		},
		undone: func(t *testing.T, e *env) {
			p := passwordPolicy(t, e)
			if p == nil || aws.ToInt32(p.MinimumPasswordLength) != 8 || p.PasswordReusePrevention != nil || aws.ToInt32(p.MaxPasswordAge) != 90 {
				t.Errorf("password policy after Rollback: %+v, want the old one", p)
			}
		},
	}.run(t)
}

func TestDeleteLoginProfile_hasNoRollback(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewDeleteLoginProfile(s) }, uid: "arn:aws:iam::" + acct + ":user/alice",
		part: "login_profile", parts: []string{"login_profile"},
		fixed: func(t *testing.T, e *env) {
			_, err := e.iam().GetLoginProfile(context.Background(), &iam.GetLoginProfileInput{UserName: aws.String("alice")})
			if awsapi.Code(err) != "NoSuchEntity" {
				t.Errorf("login profile after Apply: %v, want NoSuchEntity", err)
			}
		},
	}.run(t)
}

func TestDeleteServerCertificate_hasNoRollback(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewDeleteServerCertificate(s) }, uid: "arn:aws:iam::" + acct + ":server-certificate/legacy",
		part: "legacy", parts: []string{"legacy"},
		fixed: func(t *testing.T, e *env) {
			_, err := e.iam().GetServerCertificate(context.Background(), &iam.GetServerCertificateInput{ServerCertificateName: aws.String("legacy")})
			if awsapi.Code(err) != "NoSuchEntity" {
				t.Errorf("server certificate after Apply: %v, want NoSuchEntity", err)
			}
		},
	}.run(t)
}

func TestRevokeIngress_revokesOneRuleAndRestoresItsDescription(t *testing.T) {
	rule := sgARN(webSG) + "#ingress/tcp/22-22/0.0.0.0/0"
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewRevokeIngress(s) }, uid: sgARN(webSG), params: map[string]any{"target": rule},
		part: rule, parts: []string{rule},
		fixed: func(t *testing.T, e *env) {
			got := rules(t, e, webSG)
			want := []string{"in|tcp|22-22|10.0.0.0/8|office", "in|tcp|443-443|::/0|"}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("rules after Apply: %q, want %q", got, want)
			}
		},
		undone: func(t *testing.T, e *env) {
			if got := rules(t, e, webSG); !contains(got, "in|tcp|22-22|0.0.0.0/0|anywhere") || len(got) != 3 {
				t.Errorf("rules after Rollback: %q, want the SSH rule back with its description", got)
			}
		},
	}.run(t)
}

func TestRevokeDefaultSGRules_revokesOneEgressRule(t *testing.T) {
	rule := sgARN(defaultSG) + "#egress/-1/-1--1/0.0.0.0/0"
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewRevokeDefaultSGRules(s) }, uid: sgARN(defaultSG), params: map[string]any{"target": rule},
		part: rule, parts: []string{rule},
		fixed: func(t *testing.T, e *env) {
			if got := rules(t, e, defaultSG); len(got) != 1 || !strings.HasPrefix(got[0], "in|-1|") {
				t.Errorf("rules after Apply: %q, want the ingress rule only", got)
			}
		},
		undone: func(t *testing.T, e *env) {
			if got := rules(t, e, defaultSG); !contains(got, "out|-1|-1--1|0.0.0.0/0|") {
				t.Errorf("rules after Rollback: %q, want the egress rule back", got)
			}
		},
	}.run(t)
}

func TestSetPasswordPolicy_requiresOneCharacterClassAndKeepsTheRest(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewSetPasswordPolicy(s) }, uid: "arn:aws:iam::" + acct + ":account-password-policy",
		params: map[string]any{"setting": "require_symbols"},
		part:   "password_policy/require_symbols", parts: []string{"password_policy/require_symbols"},
		fixed: func(t *testing.T, e *env) {
			p := passwordPolicy(t, e)
			if p == nil || !p.RequireSymbols || p.RequireUppercaseCharacters || !p.RequireNumbers ||
				aws.ToInt32(p.MinimumPasswordLength) != 8 || aws.ToInt32(p.MaxPasswordAge) != 90 {
				t.Errorf("password policy after Apply: %+v, want symbols required and nothing else changed", p)
			}
		},
		undone: func(t *testing.T, e *env) {
			p := passwordPolicy(t, e)
			if p == nil || p.RequireSymbols || !p.RequireNumbers || aws.ToInt32(p.MinimumPasswordLength) != 8 || aws.ToInt32(p.MaxPasswordAge) != 90 {
				t.Errorf("password policy after Rollback: %+v, want the old one", p)
			}
		},
	}.run(t)
}

func TestSetPasswordPolicy_shortensExpiryToTheViolationsDays(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewSetPasswordPolicy(s) }, uid: "arn:aws:iam::" + acct + ":account-password-policy",
		params: map[string]any{"setting": "max_password_age", "max_password_age": 60.0},
		part:   "password_policy/max_password_age", parts: []string{"password_policy/max_password_age"},
		fixed: func(t *testing.T, e *env) {
			p := passwordPolicy(t, e)
			if p == nil || aws.ToInt32(p.MaxPasswordAge) != 60 || aws.ToInt32(p.MinimumPasswordLength) != 8 || !p.RequireNumbers {
				t.Errorf("password policy after Apply: %+v, want expiry 60 days and nothing else changed", p)
			}
		},
		undone: func(t *testing.T, e *env) {
			if p := passwordPolicy(t, e); p == nil || aws.ToInt32(p.MaxPasswordAge) != 90 {
				t.Errorf("password policy after Rollback: %+v, want expiry 90 days again", p)
			}
		},
	}.run(t)
}

// usedWorld is world() with a role app whose inline policy grants s3, kms and lambda,
// of which it used s3 two days ago (s3:ListBucket), lambda 300 days ago, kms never.
func usedWorld() *cloudsim.World {
	w := world()
	now := time.Now().UTC().Truncate(time.Second)
	w.AWS.Accounts[0].Roles = append(w.AWS.Accounts[0].Roles, &cloudsim.Role{Name: "app", Created: t0, AssumeRolePolicy: openTrust,
		InlinePolicies: []cloudsim.InlinePolicy{{Name: "app", Document: appDoc}, {Name: "s3only", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:ListBucket","Resource":"*"}]}`}},
		LastAccessed: []cloudsim.AccessRecord{
			{Service: "s3", Action: "s3:ListBucket", At: now.AddDate(0, 0, -2), Region: "us-east-1"},
			{Service: "lambda", At: now.AddDate(0, 0, -300), Region: "us-east-1"},
		}})
	return w
}

const appDoc = `{"Version":"2012-10-17","Statement":[{"Sid":"App","Effect":"Allow","Action":["s3:ListBucket","kms:Decrypt","lambda:*"],"Resource":"*"},{"Effect":"Deny","Action":"kms:*","Resource":"arn:aws:kms:*:*:key/secret"}]}`

func roleInline(t *testing.T, e *env, role, name string) (string, bool) {
	t.Helper()
	out, err := e.iam().GetRolePolicy(context.Background(), &iam.GetRolePolicyInput{RoleName: &role, PolicyName: &name})
	if awsapi.IsNotFound(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	return d, true
}

// The right-sizing fix narrows the inline policy to what the role used, read back
// through the SDK; the policy already used in full is no target; Rollback restores the
// exact document.
func TestRightsizeInlinePolicy_lifecycle(t *testing.T) {
	lifecycle{
		fix: func(s *awsapi.Sessions) remediators.Remediator { return awsfix.NewRightsizeInlinePolicy(s) },
		uid: "arn:aws:iam::" + acct + ":role/app", params: map[string]any{"window_days": 90},
		part: "inline/app", parts: []string{"inline/app"},
		world: usedWorld, usage: true,
		fixed: func(t *testing.T, e *env) {
			d, ok := roleInline(t, e, "app", "app")
			want := `{"Version":"2012-10-17","Statement":[{"Sid":"App","Effect":"Allow","Action":["s3:ListBucket"],"Resource":"*"},{"Effect":"Deny","Action":"kms:*","Resource":"arn:aws:kms:*:*:key/secret"}]}`
			if !ok || !sameJSON(t, d, want) {
				t.Errorf("app after Apply: %s\nwant %s", d, want)
			}
			if d, _ := roleInline(t, e, "app", "s3only"); !strings.Contains(d, "s3:ListBucket") {
				t.Errorf("s3only changed: %s", d)
			}
		},
		undone: func(t *testing.T, e *env) {
			if d, ok := roleInline(t, e, "app", "app"); !ok || !sameJSON(t, d, appDoc) {
				t.Errorf("app after Rollback: %q, want %s", d, appDoc)
			}
		},
	}.run(t)
}
