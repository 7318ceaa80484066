package aws_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

// strip is client middleware that clears part of op's deserialized answer, as an answer
// that lacks the element would leave it: the SDK then hands out nil pointers.
func strip(op string, clear func(result any)) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("TestStrip",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil && middleware.GetOperationName(ctx) == op {
					clear(out.Result)
				}
				return out, md, err
			}), middleware.After)
	}
}

// TestCollectAnswersMissingElements: an answer without the element the collector reads
// makes its scope partial (the thing is unknown), never a panic and never an ok scope.
func TestCollectAnswersMissingElements(t *testing.T) {
	const (
		a       = "arn:aws:iam::111111111111:"
		certARN = "arn:aws:acm:eu-west-1:111111111111:certificate/0f1e2d3c-0000-4000-8000-111111111111"
	)
	tests := []struct {
		name, op string
		clear    func(result any)
		scope    string // the scope that must be partial, naming op
		gone     string // the resource that must be left out
		kept     string // a resource of the same scope that must still be there
	}{
		{"password policy", "GetAccountPasswordPolicy",
			func(r any) { r.(*iam.GetAccountPasswordPolicyOutput).PasswordPolicy = nil },
			"aws/111111111111/iam", a + "account-password-policy", a + "user/alice"},
		{"server certificate body", "GetServerCertificate",
			func(r any) { r.(*iam.GetServerCertificateOutput).ServerCertificate = nil },
			"aws/111111111111/iam", "", a + "server-certificate/shop"},
		{"ACM description", "DescribeCertificate",
			func(r any) { r.(*acm.DescribeCertificateOutput).Certificate = nil },
			"aws/111111111111/acm/eu-west-1", certARN, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			w.AWS.Organization = nil
			w.AWS.Accounts = w.AWS.Accounts[:1]
			w.AWS.Accounts[0].ServerCertificates = []*cloudsim.ServerCertificate{{Name: "shop", Uploaded: t0,
				Cert: cloudsim.CertSpec{Subject: "CN=shop.example.com", DNSNames: []string{"shop.example.com"}, NotBefore: t0, NotAfter: t0.AddDate(1, 0, 0)}}}
			r, _ := collect(t, w, awscollector.Config{AWS: &aws.Config{APIOptions: []func(*middleware.Stack) error{strip(tc.op, tc.clear)}}})
			s := r.scopes[tc.scope]
			if s.Status != snapshot.ScopePartial || !strings.Contains(s.Error, tc.op) {
				t.Errorf("scope %s = %s %q, want partial naming %s", tc.scope, s.Status, s.Error, tc.op)
			}
			if _, ok := r.byUID[tc.gone]; tc.gone != "" && ok {
				t.Errorf("%s reported from an answer that lacks it", tc.gone)
			}
			if tc.kept != "" {
				if _, ok := r.byUID[tc.kept]; !ok {
					t.Errorf("%s missing", tc.kept)
				}
			}
		})
	}
}

// TestCollectRegionsOnce: a region named twice (flag and config, a typo'd list) is read
// once; the collect helper fails on any scope or resource reported twice.
func TestCollectRegionsOnce(t *testing.T) {
	tests := []struct {
		name    string
		regions []string
		want    []string
	}{
		{"repeated", []string{"eu-west-1", "eu-west-1", "us-east-1", "eu-west-1"}, []string{"eu-west-1", "us-east-1"}},
		{"an empty one", []string{"", "eu-west-1"}, []string{"eu-west-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			w.AWS.Organization = nil
			w.AWS.Accounts = w.AWS.Accounts[:1]
			r, _ := collect(t, w, awscollector.Config{Regions: tc.regions})
			var got []string
			for _, s := range r.scopes {
				if s.Service == "ec2" {
					got = append(got, s.Region)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ec2 scopes for regions %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCollectLogsIncompleteScopes: a scope that was not read whole is named in a warning,
// with why, so that a user sees it without opening the snapshot.
func TestCollectLogsIncompleteScopes(t *testing.T) {
	tests := []struct {
		name   string
		fault  cloudsim.Fault
		expect []string
	}{
		{"failed", cloudsim.Fault{Service: "ec2", Action: "DescribeSecurityGroups", Region: "us-east-1", AccessDenied: true},
			[]string{"aws scope failed", "scope=aws/111111111111/ec2/us-east-1", "DescribeSecurityGroups"}},
		{"partial", cloudsim.Fault{Service: "iam", Action: "*CredentialReport", AccessDenied: true},
			[]string{"aws scope partly read", "scope=aws/111111111111/iam", "CredentialReport"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			w.AWS.Organization = nil
			w.AWS.Accounts = w.AWS.Accounts[:1]
			w.Faults = []cloudsim.Fault{tc.fault}
			var buf bytes.Buffer
			collect(t, w, awscollector.Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))})
			for _, want := range tc.expect {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, buf.String())
				}
			}
		})
	}
}

// TestDiscoverErrors: when the caller cannot be identified, the error says what was being
// done and, when AWS gave no answer at all, what to check.
func TestDiscoverErrors(t *testing.T) {
	_, url := simtest.Start(t, world(), cloudsim.Options{})
	static := credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		cfg   aws.Config
		want  []string
		avoid string
	}{
		{"no credentials", context.Background(),
			aws.Config{Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{}, errors.New("no EC2 IMDS role found")
			})},
			[]string{"sts:GetCallerIdentity", "no EC2 IMDS role found", "check the AWS credentials"}, ""},
		{"answer without account", context.Background(),
			aws.Config{Credentials: static, APIOptions: []func(*middleware.Stack) error{
				strip("GetCallerIdentity", func(r any) { r.(*sts.GetCallerIdentityOutput).Account = nil })}},
			[]string{"sts:GetCallerIdentity", "names no account"}, ""},
		{"cancelled", cancelled, aws.Config{Credentials: static},
			[]string{"sts:GetCallerIdentity", "canceled"}, "check the AWS credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Region = "us-east-1"
			c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &cfg, MaxAttempts: 1, BaseBackoff: time.Millisecond})
			_, err := c.Discover(tc.ctx)
			if err == nil {
				t.Fatal("Discover succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if tc.avoid != "" && strings.Contains(err.Error(), tc.avoid) {
				t.Errorf("error %q says %q", err, tc.avoid)
			}
		})
	}
}

// TestErrorsLeaveOutEchoedCredentials: AWS answers a signature it cannot verify with the
// request as it canonicalised it, x-amz-security-token included. None of it may reach a
// scope (the snapshot), a log line or an error the user sees.
func TestErrorsLeaveOutEchoedCredentials(t *testing.T) {
	const token = "FwoGZXIvYXdzELEAKEDSESSIONTOKEN"
	echo := "The request signature we calculated does not match the signature you provided. " +
		"Check your AWS Secret Access Key and signing method.\n\nThe Canonical String for this request should have been\n" +
		"'POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:iam.amazonaws.com\nx-amz-date:20261202T000000Z\n" +
		"x-amz-security-token:" + token + "\n\ncontent-type;host;x-amz-date;x-amz-security-token\nabc'\n\n" +
		"The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n20261202T000000Z\n20261202/us-east-1/iam/aws4_request\ndef'"
	tests := []struct {
		name  string
		org   bool
		fault cloudsim.Fault
	}{
		{"scope error", false, cloudsim.Fault{Service: "iam", Action: "GetAccountAuthorizationDetails", AccessDenied: true, Message: echo}},
		{"regions", false, cloudsim.Fault{Service: "ec2", Action: "DescribeRegions", AccessDenied: true, Message: echo}},
		{"assumed role", true, cloudsim.Fault{Service: "sts", Action: "AssumeRole", AccessDenied: true, Message: echo}},
		{"caller", false, cloudsim.Fault{Service: "sts", Action: "GetCallerIdentity", AccessDenied: true, Message: echo}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			if !tc.org {
				w.AWS.Organization = nil
				w.AWS.Accounts = w.AWS.Accounts[:1]
			}
			w.Faults = []cloudsim.Fault{tc.fault}
			_, url := simtest.Start(t, w, cloudsim.Options{})
			sdk := simtest.AWSConfig(url)
			var logs bytes.Buffer
			c := awscollector.New(awscollector.Config{Endpoint: url, Org: tc.org, MaxAttempts: 2, BaseBackoff: time.Millisecond,
				RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
				AWS:        &sdk,
				Logger:     slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			var sink collectors.MemorySink
			err := c.Collect(context.Background(), &sink)
			seen := logs.String()
			if err != nil {
				seen += err.Error()
			}
			for _, s := range sink.Scopes {
				seen += s.Error
			}
			if strings.Contains(seen, token) || strings.Contains(seen, "String-to-Sign") {
				t.Errorf("the echoed request got out:\n%s", seen)
			}
			if !strings.Contains(seen, "request signature we calculated does not match") {
				t.Errorf("the failure itself was lost:\n%s", seen)
			}
		})
	}
}

// failingSink refuses every resource after the first n, as a full disk would.
type failingSink struct {
	collectors.MemorySink
	mu     sync.Mutex
	n      int
	refuse int // resources refused
}

var errDiskFull = errors.New("write snapshot: no space left on device")

func (s *failingSink) Resource(r snapshot.Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n <= 0 {
		s.refuse++
		return errDiskFull
	}
	s.n--
	return s.MemorySink.Resource(r)
}

// TestCollect_stopsOnSinkError: a resource the sink cannot take stops the collection with
// the sink's error, as the GCP collector does: going on would write a snapshot that lacks
// it, and a missing resource reads as a deleted one.
func TestCollect_stopsOnSinkError(t *testing.T) {
	for _, n := range []int{0, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := world()
			_, url := simtest.Start(t, w, cloudsim.Options{})
			sdk := simtest.AWSConfig(url)
			c := awscollector.New(awscollector.Config{Endpoint: url, Org: true, Concurrency: 1,
				RateLimits: map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
				AWS:        &sdk})
			sink := &failingSink{n: n}
			err := c.Collect(context.Background(), sink)
			if !errors.Is(err, errDiskFull) {
				t.Fatalf("Collect = %v, want the sink's error", err)
			}
			if !strings.Contains(err.Error(), "aws/") {
				t.Errorf("error %q does not name the scope being written", err)
			}
			// One account at a time: the first failure stops the rest, so that not every
			// account of the organisation is read for nothing.
			for _, s := range sink.Scopes {
				if s.Account == "333333333333" {
					t.Errorf("scope %s was still read after the sink failed", s.ID)
				}
			}
		})
	}
}
