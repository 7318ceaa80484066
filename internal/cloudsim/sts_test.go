package cloudsim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

func TestSTSGetCallerIdentity(t *testing.T) {
	_, srv, _ := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	tests := []struct {
		name                 string
		akid                 string
		account, arn, userID string
	}{
		{"unknown key: the caller account's root", "AKIDSIM", iamTestAcct, "arn:aws:iam::111111111111:root", iamTestAcct},
		{"a user's key", iamAliceKey, iamTestAcct, "arn:aws:iam::111111111111:user/alice", makeID("AIDA", iamTestAcct+"/user/alice", 17)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sts.NewFromConfig(iamTestConfig(srv, tc.akid)).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(out.Account) != tc.account || aws.ToString(out.Arn) != tc.arn || aws.ToString(out.UserId) != tc.userID {
				t.Errorf("GetCallerIdentity = %s %s %s, want %s %s %s", aws.ToString(out.Account), aws.ToString(out.Arn),
					aws.ToString(out.UserId), tc.account, tc.arn, tc.userID)
			}
		})
	}
}

// TestSTSAssumeRole assumes a role of the second account and acts there with the
// temporary credentials.
func TestSTSAssumeRole(t *testing.T) {
	s, srv, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	ctx := context.Background()
	roleArn := "arn:aws:iam::222222222222:role/OrganizationAccountAccessRole"
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleArn),
		RoleSessionName: aws.String("warden"), DurationSeconds: aws.Int32(7200)})
	if err != nil {
		t.Fatal(err)
	}
	cr := out.Credentials
	if !strings.HasPrefix(aws.ToString(cr.AccessKeyId), "ASIA") || len(aws.ToString(cr.AccessKeyId)) != 20 ||
		aws.ToString(cr.SecretAccessKey) == "" || aws.ToString(cr.SessionToken) == "" || !cr.Expiration.Equal(iamTestNow.Add(2*time.Hour)) {
		t.Errorf("credentials %+v", cr)
	}
	sessionARN := "arn:aws:sts::222222222222:assumed-role/OrganizationAccountAccessRole/warden"
	if aws.ToString(out.AssumedRoleUser.Arn) != sessionARN || !strings.HasSuffix(aws.ToString(out.AssumedRoleUser.AssumedRoleId), ":warden") {
		t.Errorf("assumed role user %+v", out.AssumedRoleUser)
	}

	assumed := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken))}
	id, err := sts.NewFromConfig(assumed).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(id.Account) != iamTestOther || aws.ToString(id.Arn) != sessionARN || aws.ToString(id.UserId) != aws.ToString(out.AssumedRoleUser.AssumedRoleId) {
		t.Errorf("identity with the role's credentials = %s %s %s", aws.ToString(id.Account), aws.ToString(id.Arn), aws.ToString(id.UserId))
	}
	roles, err := iam.NewFromConfig(assumed).ListRoles(ctx, &iam.ListRolesInput{})
	if err != nil || len(roles.Roles) != 1 || !strings.Contains(aws.ToString(roles.Roles[0].Arn), ":222222222222:") {
		t.Errorf("IAM with the role's credentials = %+v, %v", roles, err)
	}
	// A role session must name the user whose keys it lists.
	_, err = iam.NewFromConfig(assumed).ListAccessKeys(ctx, &iam.ListAccessKeysInput{})
	iamWantErr(t, err, "ValidationError", 400)
	s.Do(func(w *World) {
		r := w.AWS.Accounts[1].Roles[0]
		if r.LastUsed == nil || !r.LastUsed.Equal(iamTestNow) {
			t.Errorf("role last used %v, want now", r.LastUsed)
		}
	})

	// Role chaining is capped at an hour.
	_, err = sts.NewFromConfig(assumed).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleArn),
		RoleSessionName: aws.String("chain"), DurationSeconds: aws.Int32(7200)})
	iamWantErr(t, err, "ValidationError", 400)
}

func TestSTSAssumeRoleErrors(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := sts.NewFromConfig(cfg)
	tests := []struct {
		name     string
		arn      string
		session  string
		duration int32
		code     string
		status   int
	}{
		{"unknown role", "arn:aws:iam::222222222222:role/nope", "s1", 0, "AccessDenied", 403},
		{"account not in the world", "arn:aws:iam::333333333333:role/OrganizationAccountAccessRole", "s1", 0, "AccessDenied", 403},
		{"not a role ARN", "arn:aws:iam::222222222222:user/OrganizationAccountAccessRole", "s1", 0, "AccessDenied", 403},
		{"role path must match", "arn:aws:iam::111111111111:role/deployer", "s1", 0, "AccessDenied", 403},
		{"longer than the role allows", "arn:aws:iam::111111111111:role/ci/deployer", "s1", 7200, "ValidationError", 400},
		{"session name with spaces", "arn:aws:iam::111111111111:role/ci/deployer", "a b", 0, "ValidationError", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &sts.AssumeRoleInput{RoleArn: aws.String(tc.arn), RoleSessionName: aws.String(tc.session)}
			if tc.duration > 0 {
				in.DurationSeconds = aws.Int32(tc.duration)
			}
			_, err := c.AssumeRole(context.Background(), in)
			iamWantErr(t, err, tc.code, tc.status)
		})
	}
}

func TestSTSFaults(t *testing.T) {
	w := iamTestWorld()
	w.Faults = []Fault{{Service: "sts", ThrottleRate: 1}}
	_, _, cfg := iamTestSim(t, w, "AKIDSIM")
	cfg.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
	_, err := sts.NewFromConfig(cfg).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	iamWantErr(t, err, "Throttling", 400)
	// IAM in the same account is not affected.
	if _, err := iam.NewFromConfig(cfg).ListUsers(context.Background(), &iam.ListUsersInput{}); err != nil {
		t.Errorf("ListUsers: %v", err)
	}
}

// TestSTSKnownKeys: a key the simulator knows is held to AWS's rules, on every service;
// a key it does not know is still accepted with any secret.
func TestSTSKnownKeys(t *testing.T) {
	w := iamTestWorld()
	w.AWS.Accounts[0].SecurityGroups = []*SecurityGroup{{ID: "sg-1", Name: "g", Region: "us-east-1"}}
	sim, srv, cfg := iamTestSim(t, w, "AKIDSIM")
	ctx := context.Background()
	admin := iam.NewFromConfig(cfg)
	if _, err := admin.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("deploy"), Path: aws.String("/ci/")}); err != nil {
		t.Fatal(err)
	}
	key, err := admin.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("deploy")})
	if err != nil {
		t.Fatal(err)
	}
	id, secret := aws.ToString(key.AccessKey.AccessKeyId), aws.ToString(key.AccessKey.SecretAccessKey)
	as := func(akid, secret string) aws.Config {
		c := iamTestConfig(srv, akid)
		c.Credentials = credentials.NewStaticCredentialsProvider(akid, secret, "")
		c.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
		return c
	}
	deployARN := "arn:aws:iam::111111111111:user/ci/deploy"
	whoami := func(cfg aws.Config) (string, error) {
		out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.Arn) + " " + aws.ToString(out.UserId) + " " + aws.ToString(out.Account), nil
	}
	deployID := makeID("AIDA", iamTestAcct+"/user/deploy", 17)
	tests := []struct {
		name      string
		akid, sec string
		identity  string
		code      string
		status    int
	}{
		{"a created key is its user", id, secret, deployARN + " " + deployID + " " + iamTestAcct, "", 0},
		{"a created key with a wrong secret", id, "not-the-secret", "", "SignatureDoesNotMatch", 403},
		{"an unknown key, any secret", "AKIDANYONE", "whatever", "arn:aws:iam::111111111111:root " + iamTestAcct + " " + iamTestAcct, "", 0},
		{"a world key without a secret, any secret", iamAliceKey, "whatever", "arn:aws:iam::111111111111:user/alice " + makeID("AIDA", iamTestAcct+"/user/alice", 17) + " " + iamTestAcct, "", 0},
		{"an inactive world key", "AKIAALICE0000002", "whatever", "", "InvalidClientTokenId", 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := whoami(as(tc.akid, tc.sec))
			if tc.code != "" {
				iamWantErr(t, err, tc.code, tc.status)
				return
			}
			if err != nil || got != tc.identity {
				t.Errorf("GetCallerIdentity = %q, %v; want %q", got, err, tc.identity)
			}
		})
	}
	// Using the key is recorded as its last use.
	lu, err := admin.GetAccessKeyLastUsed(ctx, &iam.GetAccessKeyLastUsedInput{AccessKeyId: aws.String(id)})
	if err != nil || aws.ToString(lu.AccessKeyLastUsed.ServiceName) != "sts" || !aws.ToTime(lu.AccessKeyLastUsed.LastUsedDate).Equal(iamTestNow) {
		t.Errorf("last use of the key = %+v, %v; want sts now", lu.AccessKeyLastUsed, err)
	}

	// Deactivated, the key is refused by every service, each in its own words, and a
	// refused write changes nothing.
	if _, err := admin.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("deploy"), AccessKeyId: aws.String(id), Status: "Inactive"}); err != nil {
		t.Fatal(err)
	}
	services := []struct {
		name   string
		call   func(cfg aws.Config) error
		code   string
		status int
	}{
		{"sts", func(cfg aws.Config) error { _, err := whoami(cfg); return err }, "InvalidClientTokenId", 403},
		{"iam write", func(cfg aws.Config) error {
			_, err := iam.NewFromConfig(cfg).CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("mallory")})
			return err
		}, "InvalidClientTokenId", 403},
		{"ec2", func(cfg aws.Config) error {
			_, err := ec2.NewFromConfig(cfg).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
			return err
		}, "AuthFailure", 401},
		{"secretsmanager", func(cfg aws.Config) error {
			_, err := secretsmanager.NewFromConfig(cfg).ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
			return err
		}, "UnrecognizedClientException", 400},
	}
	for _, tc := range services {
		t.Run("inactive: "+tc.name, func(t *testing.T) { iamWantErr(t, tc.call(as(id, secret)), tc.code, tc.status) })
	}
	if _, err := admin.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("mallory")}); sdkErrCode(err) != "NoSuchEntity" {
		t.Errorf("a write refused for its credentials made a user: %v", err)
	}
	if st := sim.Calls()["iam:CreateUser"]; st.AccessDenied != 1 {
		t.Errorf("the refused CreateUser is counted %+v, want one denied call", st)
	}

	// Active again, it works again; a wrong secret is refused by every service.
	if _, err := admin.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("deploy"), AccessKeyId: aws.String(id), Status: "Active"}); err != nil {
		t.Fatal(err)
	}
	if got, err := whoami(as(id, secret)); err != nil || !strings.HasPrefix(got, deployARN) {
		t.Errorf("reactivated key: %q, %v", got, err)
	}
	badSig := map[string]struct {
		code   string
		status int
	}{"sts": {"SignatureDoesNotMatch", 403}, "iam write": {"SignatureDoesNotMatch", 403}, "ec2": {"AuthFailure", 401}, "secretsmanager": {"InvalidSignatureException", 400}}
	for _, tc := range services {
		t.Run("wrong secret: "+tc.name, func(t *testing.T) {
			iamWantErr(t, tc.call(as(id, secret+"x")), badSig[tc.name].code, badSig[tc.name].status)
		})
	}

	// Deleted, it is refused as AWS refuses a key that no longer exists.
	if _, err := admin.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String("deploy"), AccessKeyId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	_, err = whoami(as(id, secret))
	iamWantErr(t, err, "InvalidClientTokenId", 403)
}

// TestSTSAssumedRoleSignature: the temporary credentials of an assumed role must be used
// with their own secret.
func TestSTSAssumedRoleSignature(t *testing.T) {
	_, srv, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	ctx := context.Background()
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::222222222222:role/OrganizationAccountAccessRole"),
		RoleSessionName: aws.String("warden")})
	if err != nil {
		t.Fatal(err)
	}
	cr := out.Credentials
	for _, tc := range []struct {
		name, secret, code string
	}{
		{"its secret", aws.ToString(cr.SecretAccessKey), ""},
		{"another secret", "secret", "SignatureDoesNotMatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Retryer: func() aws.Retryer { return aws.NopRetryer{} },
				Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), tc.secret, aws.ToString(cr.SessionToken))}
			_, err := sts.NewFromConfig(c).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if tc.code == "" && err != nil {
				t.Fatal(err)
			}
			if tc.code != "" {
				iamWantErr(t, err, tc.code, 403)
			}
		})
	}
}
