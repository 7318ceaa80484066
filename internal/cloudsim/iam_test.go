package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// iamTestNow is the simulator clock of the IAM and STS tests.
var iamTestNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

const (
	iamTestAcct  = "111111111111"
	iamTestOther = "222222222222"
	iamAliceKey  = "AKIAALICE0000001"
	iamTrust     = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	iamS3Doc     = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/a b+c"}]}`
	iamDeployDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["lambda:UpdateFunctionCode"],"Resource":"*"}]}`
)

// iamTestWorld is a small account with one of everything IAM collectors read, and a
// second account with a role to assume.
func iamTestWorld() *World {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	used := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	changed := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	return &World{AWS: AWS{Accounts: []*Account{{
		ID:             iamTestAcct,
		Root:           Root{MFA: false, AccessKeysActive: 1, PasswordLastUsed: &used, Created: t0},
		PasswordPolicy: &PasswordPolicy{MinimumPasswordLength: 14, RequireSymbols: true, RequireNumbers: true, MaxPasswordAge: 90},
		Users: []*User{
			{Name: "alice", Created: t0, PasswordEnabled: true, PasswordLastUsed: &used, PasswordLastChanged: &changed, MFA: true,
				AccessKeys: []*AccessKey{
					{ID: iamAliceKey, Created: t0, LastUsed: &used, LastUsedService: "s3", LastUsedRegion: "eu-west-1"},
					{ID: "AKIAALICE0000002", Status: "Inactive", Created: changed},
				},
				Groups:           []string{"admins"},
				AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"},
				InlinePolicies:   []InlinePolicy{{Name: "s3", Document: iamS3Doc}},
				Tags:             map[string]string{"team": "platform", "env": "prod"}},
			{Name: "bob", Path: "/ops/", Created: t0, PasswordEnabled: true},
			{Name: "carol", Created: t0},
		},
		Groups: []*Group{{Name: "admins", Created: t0, AttachedPolicies: []string{"arn:aws:iam::111111111111:policy/deploy"},
			InlinePolicies: []InlinePolicy{{Name: "deny-iam", Document: `{"Version":"2012-10-17","Statement":{"Effect":"Deny","Action":"iam:*","Resource":"*"}}`}}}},
		Roles: []*Role{
			{Name: "deployer", Path: "/ci/", Created: t0, Description: "CI", AssumeRolePolicy: iamTrust, LastUsed: &used, LastUsedRegion: "eu-west-1",
				AttachedPolicies: []string{"arn:aws:iam::111111111111:policy/deploy"}, Tags: map[string]string{"owner": "ci"}},
			{Name: "idle", Created: t0, AssumeRolePolicy: iamTrust, InlinePolicies: []InlinePolicy{{Name: "logs", Document: iamS3Doc}}},
		},
		Policies: []*Policy{
			{Name: "deploy", Description: "deploy lambdas", Created: t0, Versions: []PolicyVersion{
				{ID: "v1", Document: iamS3Doc, Created: t0}, {ID: "v2", Document: iamDeployDoc, Created: changed}}},
			{Name: "unused", Path: "/x/", Created: t0, Document: iamS3Doc},
			{Name: "ReadOnlyAccess", AWSManaged: true, Created: t0, Document: iamS3Doc},
		},
		ServerCertificates: []*ServerCertificate{{Name: "legacy", Cert: CertSpec{Subject: "CN=legacy.example",
			KeyAlgorithm: "EC", NotAfter: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)}}},
	}, {
		ID:    iamTestOther,
		Roles: []*Role{{Name: "OrganizationAccountAccessRole", Created: t0, AssumeRolePolicy: iamTrust, MaxSessionDuration: 7200}},
	}}}}
}

// iamTestSim serves w and returns the simulator and an SDK configuration signed with akid
// (an unknown key acts as the caller account's root user).
func iamTestSim(t *testing.T, w *World, akid string) (*Sim, *Server, aws.Config) {
	t.Helper()
	s, srv := startSim(t, w, Options{Now: func() time.Time { return iamTestNow }})
	return s, srv, iamTestConfig(srv, akid)
}

func iamTestConfig(srv *Server, akid string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(akid, "secret", "")}
}

// iamWantErr checks that err is the AWS error code with the HTTP status (0: any).
func iamWantErr(t *testing.T, err error, code string, status int) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	var re *smithyhttp.ResponseError
	if status != 0 && (!errors.As(err, &re) || re.HTTPStatusCode() != status) {
		t.Fatalf("error %v: want HTTP status %d", err, status)
	}
}

// decodeDoc URL-decodes a document as collectors do and compacts it for comparison.
func decodeDoc(t *testing.T, s *string) string {
	t.Helper()
	if s == nil {
		t.Fatal("document missing")
	}
	d, err := url.QueryUnescape(*s)
	if err != nil {
		t.Fatalf("document %q is not URL-encoded: %v", *s, err)
	}
	if !json.Valid([]byte(d)) {
		t.Fatalf("document %q is not JSON", d)
	}
	return compactJSON(d)
}

func TestIAMEntityReads(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()

	u, err := c.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(u.User.Arn); got != "arn:aws:iam::111111111111:user/alice" || len(u.User.Tags) != 2 ||
		!u.User.PasswordLastUsed.Equal(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) || aws.ToString(u.User.UserId)[:4] != "AIDA" {
		t.Errorf("GetUser = %s %v %v %s", got, u.User.Tags, u.User.PasswordLastUsed, aws.ToString(u.User.UserId))
	}
	root, err := c.GetUser(ctx, &iam.GetUserInput{})
	if err != nil || aws.ToString(root.User.Arn) != "arn:aws:iam::111111111111:root" || aws.ToString(root.User.UserId) != iamTestAcct {
		t.Errorf("GetUser as root = %+v, %v", root, err)
	}

	r, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("deployer")})
	if err != nil {
		t.Fatal(err)
	}
	if decodeDoc(t, r.Role.AssumeRolePolicyDocument) != iamTrust || aws.ToString(r.Role.RoleLastUsed.Region) != "eu-west-1" ||
		r.Role.RoleLastUsed.LastUsedDate == nil || aws.ToString(r.Role.Arn) != "arn:aws:iam::111111111111:role/ci/deployer" ||
		aws.ToInt32(r.Role.MaxSessionDuration) != 3600 || aws.ToString(r.Role.Description) != "CI" || len(r.Role.Tags) != 1 {
		t.Errorf("GetRole = %+v", r.Role)
	}
	idle, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("IDLE")}) // names ignore case
	if err != nil || idle.Role.RoleLastUsed == nil || idle.Role.RoleLastUsed.LastUsedDate != nil {
		t.Errorf("GetRole(idle) = %+v, %v: want an empty RoleLastUsed", idle, err)
	}
	roles, err := c.ListRoles(ctx, &iam.ListRolesInput{})
	if err != nil || len(roles.Roles) != 2 || roles.Roles[0].RoleLastUsed != nil || roles.IsTruncated {
		t.Errorf("ListRoles = %+v, %v: want 2 roles without last use", roles, err)
	}
	ops, err := c.ListUsers(ctx, &iam.ListUsersInput{PathPrefix: aws.String("/ops/")})
	if err != nil || len(ops.Users) != 1 || aws.ToString(ops.Users[0].UserName) != "bob" {
		t.Errorf("ListUsers(/ops/) = %+v, %v", ops, err)
	}

	groups, err := c.ListGroupsForUser(ctx, &iam.ListGroupsForUserInput{UserName: aws.String("alice")})
	if err != nil || len(groups.Groups) != 1 || aws.ToString(groups.Groups[0].Arn) != "arn:aws:iam::111111111111:group/admins" {
		t.Errorf("ListGroupsForUser = %+v, %v", groups, err)
	}
	g, err := c.GetGroup(ctx, &iam.GetGroupInput{GroupName: aws.String("admins")})
	if err != nil || len(g.Users) != 1 || aws.ToString(g.Users[0].UserName) != "alice" {
		t.Errorf("GetGroup = %+v, %v", g, err)
	}
	lg, err := c.ListGroups(ctx, &iam.ListGroupsInput{})
	if err != nil || len(lg.Groups) != 1 {
		t.Errorf("ListGroups = %+v, %v", lg, err)
	}

	mfa, err := c.ListMFADevices(ctx, &iam.ListMFADevicesInput{UserName: aws.String("alice")})
	if err != nil || len(mfa.MFADevices) != 1 || aws.ToString(mfa.MFADevices[0].SerialNumber) != "arn:aws:iam::111111111111:mfa/alice" {
		t.Errorf("ListMFADevices = %+v, %v", mfa, err)
	}
	lp, err := c.GetLoginProfile(ctx, &iam.GetLoginProfileInput{UserName: aws.String("alice")})
	if err != nil || !lp.LoginProfile.CreateDate.Equal(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("GetLoginProfile = %+v, %v", lp, err)
	}
	_, err = c.GetLoginProfile(ctx, &iam.GetLoginProfileInput{UserName: aws.String("carol")})
	var nse *types.NoSuchEntityException
	if !errors.As(err, &nse) {
		t.Errorf("GetLoginProfile(carol) = %v, want NoSuchEntity", err)
	}
}

func TestIAMAccessKeyReads(t *testing.T) {
	_, srv, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	ctx := context.Background()
	tests := []struct {
		name   string
		signer string // access key id the request is signed with
		user   string // UserName parameter
		want   []string
	}{
		{"named user", "AKIDSIM", "alice", []string{iamAliceKey + "/Active", "AKIAALICE0000002/Inactive"}},
		{"user without keys", "AKIDSIM", "carol", nil},
		{"the calling user", iamAliceKey, "", []string{iamAliceKey + "/Active", "AKIAALICE0000002/Inactive"}},
		{"the root user", "AKIDSIM", "", []string{rootKeyID(iamTestAcct, 0) + "/Active"}},
	}
	c := iam.NewFromConfig(cfg)
	lu, err := c.GetAccessKeyLastUsed(ctx, &iam.GetAccessKeyLastUsedInput{AccessKeyId: aws.String(iamAliceKey)})
	if err != nil || aws.ToString(lu.UserName) != "alice" || aws.ToString(lu.AccessKeyLastUsed.ServiceName) != "s3" ||
		aws.ToString(lu.AccessKeyLastUsed.Region) != "eu-west-1" || lu.AccessKeyLastUsed.LastUsedDate == nil {
		t.Errorf("GetAccessKeyLastUsed = %+v, %v", lu, err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := iam.NewFromConfig(iamTestConfig(srv, tc.signer))
			in := &iam.ListAccessKeysInput{}
			if tc.user != "" {
				in.UserName = aws.String(tc.user)
			}
			out, err := c.ListAccessKeys(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range out.AccessKeyMetadata {
				got = append(got, aws.ToString(k.AccessKeyId)+"/"+string(k.Status))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("keys %v, want %v", got, tc.want)
			}
		})
	}

	// Signing with alice's key ("the calling user") was a use of it.
	lu, err = c.GetAccessKeyLastUsed(ctx, &iam.GetAccessKeyLastUsedInput{AccessKeyId: aws.String(iamAliceKey)})
	if err != nil || aws.ToString(lu.AccessKeyLastUsed.ServiceName) != "iam" || aws.ToString(lu.AccessKeyLastUsed.Region) != "us-east-1" ||
		!aws.ToTime(lu.AccessKeyLastUsed.LastUsedDate).Equal(iamTestNow) {
		t.Errorf("GetAccessKeyLastUsed after a call signed with the key = %+v, %v", lu.AccessKeyLastUsed, err)
	}
	never, err := c.GetAccessKeyLastUsed(ctx, &iam.GetAccessKeyLastUsedInput{AccessKeyId: aws.String("AKIAALICE0000002")})
	if err != nil || never.AccessKeyLastUsed.LastUsedDate != nil || aws.ToString(never.AccessKeyLastUsed.Region) != "N/A" {
		t.Errorf("GetAccessKeyLastUsed(never used) = %+v, %v", never, err)
	}
}

// TestIAMUserLifecycle seeds a user through the write APIs, reads it back, and tears it
// down in the order IAM requires.
func TestIAMUserLifecycle(t *testing.T) {
	s, _, cfg := iamTestSim(t, &World{AWS: AWS{Accounts: []*Account{{ID: iamTestAcct}}}}, "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("dave"), Path: aws.String("/eng/"),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("eng")}}}))
	must(c.CreateGroup(ctx, &iam.CreateGroupInput{GroupName: aws.String("eng")}))
	must(c.AddUserToGroup(ctx, &iam.AddUserToGroupInput{GroupName: aws.String("eng"), UserName: aws.String("dave")}))
	must(c.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String("dave"), PolicyArn: aws.String("arn:aws:iam::aws:policy/job-function/ViewOnlyAccess")}))
	must(c.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String("dave"), PolicyName: aws.String("s3"), PolicyDocument: aws.String(iamS3Doc)}))
	must(c.CreateLoginProfile(ctx, &iam.CreateLoginProfileInput{UserName: aws.String("dave"), Password: aws.String("Correct-Horse-9")}))
	must(c.TagUser(ctx, &iam.TagUserInput{UserName: aws.String("dave"), Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("dev")}}}))
	k1, err := c.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("dave")})
	if err != nil || len(aws.ToString(k1.AccessKey.AccessKeyId)) != 20 || aws.ToString(k1.AccessKey.SecretAccessKey) == "" || k1.AccessKey.Status != types.StatusTypeActive {
		t.Fatalf("CreateAccessKey = %+v, %v", k1, err)
	}
	must(c.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("dave")}))
	_, err = c.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("dave")})
	var lim *types.LimitExceededException
	if !errors.As(err, &lim) {
		t.Fatalf("third access key: %v, want LimitExceeded", err)
	}
	iamWantErr(t, err, "LimitExceeded", 409)
	// The new key signs requests as dave, until it is deactivated.
	dave := iam.NewFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: cfg.BaseEndpoint,
		Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(k1.AccessKey.AccessKeyId), aws.ToString(k1.AccessKey.SecretAccessKey), "")})
	me, err := dave.GetUser(ctx, &iam.GetUserInput{})
	if err != nil || aws.ToString(me.User.Arn) != "arn:aws:iam::111111111111:user/eng/dave" {
		t.Errorf("GetUser with dave's key = %+v, %v", me, err)
	}
	must(c.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("dave"), AccessKeyId: k1.AccessKey.AccessKeyId, Status: types.StatusTypeInactive}))
	_, err = dave.GetUser(ctx, &iam.GetUserInput{})
	iamWantErr(t, err, "InvalidClientTokenId", 403)

	tags, err := c.ListUserTags(ctx, &iam.ListUserTagsInput{UserName: aws.String("dave")})
	if err != nil || len(tags.Tags) != 2 || aws.ToString(tags.Tags[0].Key) != "env" {
		t.Errorf("ListUserTags = %+v, %v", tags, err)
	}
	att, err := c.ListAttachedUserPolicies(ctx, &iam.ListAttachedUserPoliciesInput{UserName: aws.String("dave")})
	if err != nil || len(att.AttachedPolicies) != 1 || aws.ToString(att.AttachedPolicies[0].PolicyName) != "ViewOnlyAccess" {
		t.Errorf("ListAttachedUserPolicies = %+v, %v", att, err)
	}
	pol, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String("arn:aws:iam::aws:policy/job-function/ViewOnlyAccess")})
	if err != nil || aws.ToString(pol.Policy.Path) != "/job-function/" || aws.ToInt32(pol.Policy.AttachmentCount) != 1 {
		t.Errorf("GetPolicy(AWS managed) = %+v, %v", pol, err)
	}

	// DeleteUser refuses while anything hangs off the user; each step removes one thing.
	var ak []string
	keys, _ := c.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String("dave")})
	for _, k := range keys.AccessKeyMetadata {
		ak = append(ak, aws.ToString(k.AccessKeyId))
	}
	steps := []struct {
		name string
		undo func() error
	}{
		{"login profile", func() error {
			_, err := c.DeleteLoginProfile(ctx, &iam.DeleteLoginProfileInput{UserName: aws.String("dave")})
			return err
		}},
		{"access keys", func() error {
			for _, id := range ak {
				if _, err := c.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String("dave"), AccessKeyId: aws.String(id)}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"groups", func() error {
			_, err := c.RemoveUserFromGroup(ctx, &iam.RemoveUserFromGroupInput{UserName: aws.String("dave"), GroupName: aws.String("eng")})
			return err
		}},
		{"inline policies", func() error {
			_, err := c.DeleteUserPolicy(ctx, &iam.DeleteUserPolicyInput{UserName: aws.String("dave"), PolicyName: aws.String("s3")})
			return err
		}},
		{"attached policies", func() error {
			_, err := c.DetachUserPolicy(ctx, &iam.DetachUserPolicyInput{UserName: aws.String("dave"), PolicyArn: aws.String("arn:aws:iam::aws:policy/job-function/ViewOnlyAccess")})
			return err
		}},
	}
	for _, st := range steps {
		_, err := c.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String("dave")})
		var dc *types.DeleteConflictException
		if !errors.As(err, &dc) {
			t.Fatalf("DeleteUser with %s left: %v, want DeleteConflict", st.name, err)
		}
		if err := st.undo(); err != nil {
			t.Fatalf("remove %s: %v", st.name, err)
		}
	}
	must(c.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String("dave")}))
	must(c.DeleteGroup(ctx, &iam.DeleteGroupInput{GroupName: aws.String("eng")}))
	s.Do(func(w *World) {
		a := w.AWS.Accounts[0]
		if len(a.Users) != 0 || len(a.Groups) != 0 || len(a.Policies) != 1 || !a.Policies[0].AWSManaged {
			t.Errorf("world after teardown: %d users, %d groups, policies %v", len(a.Users), len(a.Groups), a.Policies)
		}
	})
}

func TestIAMRoleAndInlineWrites(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	pretty := "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"AWS\": \"*\"}, \"Action\": \"sts:AssumeRole\"}]\n}"
	cr, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("open"), AssumeRolePolicyDocument: aws.String(iamTrust),
		MaxSessionDuration: aws.Int32(7200), Tags: []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}}})
	if err != nil || aws.ToString(cr.Role.RoleId)[:4] != "AROA" || !cr.Role.CreateDate.Equal(iamTestNow) {
		t.Fatalf("CreateRole = %+v, %v", cr, err)
	}
	if _, err := c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String("open"), PolicyDocument: aws.String(pretty)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String("open"), Tags: []types.Tag{{Key: aws.String("c"), Value: aws.String("d")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String("open"), TagKeys: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	r, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("open")})
	if err != nil {
		t.Fatal(err)
	}
	// Documents come back as written, whitespace and all, once URL-decoded.
	if d, _ := url.QueryUnescape(aws.ToString(r.Role.AssumeRolePolicyDocument)); d != pretty {
		t.Errorf("trust policy %q, want %q", d, pretty)
	}
	if len(r.Role.Tags) != 1 || aws.ToString(r.Role.Tags[0].Key) != "c" || aws.ToInt32(r.Role.MaxSessionDuration) != 7200 {
		t.Errorf("role tags %v, max session %d", r.Role.Tags, aws.ToInt32(r.Role.MaxSessionDuration))
	}

	for _, kind := range []string{"user", "role", "group"} {
		t.Run(kind, func(t *testing.T) {
			name := map[string]string{"user": "carol", "role": "open", "group": "admins"}[kind]
			var err error
			switch kind {
			case "user":
				_, err = c.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: &name, PolicyName: aws.String("p"), PolicyDocument: aws.String(iamS3Doc)})
			case "role":
				_, err = c.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: &name, PolicyName: aws.String("p"), PolicyDocument: aws.String(iamS3Doc)})
			case "group":
				_, err = c.PutGroupPolicy(ctx, &iam.PutGroupPolicyInput{GroupName: &name, PolicyName: aws.String("p"), PolicyDocument: aws.String(iamS3Doc)})
			}
			if err != nil {
				t.Fatal(err)
			}
			var doc *string
			var names []string
			switch kind {
			case "user":
				out, err := c.GetUserPolicy(ctx, &iam.GetUserPolicyInput{UserName: &name, PolicyName: aws.String("p")})
				if err != nil || aws.ToString(out.UserName) != name {
					t.Fatalf("GetUserPolicy = %+v, %v", out, err)
				}
				doc = out.PolicyDocument
				l, _ := c.ListUserPolicies(ctx, &iam.ListUserPoliciesInput{UserName: &name})
				names = l.PolicyNames
				_, err = c.DeleteUserPolicy(ctx, &iam.DeleteUserPolicyInput{UserName: &name, PolicyName: aws.String("p")})
				if err != nil {
					t.Fatal(err)
				}
			case "role":
				out, err := c.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: &name, PolicyName: aws.String("p")})
				if err != nil || aws.ToString(out.RoleName) != name {
					t.Fatalf("GetRolePolicy = %+v, %v", out, err)
				}
				doc = out.PolicyDocument
				l, _ := c.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: &name})
				names = l.PolicyNames
				_, err = c.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: &name, PolicyName: aws.String("p")})
				if err != nil {
					t.Fatal(err)
				}
			case "group":
				out, err := c.GetGroupPolicy(ctx, &iam.GetGroupPolicyInput{GroupName: &name, PolicyName: aws.String("p")})
				if err != nil || aws.ToString(out.GroupName) != name {
					t.Fatalf("GetGroupPolicy = %+v, %v", out, err)
				}
				doc = out.PolicyDocument
				l, _ := c.ListGroupPolicies(ctx, &iam.ListGroupPoliciesInput{GroupName: &name})
				names = l.PolicyNames
				_, err = c.DeleteGroupPolicy(ctx, &iam.DeleteGroupPolicyInput{GroupName: &name, PolicyName: aws.String("p")})
				if err != nil {
					t.Fatal(err)
				}
			}
			if decodeDoc(t, doc) != iamS3Doc || !slices.Contains(names, "p") {
				t.Errorf("%s policy: document %s, names %v", kind, decodeDoc(t, doc), names)
			}
		})
	}

	// Role deletion needs its policies gone first.
	if _, err := c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("open"), PolicyArn: aws.String("arn:aws:iam::111111111111:policy/x/unused")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String("open")})
	iamWantErr(t, err, "DeleteConflict", 409)
	if _, err := c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String("open"), PolicyArn: aws.String("arn:aws:iam::111111111111:policy/x/unused")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String("open")}); err != nil {
		t.Fatal(err)
	}
}

// TestIAMFaults checks that injected faults reach the SDK as IAM's error codes.
func TestIAMFaults(t *testing.T) {
	w := iamTestWorld()
	w.Faults = []Fault{{Service: "iam", Action: "ListUsers", AccessDenied: true}}
	s, _, cfg := iamTestSim(t, w, "AKIDSIM")
	c := iam.NewFromConfig(cfg, func(o *iam.Options) { o.Retryer = retry.AddWithMaxAttempts(retry.NewStandard(), 1) })
	ctx := context.Background()

	_, err := c.ListUsers(ctx, &iam.ListUsersInput{})
	iamWantErr(t, err, "AccessDenied", 403)
	if _, err := c.ListRoles(ctx, &iam.ListRolesInput{}); err != nil {
		t.Errorf("ListRoles is not faulted: %v", err)
	}
	if err := s.SetFaults([]Fault{{Service: "iam", Action: "Get*", ThrottleRate: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetAccountAuthorizationDetails(ctx, &iam.GetAccountAuthorizationDetailsInput{})
	iamWantErr(t, err, "Throttling", 400)
	if _, err := c.ListUsers(ctx, &iam.ListUsersInput{}); err != nil {
		t.Errorf("ListUsers after the faults changed: %v", err)
	}
	st := s.Calls()["iam:GetAccountAuthorizationDetails"]
	if st.Calls != 1 || st.Throttled != 1 {
		t.Errorf("call stats %+v, want one throttled call", st)
	}
}
