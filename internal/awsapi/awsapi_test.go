package awsapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/urgency"
)

// world is an organisation of three accounts; 333333333333 lacks the organisation role.
func world() *cloudsim.World {
	trust := cloudsim.Doc(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:root"},"Action":"sts:AssumeRole"}]}`)
	acct := func(id string, role bool) *cloudsim.Account {
		a := &cloudsim.Account{ID: id, Regions: []string{"us-east-1", "eu-west-1"},
			Users: []*cloudsim.User{{Name: "alice", Created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}},
			SecurityGroups: []*cloudsim.SecurityGroup{{ID: "sg-0000000000000001", Name: "web", Region: "eu-west-1", Description: "web",
				Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "0.0.0.0/0"}}}}}
		if role {
			a.Roles = []*cloudsim.Role{{Name: "OrganizationAccountAccessRole", AssumeRolePolicy: trust,
				AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"}}}
			a.Policies = []*cloudsim.Policy{{Name: "AdministratorAccess", AWSManaged: true,
				Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`}}
		}
		return a
	}
	return &cloudsim.World{AWS: cloudsim.AWS{
		Organization: &cloudsim.Organization{ID: "o-test000001", Management: "111111111111"},
		Accounts:     []*cloudsim.Account{acct("111111111111", false), acct("222222222222", true), acct("333333333333", false)},
	}}
}

// start serves w and returns sessions against it, with opts' zero limits unlimited and
// backoff in milliseconds.
func start(t *testing.T, w *cloudsim.World, opts awsapi.Options) (*awsapi.Sessions, *cloudsim.Sim) {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	opts.Endpoint = url
	sdk := simtest.AWSConfig(url)
	opts.AWS = &sdk
	if opts.RateLimits == nil {
		opts.RateLimits = map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0, "secretsmanager": 0}
	}
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff, opts.MaxBackoff = time.Millisecond, 10*time.Millisecond
	}
	s, err := awsapi.NewSessions(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, sim
}

func TestSessions_opensCallerAndMembersOnce(t *testing.T) {
	s, sim := start(t, world(), awsapi.Options{})
	ctx := context.Background()
	id, arn, err := s.Caller(ctx)
	if err != nil || id != "111111111111" || !strings.HasPrefix(arn, "arn:aws:") {
		t.Fatalf("Caller = %q, %q, %v; want 111111111111 and its ARN", id, arn, err)
	}
	self, err := s.Account(ctx, "")
	if err != nil || self.ID() != "111111111111" || self.Partition() != "aws" {
		t.Fatalf("Account(\"\") = %v, %v; want the caller's", self, err)
	}
	if again, _ := s.Account(ctx, "111111111111"); again != self {
		t.Error("the caller's account by id is not the caller's account")
	}
	member, err := s.Account(ctx, "222222222222")
	if err != nil || member.ID() != "222222222222" {
		t.Fatalf("Account(member) = %v, %v", member, err)
	}
	// The member's clients speak as the assumed role, in the member account.
	if _, err := member.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")}); err != nil {
		t.Fatalf("GetUser in the member account: %v", err)
	}
	if again, _ := s.Account(ctx, "222222222222"); again != member {
		t.Error("a member account was opened twice")
	}
	// The session lasts an hour (awsapi.SessionDuration), and is renewed 2.5 to 5
	// minutes before it ends: the cache's expiry is the session's, less that.
	creds, err := member.IAM().Options().Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(creds.Expires); !creds.CanExpire || left < awsapi.SessionDuration-5*time.Minute-time.Minute || left > awsapi.SessionDuration-150*time.Second {
		t.Errorf("the member's credentials are renewed in %v (can expire: %v), want within %v less 2.5 to 5 minutes", left, creds.CanExpire, awsapi.SessionDuration)
	}
	if n := sim.Calls()["sts:AssumeRole"].Calls; n != 1 {
		t.Errorf("AssumeRole called %d times, want once", n)
	}
	if n := sim.Calls()["sts:GetCallerIdentity"].Calls; n != 1 {
		t.Errorf("GetCallerIdentity called %d times, want once", n)
	}
}

func TestSessions_unassumableAccountFailsAndIsRetried(t *testing.T) {
	s, sim := start(t, world(), awsapi.Options{MaxAttempts: 1})
	ctx := context.Background()
	for i := range 2 {
		_, err := s.Account(ctx, "333333333333")
		if err == nil || !strings.Contains(err.Error(), "arn:aws:iam::333333333333:role/OrganizationAccountAccessRole") {
			t.Fatalf("attempt %d: Account = %v, want an error naming the role", i, err)
		}
		if !awsapi.IsDenied(err) {
			t.Errorf("attempt %d: %v (code %q) is not classified as denied", i, err, awsapi.Code(err))
		}
	}
	if n := sim.Calls()["sts:AssumeRole"].Calls; n != 2 {
		t.Errorf("AssumeRole called %d times, want 2: a failure is not kept", n)
	}
}

// TestClassification reads AWS's own answers through the real clients: each is
// classified as exactly one of not found, denied, throttled, or none.
func TestClassification(t *testing.T) {
	tests := []struct {
		name   string
		faults []cloudsim.Fault
		call   func(ctx context.Context, a *awsapi.Account) error
		code   string
		kind   string // notfound, denied, throttled, ""
	}{
		{"IAM user gone", nil, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("nobody")})
			return err
		}, "NoSuchEntity", "notfound"},
		{"security group gone", nil, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.EC2("eu-west-1").DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-00000000000000ff"}})
			return err
		}, "InvalidGroup.NotFound", "notfound"},
		{"rule gone", nil, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.EC2("eu-west-1").RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String("sg-0000000000000001"),
				IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"), FromPort: aws.Int32(22), ToPort: aws.Int32(22),
					IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
			return err
		}, "InvalidPermission.NotFound", "notfound"},
		{"IAM denied", []cloudsim.Fault{{Service: "iam", AccessDenied: true}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("nobody")})
			return err
		}, "AccessDenied", "denied"},
		{"EC2 denied", []cloudsim.Fault{{Service: "ec2", AccessDenied: true}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.EC2("eu-west-1").DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
			return err
		}, "UnauthorizedOperation", "denied"},
		{"IAM throttled", []cloudsim.Fault{{Service: "iam", ThrottleRate: 1}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
			return err
		}, "Throttling", "throttled"},
		{"EC2 throttled", []cloudsim.Fault{{Service: "ec2", ThrottleRate: 1}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.EC2("eu-west-1").DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
			return err
		}, "RequestLimitExceeded", "throttled"},
		{"secret gone", nil, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.SecretsManager("eu-west-1").GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("nope")})
			return err
		}, "ResourceNotFoundException", "notfound"},
		{"Secrets Manager denied", []cloudsim.Fault{{Service: "secretsmanager", AccessDenied: true}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.SecretsManager("eu-west-1").ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
			return err
		}, "AccessDeniedException", "denied"},
		{"Secrets Manager throttled", []cloudsim.Fault{{Service: "secretsmanager", ThrottleRate: 1}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.SecretsManager("eu-west-1").ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
			return err
		}, "ThrottlingException", "throttled"},
		{"server error", []cloudsim.Fault{{Service: "iam", ErrorRate: 1}}, func(ctx context.Context, a *awsapi.Account) error {
			_, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
			return err
		}, "ServiceUnavailable", ""},
		{"cancelled", nil, func(ctx context.Context, a *awsapi.Account) error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
			return err
		}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			w.Faults = tc.faults
			s, _ := start(t, w, awsapi.Options{MaxAttempts: 2})
			ctx := context.Background()
			a, err := s.Account(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(ctx, a)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if got := awsapi.Code(err); got != tc.code {
				t.Errorf("Code = %q, want %q (%v)", got, tc.code, err)
			}
			got := map[string]bool{"notfound": awsapi.IsNotFound(err), "denied": awsapi.IsDenied(err), "throttled": awsapi.IsThrottled(err)}
			for kind, is := range got {
				if is != (kind == tc.kind) {
					t.Errorf("Is%s = %v, want %v", kind, is, kind == tc.kind)
				}
			}
		})
	}
}

// TestAccount_pacesEveryAttempt: at 20 calls/s, six calls take at least 250ms (the first
// is free), and the simulator sees them all.
func TestAccount_pacesEveryAttempt(t *testing.T) {
	s, sim := start(t, world(), awsapi.Options{RateLimits: map[string]float64{"iam": 20, "sts": 0}})
	ctx := context.Background()
	a, err := s.Account(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	cl := a.IAM()
	start := time.Now()
	for range 6 {
		if _, err := cl.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")}); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 240*time.Millisecond {
		t.Errorf("6 calls at 20/s took %v, want at least 250ms", d)
	}
	// Another client of the same account shares the bucket.
	start = time.Now()
	if _, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("a new client's call right after took %v: it did not wait for the account's bucket", d)
	}
	if n := sim.Calls()["iam:GetUser"].Calls; n != 7 {
		t.Errorf("simulator served %d GetUser calls, want 7", n)
	}
}

// TestAccount_yieldsToUrgentWork: a call under a gate waits while urgent work runs, and
// is sent when it leaves; urgent work's own calls do not wait.
func TestAccount_yieldsToUrgentWork(t *testing.T) {
	s, sim := start(t, world(), awsapi.Options{})
	a, err := s.Account(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	g := urgency.NewGate(time.Minute)
	leave := g.Enter()
	gated := urgency.WithGate(context.Background(), g)
	started := time.Now()
	if _, err := a.IAM().GetUser(urgency.Urgent(gated), &iam.GetUserInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(started); d > 5*time.Second {
		t.Fatalf("the urgent work's own call waited %v", d)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.IAM().GetUser(gated, &iam.GetUserInput{UserName: aws.String("alice")})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if n := sim.Calls()["iam:GetUser"].Calls; n != 1 {
		t.Fatalf("simulator served %d GetUser calls while urgent work ran, want the urgent one only", n)
	}
	leave()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call still waits after the urgent work left")
	}
	if n := sim.Calls()["iam:GetUser"].Calls; n != 2 {
		t.Fatalf("simulator served %d GetUser calls, want 2", n)
	}
}

// TestAccount_retriesThrottlingAndCounts: under a throttling storm every call succeeds
// after retries, and a Counter sees each attempt the simulator served.
func TestAccount_retriesThrottlingAndCounts(t *testing.T) {
	w := world()
	w.Faults = []cloudsim.Fault{{Service: "iam", ThrottleRate: 0.5}, {Service: "iam", ErrorRate: 0.1}}
	w.Seed = 3
	s, sim := start(t, w, awsapi.Options{MaxAttempts: 30})
	ctx := context.Background()
	a, err := s.Account(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var c awsapi.Counter
	cl := a.IAM(func(o *iam.Options) { o.APIOptions = append(o.APIOptions, c.Middleware()) })
	for range 20 {
		if _, err := cl.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")}); err != nil {
			t.Fatalf("GetUser failed despite retries: %v", err)
		}
	}
	st := sim.Calls()["iam:GetUser"]
	if c.Calls() != st.Calls || c.Throttled() != st.Throttled || c.Throttled() == 0 {
		t.Errorf("counted %d calls, %d throttled; the simulator served %d, %d throttled", c.Calls(), c.Throttled(), st.Calls, st.Throttled)
	}
	if c.Calls() <= 20 {
		t.Errorf("%d attempts for 20 calls in a storm: nothing was retried", c.Calls())
	}
}

func TestCounter_countsDenied(t *testing.T) {
	w := world()
	w.Faults = []cloudsim.Fault{{Service: "ec2", AccessDenied: true}}
	s, _ := start(t, w, awsapi.Options{})
	ctx := context.Background()
	a, err := s.Account(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var c awsapi.Counter
	_, err = a.EC2("eu-west-1", func(o *ec2.Options) { o.APIOptions = append(o.APIOptions, c.Middleware()) }).
		DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	if !awsapi.IsDenied(err) || c.Calls() != 1 || c.Denied() != 1 || c.Throttled() != 0 {
		t.Errorf("err %v; counted %d calls, %d denied, %d throttled; want 1 denied call, not retried", err, c.Calls(), c.Denied(), c.Throttled())
	}
}

// TestRedact: the request AWS echoes back after a bad signature carries the session
// token; neither an error's text nor Message keeps it.
func TestRedact(t *testing.T) {
	const token = "FwoGZXIvYXdzELEAKEDSESSIONTOKEN"
	echo := "The request signature we calculated does not match the signature you provided.\n\n" +
		"The Canonical String for this request should have been\n'POST\n/\nx-amz-security-token:" + token + "\n'"
	w := world()
	w.Faults = []cloudsim.Fault{{Service: "iam", AccessDenied: true, Message: echo}}
	s, _ := start(t, w, awsapi.Options{})
	ctx := context.Background()
	a, err := s.Account(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
	if err == nil {
		t.Fatal("GetUser succeeded")
	}
	for _, text := range []string{awsapi.Redact(err).Error(), awsapi.Message(err), fmt.Errorf("read: %w", awsapi.Redact(err)).Error()} {
		if strings.Contains(text, token) || !strings.Contains(text, "signature we calculated") {
			t.Errorf("redacted text %q: want the failure without the token", text)
		}
	}
	if !awsapi.IsDenied(awsapi.Redact(err)) {
		t.Error("a redacted error is no longer classified")
	}
	if awsapi.Redact(nil) != nil {
		t.Error("Redact(nil) is not nil")
	}
}

// TestCaller_errorsSayWhatToCheck: a caller that cannot be identified gets the operation
// and, when AWS never answered, what to check; a refused call does not get the hint.
func TestCaller_errorsSayWhatToCheck(t *testing.T) {
	_, url := simtest.Start(t, world(), cloudsim.Options{})
	noCreds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("no EC2 IMDS role found")
	})
	s, err := awsapi.NewSessions(context.Background(), awsapi.Options{Endpoint: url, MaxAttempts: 1,
		AWS: &aws.Config{Region: "us-east-1", Credentials: noCreds}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Caller(context.Background())
	for _, want := range []string{"sts:GetCallerIdentity", "no EC2 IMDS role found", "check the AWS credentials"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Caller error %v lacks %q", err, want)
		}
	}
}

func TestDefaultRateLimit(t *testing.T) {
	for svc, want := range map[string]float64{"iam": 10, "sts": 10, "acm": 10, "ec2": 20, "organizations": 5, "secretsmanager": 10} {
		if got := awsapi.DefaultRateLimit(svc); got != want {
			t.Errorf("DefaultRateLimit(%q) = %v, want %v", svc, got, want)
		}
	}
}

// TestAccount_secretsManager: the Secrets Manager client calls the region it is given,
// is retried through throttling, and is paced by a bucket of its own: a slow IAM budget
// does not hold it back.
func TestAccount_secretsManager(t *testing.T) {
	w := world()
	w.Faults = []cloudsim.Fault{{Service: "secretsmanager", Action: "PutSecretValue", ThrottleRate: 0.5}}
	w.Seed = 5
	s, sim := start(t, w, awsapi.Options{MaxAttempts: 30, RateLimits: map[string]float64{"iam": 0.001, "sts": 0, "secretsmanager": 0}})
	ctx := context.Background()
	a, err := s.Account(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// The one IAM call the bucket allows at once is spent; the next would wait 1000 s.
	if _, err := a.IAM().GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")}); err != nil {
		t.Fatal(err)
	}
	sm := a.SecretsManager("eu-west-1")
	created, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("warden/iam/111111111111/alice"), SecretString: aws.String("k1")})
	if err != nil {
		t.Fatal(err)
	}
	if arn := aws.ToString(created.ARN); !strings.HasPrefix(arn, "arn:aws:secretsmanager:eu-west-1:111111111111:secret:warden/iam/111111111111/alice-") {
		t.Errorf("secret ARN %s: not in the client's region and account", arn)
	}
	for i := range 10 {
		if _, err := sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: created.ARN, SecretString: aws.String(fmt.Sprint("k", i+2))}); err != nil {
			t.Fatalf("PutSecretValue failed despite retries: %v", err)
		}
	}
	got, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: created.ARN})
	if err != nil || aws.ToString(got.SecretString) != "k11" {
		t.Errorf("GetSecretValue = %+v, %v; want k11", got, err)
	}
	if st := sim.Calls()["secretsmanager:PutSecretValue"]; st.Throttled == 0 || st.Calls != 10+st.Throttled {
		t.Errorf("PutSecretValue served %+v: want every throttled attempt retried once more", st)
	}
}

// TestCaller_failsFastWhenNothingListens: with the endpoint down, the call is tried once
// more and fails within a second or two naming the endpoint, not after half a minute of
// the backoff that throttling and 5xx get (TestAccount_retriesThrottlingAndCounts).
func TestCaller_failsFastWhenNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	_ = ln.Close()
	sdk := simtest.AWSConfig(endpoint)
	s, err := awsapi.NewSessions(context.Background(), awsapi.Options{Endpoint: endpoint, AWS: &sdk}) // the default 10 attempts, 200ms–20s
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_, _, err = s.Caller(context.Background())
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Caller took %v to report an endpoint where nothing listens", d)
	}
	for _, want := range []string{"connection refused", "nothing answers at " + endpoint} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Caller error %v lacks %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "maximum number of attempts") {
		t.Errorf("Caller error %v: the attempts were spent", err)
	}
}
