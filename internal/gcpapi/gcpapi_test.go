package gcpapi_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
)

func world() *cloudsim.World {
	project := func(id, number string) *cloudsim.Project {
		return &cloudsim.Project{ID: id, Number: number,
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{{Role: "roles/owner", Members: []string{"user:alice@acme.example"}}}},
			ServiceAccounts: []*cloudsim.ServiceAccount{{Email: "deployer@" + id + ".iam.gserviceaccount.com", UniqueID: "1000" + number,
				Keys: []*cloudsim.SAKey{{ID: "k1", ValidAfter: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}}}},
			Networks:  []*cloudsim.Network{{Name: "default"}},
			Firewalls: []*cloudsim.Firewall{{Name: "allow-ssh", Network: "default", SourceRanges: []string{"0.0.0.0/0"}, Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}}},
		}
	}
	return &cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{project("acme-prod", "111111111111"), project("acme-dev", "222222222222")}}}
}

func start(t *testing.T, w *cloudsim.World, opts gcpapi.Options) (*gcpapi.Clients, *cloudsim.Sim) {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	opts.Endpoint = url
	if opts.RateLimit == 0 {
		opts.RateLimit = 1000
	}
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff, opts.MaxBackoff = time.Millisecond, 5*time.Millisecond
	}
	c, err := gcpapi.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, sim
}

func getFirewall(c *gcpapi.Clients, project, name string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := c.Firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: project, Firewall: name}, gcpapi.NoRetry())
		return err
	}
}

// TestCall_classifiesAnswers: Google's answers over both transports, through the real
// clients, are each exactly one of not found, denied, throttled, conflict, or none.
func TestCall_classifiesAnswers(t *testing.T) {
	tests := []struct {
		name   string
		faults []cloudsim.Fault
		call   func(c *gcpapi.Clients) func(ctx context.Context) error
		code   codes.Code
		kind   string
	}{
		{"firewall gone (REST)", nil, func(c *gcpapi.Clients) func(context.Context) error {
			return getFirewall(c, "acme-prod", "nope")
		}, codes.NotFound, "notfound"},
		{"service account gone (gRPC)", nil, func(c *gcpapi.Clients) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.IAM.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/nope@acme-prod.iam.gserviceaccount.com"}, gcpapi.NoRetry())
				return err
			}
		}, codes.NotFound, "notfound"},
		{"key gone (gRPC)", nil, func(c *gcpapi.Clients) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.IAM.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: "projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com/keys/nope"}, gcpapi.NoRetry())
				return err
			}
		}, codes.NotFound, "notfound"},
		{"unknown project is denied, not gone", nil, func(c *gcpapi.Clients) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/gone"}, gcpapi.NoRetry())
				return err
			}
		}, codes.PermissionDenied, "denied"},
		{"denied (REST)", []cloudsim.Fault{{Service: "compute", AccessDenied: true}}, func(c *gcpapi.Clients) func(context.Context) error {
			return getFirewall(c, "acme-prod", "allow-ssh")
		}, codes.PermissionDenied, "denied"},
		{"denied (gRPC)", []cloudsim.Fault{{Service: "iamadmin", AccessDenied: true}}, func(c *gcpapi.Clients) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.IAM.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"}, gcpapi.NoRetry())
				return err
			}
		}, codes.PermissionDenied, "denied"},
		{"throttled", []cloudsim.Fault{{Service: "compute", ThrottleRate: 1}}, func(c *gcpapi.Clients) func(context.Context) error {
			return getFirewall(c, "acme-prod", "allow-ssh")
		}, codes.ResourceExhausted, "throttled"},
		{"stale etag", nil, func(c *gcpapi.Clients) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.Projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod",
					Policy: &iampb.Policy{Etag: []byte("stale"), Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:bob@acme.example"}}}}}, gcpapi.NoRetry())
				return err
			}
		}, codes.Aborted, "conflict"},
		{"already exists (REST) is no conflict", nil, func(c *gcpapi.Clients) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := c.Firewalls.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
					Name: proto.String("allow-ssh"), Network: proto.String("global/networks/default"),
					Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp")}}}}, gcpapi.NoRetry())
				return err
			}
		}, codes.AlreadyExists, ""},
		{"server down", []cloudsim.Fault{{Service: "compute", ErrorRate: 1}}, func(c *gcpapi.Clients) func(context.Context) error {
			return getFirewall(c, "acme-prod", "allow-ssh")
		}, codes.Unavailable, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, sim := start(t, world(), gcpapi.Options{MaxAttempts: 3})
			if err := sim.SetFaults(tc.faults, nil); err != nil {
				t.Fatal(err)
			}
			var n gcpapi.Counter
			ctx := gcpapi.WithScope(context.Background(), gcpapi.Scope{Project: "acme-prod", Counter: &n})
			err := c.Call(ctx, "test.Call", tc.call(c))
			var ce *gcpapi.CallError
			if !errors.As(err, &ce) || ce.Call != "test.Call" {
				t.Fatalf("Call = %v, want a CallError naming the call", err)
			}
			if got := gcpapi.Code(err); got != tc.code {
				t.Errorf("Code = %v, want %v (%v)", got, tc.code, err)
			}
			got := map[string]bool{"notfound": gcpapi.IsNotFound(err), "denied": gcpapi.IsDenied(err),
				"throttled": gcpapi.IsThrottled(err), "conflict": gcpapi.IsConflict(err)}
			for kind, is := range got {
				if is != (kind == tc.kind) {
					t.Errorf("Is%s = %v, want %v (%v)", kind, is, kind == tc.kind, err)
				}
			}
			// Throttled and transient answers are retried up to MaxAttempts; the others not.
			want := 1
			if tc.code == codes.ResourceExhausted || tc.code == codes.Unavailable {
				want = 3
			}
			if n.Calls() != want {
				t.Errorf("%d attempts, want %d", n.Calls(), want)
			}
			if tc.kind == "throttled" && n.Throttled() != 3 || tc.kind == "denied" && n.Denied() != 1 {
				t.Errorf("counted %d throttled and %d denied", n.Throttled(), n.Denied())
			}
		})
	}
}

func TestCode_ofNothing(t *testing.T) {
	if gcpapi.Code(nil) != codes.OK || gcpapi.IsNotFound(nil) || gcpapi.IsDenied(nil) || gcpapi.IsConflict(nil) || gcpapi.IsThrottled(nil) {
		t.Error("a nil error is classified")
	}
	if gcpapi.Code(errors.New("dial tcp: connection refused")) != codes.Unknown {
		t.Error("a transport error has a code other than Unknown")
	}
}

// TestCall_retriesTransientFailures: under throttling and 5xx every call succeeds after
// retries, and the Counter saw every attempt the simulator served.
func TestCall_retriesTransientFailures(t *testing.T) {
	w := world()
	w.Seed = 5
	c, sim := start(t, w, gcpapi.Options{MaxAttempts: 30})
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "compute", ThrottleRate: 0.4}, {Service: "compute", ErrorRate: 0.2}}, nil); err != nil {
		t.Fatal(err)
	}
	var n gcpapi.Counter
	ctx := gcpapi.WithScope(context.Background(), gcpapi.Scope{Project: "acme-prod", Counter: &n})
	for range 20 {
		if err := c.Call(ctx, "compute.GetFirewall", getFirewall(c, "acme-prod", "allow-ssh")); err != nil {
			t.Fatalf("GetFirewall failed despite retries: %v", err)
		}
	}
	st := sim.Calls()["compute:GetFirewall"]
	if n.Calls() != st.Calls || n.Throttled() != st.Throttled || n.Calls() <= 20 {
		t.Errorf("counted %d attempts, %d throttled; the simulator served %d, %d throttled", n.Calls(), n.Throttled(), st.Calls, st.Throttled)
	}
}

// TestCall_pacesPerServiceAndProject: at 20 calls/s (burst 2), ten calls in one project
// take about 0.4s, while a call in another project, or to another service, does not wait.
func TestCall_pacesPerServiceAndProject(t *testing.T) {
	c, _ := start(t, world(), gcpapi.Options{RateLimit: 20})
	prod := gcpapi.WithScope(context.Background(), gcpapi.Scope{Project: "acme-prod"})
	dev := gcpapi.WithScope(context.Background(), gcpapi.Scope{Project: "acme-dev"})
	begin := time.Now()
	for range 10 {
		if err := c.Call(prod, "compute.GetFirewall", getFirewall(c, "acme-prod", "allow-ssh")); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(begin); d < 350*time.Millisecond {
		t.Errorf("10 calls at 20/s took %v, want about 400ms", d)
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		call string
	}{{"other project", dev, "compute.GetFirewall"}, {"other service", prod, "iam.GetServiceAccount"}} {
		begin = time.Now()
		if err := c.Call(tc.ctx, tc.call, getFirewall(c, "acme-dev", "allow-ssh")); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(begin); d > 40*time.Millisecond {
			t.Errorf("%s: waited %v for another bucket", tc.name, d)
		}
	}
}

func TestCall_stopsWhenCancelled(t *testing.T) {
	c, sim := start(t, world(), gcpapi.Options{MaxAttempts: 100, BaseBackoff: time.Second, MaxBackoff: time.Second})
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "compute", ErrorRate: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := c.Call(ctx, "compute.GetFirewall", getFirewall(c, "acme-prod", "allow-ssh"))
	if gcpapi.Code(err) != codes.Canceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Call = %v, want cancelled with the context's error", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Call took %v after its context ended", d)
	}
}

func TestNew_refusesBadEndpoint(t *testing.T) {
	if _, err := gcpapi.New(context.Background(), gcpapi.Options{Endpoint: "not a url"}); err == nil {
		t.Error("New accepted an endpoint that is no URL")
	}
}

// TestCall_failsFastWhenNothingListens: with the endpoint down, a call over either
// transport is tried once more and fails within a second or two naming the endpoint, not
// after the backoff that throttling and 5xx get (TestCall_retriesTransientFailures).
func TestCall_failsFastWhenNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c, err := gcpapi.New(context.Background(), gcpapi.Options{Endpoint: "http://" + addr, RateLimit: 1000}) // the default 8 attempts, 250ms–30s
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"compute.GetFirewall", getFirewall(c, "acme-prod", "allow-ssh")}, // REST
		{"iam.GetServiceAccount", func(ctx context.Context) error { // gRPC
			_, err := c.IAM.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"}, gcpapi.NoRetry())
			return err
		}},
	} {
		var n gcpapi.Counter
		ctx := gcpapi.WithScope(context.Background(), gcpapi.Scope{Project: "acme-prod", Counter: &n})
		begin := time.Now()
		err := c.Call(ctx, tc.name, tc.call)
		if d := time.Since(begin); d > 3*time.Second {
			t.Errorf("%s took %v to report an endpoint where nothing listens", tc.name, d)
		}
		if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), addr) {
			t.Errorf("%s = %v, want connection refused at %s", tc.name, err, addr)
		}
		if n.Calls() != 2 {
			t.Errorf("%s: %d attempts, want 2", tc.name, n.Calls())
		}
	}
}
