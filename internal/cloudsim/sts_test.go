package cloudsim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
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
