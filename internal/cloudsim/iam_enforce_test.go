package cloudsim

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// enforceWorld has users whose policies the enforcement tests exercise: dev (an inline
// policy of EC2 reads and one bucket, plus its group's object reads), fence (Allow
// everything but an explicit Deny, and a NotAction grant), admin (AdministratorAccess
// spelled out), viewer (ReadOnlyAccess left as the placeholder), regional (conditions),
// and a role any of them may assume.
const enforceWorld = `
aws:
  accounts:
    - id: "111111111111"
      regions: [us-east-1, eu-west-1]
      policies:
        - name: AdministratorAccess
          aws_managed: true
          document: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "*", Resource: "*"}]}
      groups:
        - name: readers
          inline_policies:
            - name: objects
              document: {Statement: [{Effect: Allow, Action: "s3:GetObject", Resource: "arn:aws:s3:::data/*"}]}
      roles:
        - name: app
          assume_role_policy: {Statement: [{Effect: Allow, Principal: {AWS: "arn:aws:iam::111111111111:root"}, Action: "sts:AssumeRole"}]}
          inline_policies:
            - name: sg
              document: {Statement: [{Effect: Allow, Action: "ec2:DescribeSecurityGroups", Resource: "*"}]}
      users:
        - name: dev
          groups: [readers]
          access_keys: [{id: AKIADEV0000000000001, secret: dev-secret}]
          inline_policies:
            - name: work
              document:
                Statement:
                  - {Effect: Allow, Action: ["ec2:Describe*", "sts:AssumeRole"], Resource: "*"}
                  - {Effect: Allow, Action: "s3:ListBucket", Resource: "arn:aws:s3:::data"}
        - name: fence
          access_keys: [{id: AKIAFEN0000000000001, secret: fence-secret}]
          inline_policies:
            - name: all-but
              document:
                Statement:
                  - {Effect: Allow, Action: "ec2:*", Resource: "*"}
                  - {Effect: Deny, Action: "ec2:DescribeSecurityGroups", Resource: "*"}
                  - {Effect: Allow, NotAction: ["iam:*", "ec2:*"], Resource: "*"}
        - name: admin
          access_keys: [{id: AKIAADM0000000000001, secret: admin-secret}]
          attached_policies: ["arn:aws:iam::aws:policy/AdministratorAccess"]
        - name: viewer
          access_keys: [{id: AKIAVIE0000000000001, secret: viewer-secret}]
          attached_policies: ["arn:aws:iam::aws:policy/ReadOnlyAccess"]
        - name: regional
          access_keys: [{id: AKIAREG0000000000001, secret: regional-secret}]
          inline_policies:
            - name: conditions
              document:
                Statement:
                  - {Effect: Allow, Action: "ec2:DescribeSecurityGroups", Resource: "*", Condition: {StringEquals: {"aws:RequestedRegion": "eu-west-1"}}}
                  - {Effect: Allow, Action: "ec2:DescribeRegions", Resource: "*", Condition: {Bool: {"aws:MultiFactorAuthPresent": "true"}}}
                  - {Effect: Allow, Action: "s3:ListAllMyBuckets", Resource: "*"}
                  - {Effect: Deny, Action: "s3:*", Resource: "*", Condition: {IpAddress: {"aws:SourceIp": "203.0.113.0/24"}}}
                  - {Effect: Allow, Action: "iam:GetUser", Resource: "arn:aws:iam::111111111111:user/${aws:username}"}
  s3:
    buckets:
      - {name: data, account: "111111111111", objects: {a.txt: {body: hi}}}
      - {name: other, account: "111111111111", objects: {b.txt: {body: ho}}}
`

// enforceSim serves enforceWorld, with enforcement on through opts or the world setting.
func enforceSim(t *testing.T, opts Options, worldSetting bool) (*Sim, *Server) {
	t.Helper()
	src := enforceWorld
	if worldSetting {
		src = strings.Replace(src, "aws:\n", "aws:\n  enforce_iam: true\n", 1)
	}
	w, err := ParseWorld([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return startSim(t, w, opts)
}

// keyConfig is an SDK configuration signing with a world user's key.
func keyConfig(srv *Server, region, akid, secret string) aws.Config {
	return aws.Config{Region: region, BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(akid, secret, "")}
}

// wantDenied checks that err is the service's AccessDenied (code, status) with exactly msg.
func wantDenied(t *testing.T, err error, code string, status int, msg string) {
	t.Helper()
	iamWantErr(t, err, code, status)
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorMessage() != msg {
		t.Errorf("message\n got %q\nwant %q", ae.ErrorMessage(), msg)
	}
}

const (
	devARN   = "arn:aws:iam::111111111111:user/dev"
	fenceARN = "arn:aws:iam::111111111111:user/fence"
)

func TestEnforceIAM_off(t *testing.T) {
	_, srv := enforceSim(t, Options{}, false)
	ctx := context.Background()
	dev := keyConfig(srv, "us-east-1", "AKIADEV0000000000001", "dev-secret")
	if _, err := iam.NewFromConfig(dev).ListUsers(ctx, &iam.ListUsersInput{}); err != nil {
		t.Errorf("ListUsers without enforcement: %v", err)
	}
	if _, err := s3Client(dev).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("other")}); err != nil {
		t.Errorf("ListObjectsV2 without enforcement: %v", err)
	}
	viewer := keyConfig(srv, "us-east-1", "AKIAVIE0000000000001", "viewer-secret")
	if _, err := ec2.NewFromConfig(viewer).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
		t.Errorf("DescribeSecurityGroups without enforcement: %v", err)
	}
}

func TestEnforceIAM_userPolicies(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         Options
		worldSetting bool
	}{
		{"option", Options{EnforceIAM: true}, false},
		{"world setting", Options{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := enforceSim(t, tc.opts, tc.worldSetting)
			ctx := context.Background()
			dev := keyConfig(srv, "us-east-1", "AKIADEV0000000000001", "dev-secret")
			if _, err := ec2.NewFromConfig(dev).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
				t.Errorf("DescribeSecurityGroups: %v", err)
			}
			s3c := s3Client(dev)
			if _, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("data")}); err != nil {
				t.Errorf("ListObjectsV2 data: %v", err)
			}
			_, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("other")})
			wantDenied(t, err, "AccessDenied", 403, `User: `+devARN+` is not authorized to perform: s3:ListBucket on resource: "arn:aws:s3:::other" because no identity-based policy allows the s3:ListBucket action`)
			// The group's policy grants the objects of data, not of other.
			if _, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("a.txt")}); err != nil {
				t.Errorf("GetObject data/a.txt (group policy): %v", err)
			}
			_, err = s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("other"), Key: aws.String("b.txt")})
			wantDenied(t, err, "AccessDenied", 403, `User: `+devARN+` is not authorized to perform: s3:GetObject on resource: "arn:aws:s3:::other/b.txt" because no identity-based policy allows the s3:GetObject action`)
			_, err = iam.NewFromConfig(dev).ListUsers(ctx, &iam.ListUsersInput{})
			wantDenied(t, err, "AccessDenied", 403, "User: "+devARN+" is not authorized to perform: iam:ListUsers on resource: arn:aws:iam::111111111111:user/ because no identity-based policy allows the iam:ListUsers action")
			_, err = secretsmanager.NewFromConfig(dev).ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
			wantDenied(t, err, "AccessDeniedException", 400, "User: "+devARN+" is not authorized to perform: secretsmanager:ListSecrets on resource: * because no identity-based policy allows the secretsmanager:ListSecrets action")
			// GetCallerIdentity needs no permission.
			if _, err := sts.NewFromConfig(dev).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
				t.Errorf("GetCallerIdentity: %v", err)
			}
			// The root (unknown credentials) is not restricted.
			if _, err := iam.NewFromConfig(iamTestConfig(srv, "AKIDROOT")).ListUsers(ctx, &iam.ListUsersInput{}); err != nil {
				t.Errorf("root ListUsers: %v", err)
			}
			// Refused calls are counted as denied and not recorded as used.
			if st := s.Calls()["iam:ListUsers"]; st.AccessDenied != 1 || st.Calls != 2 {
				t.Errorf("iam:ListUsers stats %+v, want 2 calls, 1 denied", st)
			}
			s.Do(func(w *World) {
				got := map[string]bool{}
				for _, r := range w.AWS.Accounts[0].Users[0].LastAccessed {
					got[r.Action] = true
				}
				want := map[string]bool{"ec2:DescribeSecurityGroups": true, "s3:ListBucket": true, "s3:GetObject": true, "sts:GetCallerIdentity": true}
				if len(got) != len(want) {
					t.Errorf("dev's recorded actions %v, want %v", got, want)
				}
				for a := range want {
					if !got[a] {
						t.Errorf("dev's recorded actions %v, want %v", got, want)
					}
				}
			})
		})
	}
}

func TestEnforceIAM_denyAndNotAction(t *testing.T) {
	_, srv := enforceSim(t, Options{EnforceIAM: true}, false)
	ctx := context.Background()
	fence := keyConfig(srv, "us-east-1", "AKIAFEN0000000000001", "fence-secret")
	e := ec2.NewFromConfig(fence)
	if _, err := e.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); err != nil {
		t.Errorf("DescribeRegions (ec2:*): %v", err)
	}
	// The explicit Deny wins over ec2:*.
	_, err := e.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	wantDenied(t, err, "UnauthorizedOperation", 403, "You are not authorized to perform this operation. User: "+fenceARN+" is not authorized to perform: ec2:DescribeSecurityGroups on resource: * with an explicit deny in an identity-based policy")
	// NotAction ["iam:*", "ec2:*"] grants S3 and leaves IAM out.
	if _, err := s3Client(fence).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("other")}); err != nil {
		t.Errorf("ListObjectsV2 (NotAction): %v", err)
	}
	_, err = iam.NewFromConfig(fence).GetUser(ctx, &iam.GetUserInput{})
	wantDenied(t, err, "AccessDenied", 403, "User: "+fenceARN+" is not authorized to perform: iam:GetUser on resource: "+fenceARN+" because no identity-based policy allows the iam:GetUser action")
}

func TestEnforceIAM_managedPolicies(t *testing.T) {
	_, srv := enforceSim(t, Options{}, true)
	ctx := context.Background()
	// AdministratorAccess, spelled out by the world, grants everything.
	admin := keyConfig(srv, "us-east-1", "AKIAADM0000000000001", "admin-secret")
	if _, err := iam.NewFromConfig(admin).ListUsers(ctx, &iam.ListUsersInput{}); err != nil {
		t.Errorf("admin ListUsers: %v", err)
	}
	if _, err := s3Client(admin).ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Errorf("admin ListBuckets: %v", err)
	}
	// ReadOnlyAccess, left out, is the placeholder: sts:GetCallerIdentity only.
	viewer := keyConfig(srv, "us-east-1", "AKIAVIE0000000000001", "viewer-secret")
	_, err := ec2.NewFromConfig(viewer).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	iamWantErr(t, err, "UnauthorizedOperation", 403)
}

func TestEnforceIAM_roleSession(t *testing.T) {
	s, srv := enforceSim(t, Options{EnforceIAM: true}, false)
	ctx := context.Background()
	const roleARN = "arn:aws:iam::111111111111:role/app"
	// viewer may not assume the role: the resource is the role.
	viewer := keyConfig(srv, "us-east-1", "AKIAVIE0000000000001", "viewer-secret")
	_, err := sts.NewFromConfig(viewer).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("v")})
	wantDenied(t, err, "AccessDenied", 403, "User: arn:aws:iam::111111111111:user/viewer is not authorized to perform: sts:AssumeRole on resource: "+roleARN+" because no identity-based policy allows the sts:AssumeRole action")

	dev := keyConfig(srv, "us-east-1", "AKIADEV0000000000001", "dev-secret")
	out, err := sts.NewFromConfig(dev).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("job")})
	if err != nil {
		t.Fatal(err)
	}
	cr := out.Credentials
	sess := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider(aws.ToString(cr.AccessKeyId), aws.ToString(cr.SecretAccessKey), aws.ToString(cr.SessionToken))}
	// The session has the role's policies, not dev's.
	if _, err := ec2.NewFromConfig(sess).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
		t.Errorf("session DescribeSecurityGroups: %v", err)
	}
	_, err = ec2.NewFromConfig(sess).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	wantDenied(t, err, "UnauthorizedOperation", 403, "You are not authorized to perform this operation. User: arn:aws:sts::111111111111:assumed-role/app/job is not authorized to perform: ec2:DescribeRegions on resource: * because no identity-based policy allows the ec2:DescribeRegions action")
	_, err = s3Client(sess).ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("data")})
	iamWantErr(t, err, "AccessDenied", 403)

	// Narrowing the role through IAM takes effect on the live session at once.
	admin := iam.NewFromConfig(keyConfig(srv, "us-east-1", "AKIAADM0000000000001", "admin-secret"))
	if _, err := admin.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String("app"), PolicyName: aws.String("sg")}); err != nil {
		t.Fatal(err)
	}
	_, err = ec2.NewFromConfig(sess).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	iamWantErr(t, err, "UnauthorizedOperation", 403)
	s.Do(func(w *World) {
		if r := w.AWS.Accounts[0].Roles[0].LastAccessed; len(r) != 1 || r[0].Action != "ec2:DescribeSecurityGroups" {
			t.Errorf("role's records %+v, want its one served call", r)
		}
	})
}

// TestEnforceIAM_narrowing is the right-sizing proof: after PutUserPolicy narrows dev's
// policy to what it used, every used call still succeeds and the removed ones are refused.
func TestEnforceIAM_narrowing(t *testing.T) {
	_, srv := enforceSim(t, Options{EnforceIAM: true}, false)
	ctx := context.Background()
	dev := keyConfig(srv, "us-east-1", "AKIADEV0000000000001", "dev-secret")
	e, s3c := ec2.NewFromConfig(dev), s3Client(dev)
	used := func() error {
		if _, err := e.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
			return err
		}
		_, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("data")})
		return err
	}
	if err := used(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); err != nil {
		t.Fatal(err)
	}
	admin := iam.NewFromConfig(keyConfig(srv, "us-east-1", "AKIAADM0000000000001", "admin-secret"))
	narrowed := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeSecurityGroups","Resource":"*"},` +
		`{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::data"}]}`
	if _, err := admin.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String("dev"), PolicyName: aws.String("work"), PolicyDocument: aws.String(narrowed)}); err != nil {
		t.Fatal(err)
	}
	if err := used(); err != nil {
		t.Errorf("a used call after narrowing: %v", err)
	}
	_, err := e.DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	wantDenied(t, err, "UnauthorizedOperation", 403, "You are not authorized to perform this operation. User: "+devARN+" is not authorized to perform: ec2:DescribeRegions on resource: * because no identity-based policy allows the ec2:DescribeRegions action")
	_, err = sts.NewFromConfig(dev).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111111111111:role/app"), RoleSessionName: aws.String("x1")})
	iamWantErr(t, err, "AccessDenied", 403)
}

func TestEnforceIAM_conditions(t *testing.T) {
	_, srv := enforceSim(t, Options{EnforceIAM: true}, false)
	ctx := context.Background()
	eu := keyConfig(srv, "eu-west-1", "AKIAREG0000000000001", "regional-secret")
	us := keyConfig(srv, "us-east-1", "AKIAREG0000000000001", "regional-secret")
	if _, err := ec2.NewFromConfig(eu).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
		t.Errorf("eu-west-1 DescribeSecurityGroups: %v", err)
	}
	_, err := ec2.NewFromConfig(us).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	iamWantErr(t, err, "UnauthorizedOperation", 403)
	// An Allow on a condition the simulator does not model does not apply...
	_, err = ec2.NewFromConfig(eu).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	iamWantErr(t, err, "UnauthorizedOperation", 403)
	// ...and a Deny on one does.
	_, err = s3Client(us).ListBuckets(ctx, &s3.ListBucketsInput{})
	wantDenied(t, err, "AccessDenied", 403, `User: arn:aws:iam::111111111111:user/regional is not authorized to perform: s3:ListAllMyBuckets on resource: "*" with an explicit deny in an identity-based policy`)
	// ${aws:username} names the caller.
	c := iam.NewFromConfig(us)
	if _, err := c.GetUser(ctx, &iam.GetUserInput{}); err != nil {
		t.Errorf("GetUser of oneself: %v", err)
	}
	_, err = c.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("dev")})
	iamWantErr(t, err, "AccessDenied", 403)
}

func TestEvalIdentity(t *testing.T) {
	ctx := map[string]string{"aws:requestedregion": "eu-west-1", "aws:username": "dev", "aws:principalaccount": "111111111111"}
	for _, tc := range []struct {
		name, doc, action, resource string
		want                        authzDecision
	}{
		{"allow wildcard action, case", `{"Statement":{"Effect":"Allow","Action":"EC2:describe*","Resource":"*"}}`, "ec2:DescribeRegions", "*", allowed},
		{"question mark", `{"Statement":{"Effect":"Allow","Action":"s3:?etObject","Resource":"*"}}`, "s3:GetObject", "arn:aws:s3:::b/k", allowed},
		{"no statement", `{"Statement":[]}`, "s3:GetObject", "*", implicitDeny},
		{"deny wins", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","Resource":"arn:aws:s3:::b*"}]}`, "s3:GetObject", "arn:aws:s3:::b/k", explicitDeny},
		{"deny elsewhere", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","Resource":"arn:aws:s3:::x*"}]}`, "s3:GetObject", "arn:aws:s3:::b/k", allowed},
		{"resource case-sensitive", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::B/*"}}`, "s3:GetObject", "arn:aws:s3:::b/k", implicitDeny},
		{"ARN does not grant resource *", `{"Statement":{"Effect":"Allow","Action":"ec2:*","Resource":"arn:aws:ec2:*:*:*"}}`, "ec2:DescribeRegions", "*", implicitDeny},
		{"NotResource", `{"Statement":{"Effect":"Allow","Action":"s3:*","NotResource":"arn:aws:s3:::secret/*"}}`, "s3:GetObject", "arn:aws:s3:::b/k", allowed},
		{"NotResource excludes", `{"Statement":{"Effect":"Allow","Action":"s3:*","NotResource":"arn:aws:s3:::secret/*"}}`, "s3:GetObject", "arn:aws:s3:::secret/k", implicitDeny},
		{"NotAction deny", `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","NotAction":"s3:*","Resource":"*"}]}`, "ec2:DescribeRegions", "*", explicitDeny},
		{"variable", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::home/${aws:username}/*"}}`, "s3:GetObject", "arn:aws:s3:::home/dev/k", allowed},
		{"variable other user", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::home/${aws:username}/*"}}`, "s3:GetObject", "arn:aws:s3:::home/ops/k", implicitDeny},
		{"unknown variable: allow does not apply", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::${aws:PrincipalTag/team}/*"}}`, "s3:GetObject", "arn:aws:s3:::a/k", implicitDeny},
		{"unknown variable: deny applies", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","Resource":"arn:aws:s3:::${aws:PrincipalTag/team}/*"}]}`, "s3:GetObject", "arn:aws:s3:::a/k", explicitDeny},
		{"condition met", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringLike":{"aws:RequestedRegion":["us-*","eu-*"]}}}}`, "s3:GetObject", "arn:aws:s3:::a/k", allowed},
		{"condition not met", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringNotEquals":{"aws:RequestedRegion":"eu-west-1"}}}}`, "s3:GetObject", "arn:aws:s3:::a/k", implicitDeny},
		{"deny condition not met", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"}}}]}`, "s3:GetObject", "arn:aws:s3:::a/k", allowed},
		{"known false beats unknown", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Deny","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":"us-east-1"},"Bool":{"aws:SecureTransport":"false"}}}]}`, "s3:GetObject", "arn:aws:s3:::a/k", allowed},
		{"absent key, IfExists", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEqualsIfExists":{"aws:PrincipalType":"User"}}}}`, "s3:GetObject", "arn:aws:s3:::a/k", allowed},
		{"absent key", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalType":"User"}}}}`, "s3:GetObject", "arn:aws:s3:::a/k", implicitDeny},
		{"multivalued qualifier", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"ForAnyValue:StringEquals":{"aws:RequestedRegion":"eu-west-1"}}}}`, "s3:GetObject", "arn:aws:s3:::a/k", implicitDeny},
		{"malformed statement skipped", `{"Statement":[{"Effect":"allow","Action":"*","Resource":"*"},{"Effect":"Allow","Action":"*"}]}`, "s3:GetObject", "*", implicitDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := evalIdentity(parseStatements([]Doc{Doc(tc.doc)}), authzRequest{Action: tc.action, Resource: tc.resource, Context: ctx})
			if got != tc.want {
				t.Errorf("evalIdentity = %d, want %d", got, tc.want)
			}
		})
	}
}

// FuzzEnforcedRequest throws arbitrary Query and JSON requests, signed by a world user's
// key, at an enforcing simulator: deriving the resource of any request and evaluating the
// user's policies must answer with a result or an AWS error, never a panic or a 5xx; and a
// call on the one ARN the user is denied (user/boss) is refused whatever it is.
func FuzzEnforcedRequest(f *testing.F) {
	f.Add("iam", "Action=ListUsers&Version=2010-05-08&PathPrefix=/x/")
	f.Add("iam", "Action=GetAccessKeyLastUsed&AccessKeyId=AKIDFUZZ&Version=2010-05-08")
	f.Add("iam", "Action=DeleteUser&UserName=boss&Version=2010-05-08")
	f.Add("iam", "Action=AttachUserPolicy&UserName=boss&PolicyArn=arn:aws:iam::aws:policy/X&Version=2010-05-08")
	f.Add("iam", "Action=CreatePolicy&PolicyName=p&Path=/a/&PolicyDocument=%7B%7D&Version=2010-05-08")
	f.Add("ec2", "Action=CreateTags&ResourceId.1=sg-1&Tag.1.Key=k&Tag.1.Value=v&Version=2016-11-15")
	f.Add("sts", "Action=AssumeRole&RoleArn=arn:aws:iam::111111111111:role/r&RoleSessionName=s")
	f.Add("acm", `{"CertificateArn": "arn:aws:acm:us-east-1:111111111111:certificate/x"}`)
	f.Add("secretsmanager", `{"SecretId": "s"}`)
	targets := map[string]string{"acm": "CertificateManager.DescribeCertificate", "secretsmanager": "secretsmanager.DescribeSecret"}
	f.Fuzz(func(t *testing.T, service, body string) {
		doc := Doc(`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":"*","Resource":"arn:aws:iam::111111111111:user/boss"}]}`)
		s, err := New(&World{AWS: AWS{EnforceIAM: true, Accounts: []*Account{{ID: "111111111111",
			Users: []*User{
				{Name: "a", AccessKeys: []*AccessKey{{ID: "AKIDFUZZ"}}, InlinePolicies: []InlinePolicy{{Name: "p", Document: doc}}},
				{Name: "boss"},
			},
			SecurityGroups: []*SecurityGroup{{ID: "sg-1", Name: "g", Region: "us-east-1"}},
			Secrets:        []*Secret{{Name: "s", Region: "us-east-1", String: "v"}}}},
		}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDFUZZ/20261202/us-east-1/"+service+"/aws4_request, SignedHeaders=host, Signature=0")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tg := targets[service]; tg != "" {
			req.Header.Set("X-Amz-Target", tg)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Errorf("%s %q: status %d: %s", service, body, rec.Code, rec.Body.String())
		}
		if form, err := url.ParseQuery(body); err == nil && service == "iam" && form.Get("UserName") == "boss" &&
			!strings.Contains(form.Get("Action"), "Group") && rec.Code < 300 {
			t.Errorf("%s %q on user/boss: status %d, want refused", service, body, rec.Code)
		}
	})
}
