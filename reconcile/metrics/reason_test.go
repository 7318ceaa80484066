package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/gcpapi"
)

func TestReasonOf_localErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Reason
	}{
		{"nil", nil, ""},
		{"classified", Classify(errors.New("event: no detail-type"), ReasonInvalid), ReasonInvalid},
		{"classified and wrapped", fmt.Errorf("handle event: %w", Classify(errors.New("bad"), ReasonInvalid)), ReasonInvalid},
		{"classification outside the set", Classify(errors.New("x"), Reason("gremlins")), Reason(other)},
		{"deadline", fmt.Errorf("collect aws/1/iam: %w", context.DeadlineExceeded), ReasonTimeout},
		{"cancelled", fmt.Errorf("collect: %w", context.Canceled), ReasonCanceled},
		// A throttled answer that arrived as the daemon shut down: the shutdown is the story.
		{"cancelled wins", fmt.Errorf("%w: %w", context.Canceled, &smithy.GenericAPIError{Code: "Throttling"}), ReasonCanceled},
		{"anything else", errors.New("store: disk I/O error"), ReasonInternal},
	}
	for _, c := range cases {
		if got := ReasonOf(c.err); got != c.want {
			t.Errorf("%s: ReasonOf(%v) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
	if Classify(nil, ReasonInvalid) != nil {
		t.Error("Classify(nil) is not nil")
	}
}

func TestReasonOf_networkTimeout(t *testing.T) {
	// A real read deadline on a real connection, as a slow store or endpoint gives it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Read(make([]byte, 1))
	if got := ReasonOf(fmt.Errorf("read endpoint: %w", err)); got != ReasonTimeout {
		t.Errorf("ReasonOf(%v) = %q, want timeout", err, got)
	}
}

// TestReasonOf_cloudAnswers drives the official SDKs through warden's clients against the
// simulator with faults injected, and checks each failure's reason and that the metrics
// fed from awsapi's Counter agree with the simulator's own call counts.
func TestReasonOf_cloudAnswers(t *testing.T) {
	world := &cloudsim.World{
		AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111"}}},
		GCP: cloudsim.GCP{Projects: []*cloudsim.Project{{ID: "acme-prod", Number: "222222222222"}}},
		Faults: []cloudsim.Fault{
			{Service: "iam", Action: "GetUser", ThrottleRate: 1},
			{Service: "iam", Action: "ListUsers", AccessDenied: true},
			{Service: "ec2", Action: "DescribeSecurityGroups", ErrorRate: 1},
			{Service: "compute", Action: "*Firewall*", ThrottleRate: 1},
			{Service: "iamadmin", Action: "ListServiceAccounts", AccessDenied: true},
			{Service: "iamadmin", Action: "GetServiceAccount", ErrorRate: 1},
		},
	}
	sim, err := cloudsim.New(world, cloudsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()

	// AWS, one attempt per call so that each answer is the fault's.
	sessions, err := awsapi.NewSessions(ctx, awsapi.Options{
		Endpoint:    srv.URL,
		AWS:         &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")},
		MaxAttempts: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	acct, err := sessions.Account(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var iamCalls, ec2Calls awsapi.Counter
	iamc := acct.IAM(func(o *iam.Options) { o.APIOptions = append(o.APIOptions, iamCalls.Middleware()) })
	ec2c := acct.EC2("us-east-1", func(o *ec2.Options) { o.APIOptions = append(o.APIOptions, ec2Calls.Middleware()) })

	_, throttled := iamc.GetUser(ctx, &iam.GetUserInput{UserName: aws.String("alice")})
	_, denied := iamc.ListUsers(ctx, &iam.ListUsersInput{})
	_, unavailable := ec2c.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	_, fine := iamc.ListRoles(ctx, &iam.ListRolesInput{})

	// Google, through gcpapi.Call, also one attempt each.
	clients, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: srv.URL, MaxAttempts: 1, BaseBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = clients.Close() })
	gctx := gcpapi.WithScope(ctx, gcpapi.Scope{Project: "acme-prod"})
	gThrottled := clients.Call(gctx, "compute.GetFirewall", func(ctx context.Context) error {
		_, err := clients.Firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-ssh"}, gcpapi.NoRetry())
		return err
	})
	gDenied := clients.Call(gctx, "iam.ListServiceAccounts", func(ctx context.Context) error {
		it := clients.IAM.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/acme-prod"}, gcpapi.NoRetry())
		_, err := it.Next()
		return err
	})
	gUnavailable := clients.Call(gctx, "iam.GetServiceAccount", func(ctx context.Context) error {
		_, err := clients.IAM.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/a@acme-prod.iam.gserviceaccount.com"}, gcpapi.NoRetry())
		return err
	})

	for _, c := range []struct {
		name string
		err  error
		want Reason
	}{
		{"aws throttled", throttled, ReasonThrottled},
		{"aws denied", denied, ReasonAccessDenied},
		{"aws 5xx", unavailable, ReasonUnavailable},
		{"gcp throttled", gThrottled, ReasonThrottled},
		{"gcp denied", gDenied, ReasonAccessDenied},
		{"gcp unavailable", gUnavailable, ReasonUnavailable},
	} {
		if c.err == nil {
			t.Errorf("%s: the call succeeded despite its fault", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, c.err)
		if got := ReasonOf(fmt.Errorf("collect: %w", c.err)); got != c.want {
			t.Errorf("%s: ReasonOf(%v) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
	if fine != nil {
		t.Fatalf("ListRoles: %v", fine)
	}

	// The daemon hands the counters over after the calls; the totals must be the
	// simulator's.
	m := New(nil)
	m.CloudCalls(ProviderAWS, "iam", iamCalls.Calls(), iamCalls.Throttled(), iamCalls.Denied())
	m.CloudCalls(ProviderAWS, "ec2", ec2Calls.Calls(), ec2Calls.Throttled(), ec2Calls.Denied())
	var simIAM, simThrottled, simDenied, simEC2 int
	for op, st := range sim.Calls() {
		switch op {
		case "iam:GetUser", "iam:ListUsers", "iam:ListRoles":
			simIAM += st.Calls
			simThrottled += st.Throttled
			simDenied += st.AccessDenied
		case "ec2:DescribeSecurityGroups":
			simEC2 += st.Calls
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"aws iam calls", testutil.ToFloat64(m.cloudCalls.WithLabelValues("aws", "iam")), float64(simIAM)},
		{"aws iam throttled", testutil.ToFloat64(m.cloudThrottled.WithLabelValues("aws", "iam")), float64(simThrottled)},
		{"aws iam denied", testutil.ToFloat64(m.cloudAccessDenied.WithLabelValues("aws", "iam")), float64(simDenied)},
		{"aws ec2 calls", testutil.ToFloat64(m.cloudCalls.WithLabelValues("aws", "ec2")), float64(simEC2)},
	} {
		if c.got != c.want || c.want == 0 {
			t.Errorf("%s: metrics %v, simulator %v", c.name, c.got, c.want)
		}
	}
}
