package cloudsim

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// TestIAMErrors checks that failures reach the SDK as IAM's typed errors and statuses.
func TestIAMErrors(t *testing.T) {
	_, _, cfg := iamTestSim(t, iamTestWorld(), "AKIDSIM")
	c := iam.NewFromConfig(cfg)
	ctx := context.Background()
	tests := []struct {
		name   string
		call   func() error
		code   string
		status int
		typed  any // a pointer to the SDK's error type, or nil
	}{
		{"unknown user", func() error {
			_, err := c.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("nobody")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"unknown role", func() error {
			_, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("nobody")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"unknown policy", func() error {
			_, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String("arn:aws:iam::111111111111:policy/nope")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"unknown policy version", func() error {
			_, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String("arn:aws:iam::111111111111:policy/deploy"), VersionId: aws.String("v9")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"unknown inline policy", func() error {
			_, err := c.GetUserPolicy(ctx, &iam.GetUserPolicyInput{UserName: aws.String("alice"), PolicyName: aws.String("nope")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"user exists, whatever the case", func() error {
			_, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("Alice")})
			return err
		}, "EntityAlreadyExists", 409, new(*types.EntityAlreadyExistsException)},
		{"role exists", func() error {
			_, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("deployer"), AssumeRolePolicyDocument: aws.String(iamTrust)})
			return err
		}, "EntityAlreadyExists", 409, new(*types.EntityAlreadyExistsException)},
		{"third access key", func() error {
			_, err := c.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("alice")})
			return err
		}, "LimitExceeded", 409, new(*types.LimitExceededException)},
		{"delete a user with keys", func() error {
			_, err := c.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String("alice")})
			return err
		}, "DeleteConflict", 409, new(*types.DeleteConflictException)},
		{"delete an attached policy", func() error {
			_, err := c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: aws.String("arn:aws:iam::111111111111:policy/deploy")})
			return err
		}, "DeleteConflict", 409, new(*types.DeleteConflictException)},
		{"delete a group with members", func() error {
			_, err := c.DeleteGroup(ctx, &iam.DeleteGroupInput{GroupName: aws.String("admins")})
			return err
		}, "DeleteConflict", 409, new(*types.DeleteConflictException)},
		{"policy that is not JSON", func() error {
			_, err := c.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String("bob"), PolicyName: aws.String("x"), PolicyDocument: aws.String("{Statement: [")})
			return err
		}, "MalformedPolicyDocument", 400, new(*types.MalformedPolicyDocumentException)},
		{"policy without statements", func() error {
			_, err := c.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("x"), PolicyDocument: aws.String(`{"Version":"2012-10-17"}`)})
			return err
		}, "MalformedPolicyDocument", 400, new(*types.MalformedPolicyDocumentException)},
		{"trust policy that is not JSON", func() error {
			_, err := c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String("idle"), PolicyDocument: aws.String("[]")})
			return err
		}, "MalformedPolicyDocument", 400, new(*types.MalformedPolicyDocumentException)},
		{"MaxItems out of range", func() error {
			_, err := c.ListUsers(ctx, &iam.ListUsersInput{MaxItems: aws.Int32(1001)})
			return err
		}, "ValidationError", 400, nil},
		{"bad marker", func() error {
			_, err := c.ListRoles(ctx, &iam.ListRolesInput{Marker: aws.String("not-a-marker")})
			return err
		}, "ValidationError", 400, nil},
		{"bad user name", func() error {
			_, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("a b")})
			return err
		}, "ValidationError", 400, nil},
		{"bad path", func() error {
			_, err := c.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("x"), Path: aws.String("ops")})
			return err
		}, "ValidationError", 400, nil},
		{"bad policy scope", func() error {
			_, err := c.ListPolicies(ctx, &iam.ListPoliciesInput{Scope: "Everything"})
			return err
		}, "ValidationError", 400, nil},
		{"bad GAAD filter", func() error {
			_, err := c.GetAccountAuthorizationDetails(ctx, &iam.GetAccountAuthorizationDetailsInput{Filter: []types.EntityType{"Robot"}})
			return err
		}, "ValidationError", 400, nil},
		{"weak password", func() error {
			_, err := c.CreateLoginProfile(ctx, &iam.CreateLoginProfileInput{UserName: aws.String("carol"), Password: aws.String("short")})
			return err
		}, "PasswordPolicyViolation", 400, new(*types.PasswordPolicyViolationException)},
		{"login profile exists", func() error {
			_, err := c.CreateLoginProfile(ctx, &iam.CreateLoginProfileInput{UserName: aws.String("alice"), Password: aws.String("Correct-Horse-Battery-9")})
			return err
		}, "EntityAlreadyExists", 409, new(*types.EntityAlreadyExistsException)},
		{"detach a policy not attached", func() error {
			_, err := c.DetachGroupPolicy(ctx, &iam.DetachGroupPolicyInput{GroupName: aws.String("admins"), PolicyArn: aws.String("arn:aws:iam::111111111111:policy/x/unused")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"attach a policy of another account", func() error {
			_, err := c.AttachUserPolicy(ctx, &iam.AttachUserPolicyInput{UserName: aws.String("bob"), PolicyArn: aws.String("arn:aws:iam::999999999999:policy/x")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"garbage server certificate", func() error {
			_, err := c.UploadServerCertificate(ctx, &iam.UploadServerCertificateInput{ServerCertificateName: aws.String("x"),
				CertificateBody: aws.String("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), PrivateKey: aws.String("k")})
			return err
		}, "MalformedCertificate", 400, new(*types.MalformedCertificateException)},
		{"unknown server certificate", func() error {
			_, err := c.GetServerCertificate(ctx, &iam.GetServerCertificateInput{ServerCertificateName: aws.String("nope")})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
		{"no password policy once deleted", func() error {
			_, err := c.DeleteAccountPasswordPolicy(ctx, &iam.DeleteAccountPasswordPolicyInput{})
			if err != nil {
				return err
			}
			_, err = c.GetAccountPasswordPolicy(ctx, &iam.GetAccountPasswordPolicyInput{})
			return err
		}, "NoSuchEntity", 404, new(*types.NoSuchEntityException)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			iamWantErr(t, err, tc.code, tc.status)
			if tc.typed != nil && !errors.As(err, tc.typed) {
				t.Errorf("error %T is not %T", err, tc.typed)
			}
		})
	}
}
