package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/collectors/collectorstest"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

// opLog records the operations every client made, as "SERVICE:Operation@region", so that
// a test sees which region a call went to (the simulator counts by operation only), and
// counts the attempts that failed without an answer from the simulator (a connection
// lost while reading a response): the SDK retries those, and the retry is a call more.
type opLog struct {
	mu        sync.Mutex
	ops       []string
	transport atomic.Int64
}

func (l *opLog) middleware(st *middleware.Stack) error {
	err := st.Finalize.Add(middleware.FinalizeMiddlewareFunc("TestOpLogAttempts",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			var answered smithy.APIError
			if err != nil && !errors.As(err, &answered) {
				l.transport.Add(1)
			}
			return out, md, err
		}), middleware.After)
	if err != nil {
		return err
	}
	return st.Initialize.Add(middleware.InitializeMiddlewareFunc("TestOpLog",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			l.mu.Lock()
			l.ops = append(l.ops, awsmiddleware.GetServiceID(ctx)+":"+awsmiddleware.GetOperationName(ctx)+"@"+awsmiddleware.GetRegion(ctx))
			l.mu.Unlock()
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (l *opLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ops
	l.ops = nil
	return out
}

// scopedCollector is a collector against the simulator at url, unpaced and quick to
// retry, whose every operation is recorded in log (when not nil).
func scopedCollector(url string, cfg awscollector.Config, log *opLog) *awscollector.Collector {
	sdk := simtest.AWSConfig(url)
	if log != nil {
		sdk.APIOptions = append(sdk.APIOptions, log.middleware)
	}
	cfg.Endpoint, cfg.AWS = url, &sdk
	cfg.RateLimits = map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0}
	cfg.BaseBackoff, cfg.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return awscollector.New(cfg)
}

// fullCollect is what Collect reports: the scopes by id, and each scope's resources as
// JSON, in uid order.
func fullCollect(t *testing.T, ctx context.Context, c collectors.Collector) (map[string]snapshot.Scope, map[string][]string) {
	t.Helper()
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	scopes := map[string]snapshot.Scope{}
	for _, s := range sink.Scopes {
		if _, dup := scopes[s.ID]; dup {
			t.Fatalf("Collect reported scope %s twice", s.ID)
		}
		scopes[s.ID] = s
	}
	return scopes, resourcesByScope(t, sink.Resources)
}

func resourcesByScope(t *testing.T, rs []snapshot.Resource) map[string][]string {
	t.Helper()
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b snapshot.Resource) int { return strings.Compare(a.UID, b.UID) })
	out := map[string][]string{}
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Scope] = append(out[r.Scope], string(b))
	}
	return out
}

func scopeJSON(t *testing.T, s snapshot.Scope) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func scopeIDs(scopes []snapshot.Scope) []string {
	ids := make([]string, len(scopes))
	for i, s := range scopes {
		ids[i] = s.ID
	}
	return ids
}

// TestScopes_equalCollect: in every world, Scopes names exactly the scopes a full Collect
// reports, and CollectScope of each reports that scope (status, error, counters) and its
// resources as Collect did, with that scope's calls only: its service's, in its region,
// all counted by the scope.
func TestScopes_equalCollect(t *testing.T) {
	noRole := func(w *cloudsim.World, acct string) {
		for _, a := range w.AWS.Accounts {
			if a.ID == acct {
				a.Roles = slices.DeleteFunc(a.Roles, func(r *cloudsim.Role) bool { return r.Name == "OrganizationAccountAccessRole" })
			}
		}
	}
	tests := []struct {
		name  string
		world func(t *testing.T) *cloudsim.World
		cfg   awscollector.Config
		// failed are scopes Collect reports failed in this world, at least.
		failed []string
	}{
		{"acme's organisation", func(t *testing.T) *cloudsim.World {
			w, err := cloudsim.LoadWorld(acmeWorld)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}, awscollector.Config{Org: true}, []string{"aws/333333333333/ec2/eu-central-1"}},
		{"an account whose role is refused", func(*testing.T) *cloudsim.World {
			w := world()
			noRole(w, "333333333333")
			return w
		}, awscollector.Config{Org: true}, []string{"aws/333333333333/iam", "aws/333333333333/ec2", "aws/333333333333/acm"}},
		{"an account whose regions cannot be listed", func(*testing.T) *cloudsim.World {
			w := world()
			w.Faults = []cloudsim.Fault{{Service: "ec2", Action: "DescribeRegions", Account: "222222222222", AccessDenied: true}}
			return w
		}, awscollector.Config{Org: true}, []string{"aws/222222222222/ec2", "aws/222222222222/acm"}},
		{"configured regions, a role refused", func(*testing.T) *cloudsim.World {
			w := world()
			noRole(w, "222222222222")
			return w
		}, awscollector.Config{Org: true, Regions: []string{"eu-west-1"}}, []string{"aws/222222222222/iam", "aws/222222222222/ec2", "aws/222222222222/acm"}},
		{"the caller's account alone", func(*testing.T) *cloudsim.World {
			w := world()
			w.AWS.Organization = nil
			w.AWS.Accounts = w.AWS.Accounts[:1]
			return w
		}, awscollector.Config{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The simulator records the role assumptions as the role's last use: on a
			// stopped clock, the second collector's assumption leaves the role as it was.
			now := time.Now().Truncate(time.Second)
			sim, url := simtest.Start(t, tc.world(t), cloudsim.Options{Now: func() time.Time { return now }})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var fullLog opLog
			wantScopes, wantRes := fullCollect(t, ctx, scopedCollector(url, tc.cfg, &fullLog))
			for _, id := range tc.failed {
				if s, ok := wantScopes[id]; !ok || s.Status != snapshot.ScopeFailed {
					t.Fatalf("the world does not fail %s in Collect: %+v", id, s)
				}
			}

			var log opLog
			c := scopedCollector(url, tc.cfg, &log)
			scopes, err := c.Scopes(ctx)
			if err != nil {
				t.Fatalf("Scopes: %v", err)
			}
			if got, want := scopeIDs(scopes), slices.Sorted(maps.Keys(wantScopes)); !slices.Equal(got, want) {
				t.Fatalf("Scopes differ from Collect's:\nScopes  %v\nCollect %v", got, want)
			}
			for _, s := range scopes {
				w := wantScopes[s.ID]
				if s.Provider != "aws" || s.Account != w.Account || s.Service != w.Service || s.Region != w.Region || s.Status != "" {
					t.Errorf("Scopes named %+v, Collect %+v", s, w)
				}
			}

			for _, s := range scopes {
				t.Run(s.ID, func(t *testing.T) {
					sim.ResetCalls()
					log.take()
					log.transport.Store(0)
					var sink collectors.MemorySink
					if err := c.CollectScope(ctx, s.ID, &sink); err != nil {
						t.Fatalf("CollectScope: %v", err)
					}
					if len(sink.Scopes) != 1 || sink.Scopes[0].ID != s.ID {
						t.Fatalf("CollectScope reported scopes %v, want %s alone", scopeIDs(sink.Scopes), s.ID)
					}
					got, want := sink.Scopes[0], wantScopes[s.ID]
					if log.transport.Load() > 0 || fullLog.transport.Load() > 0 {
						// A lost connection was retried: the calls differ by the retries.
						t.Logf("calls not compared: %d and %d attempts lost their connection", fullLog.transport.Load(), log.transport.Load())
						got.Calls, want.Calls = 0, 0
					}
					if g, w := scopeJSON(t, got), scopeJSON(t, want); g != w {
						t.Errorf("scope differs from Collect's:\nCollectScope %s\nCollect      %s", g, w)
					}
					gotRes := resourcesByScope(t, sink.Resources)
					if len(gotRes) > 1 || (len(gotRes) == 1 && gotRes[s.ID] == nil) {
						t.Errorf("CollectScope reported resources of scopes %v", slices.Sorted(maps.Keys(gotRes)))
					}
					if !slices.Equal(gotRes[s.ID], wantRes[s.ID]) {
						t.Errorf("resources differ from Collect's:\nCollectScope %v\nCollect      %v", gotRes[s.ID], wantRes[s.ID])
					}
					checkScopeCalls(t, sink.Scopes[0], sim.Calls(), log.take())
				})
			}
		})
	}
}

// checkScopeCalls checks that reading scope s alone, after Scopes, made only its calls:
// none to another service (but for the refused role assumption of an account that cannot
// be opened, and the region listing of a scope whose regions are unknown), none to
// another region, and every one counted by the scope.
func checkScopeCalls(t *testing.T, s snapshot.Scope, served map[string]cloudsim.CallStats, ops []string) {
	t.Helper()
	opened := !strings.HasPrefix(s.Error, "assume role")
	own := 0
	for op, st := range served {
		svc, _, _ := strings.Cut(op, ":")
		switch {
		case svc == s.Service:
			own += st.Calls
		case svc == "sts" && !opened:
		case op == "ec2:DescribeRegions" && s.Region == "" && s.Service == "acm":
		default:
			t.Errorf("reading %s alone called %s (%d times)", s.ID, op, st.Calls)
		}
	}
	if own != s.Calls {
		t.Errorf("the scope counts %d calls, the simulator served %d of %s", s.Calls, own, s.Service)
	}
	if s.Region == "" {
		return
	}
	for _, op := range ops {
		if _, region, _ := strings.Cut(op, "@"); region != s.Region && !strings.HasPrefix(op, "STS:") {
			t.Errorf("reading %s alone called %s", s.ID, op)
		}
	}
}

// TestCollectScope_alone: a collector that has not listed its scopes reads one with the
// calls of that scope and the discovery it needs (the caller's identity, the
// organisation, the role into the account, its regions), and nothing of the other
// services: collecting an account's EC2 in one region makes no IAM or ACM call.
func TestCollectScope_alone(t *testing.T) {
	tests := []struct {
		id    string
		calls []string // the operations served, all of them
	}{
		{"aws/222222222222/ec2/us-east-1", []string{"ec2:DescribeNetworkInterfaces", "ec2:DescribeRegions", "ec2:DescribeSecurityGroups",
			"organizations:ListAccounts", "sts:AssumeRole", "sts:GetCallerIdentity"}},
		{"aws/111111111111/ec2/eu-west-1", []string{"ec2:DescribeNetworkInterfaces", "ec2:DescribeRegions", "ec2:DescribeSecurityGroups",
			"organizations:ListAccounts", "sts:GetCallerIdentity"}},
		{"aws/333333333333/acm/eu-west-1", []string{"acm:DescribeCertificate", "acm:GetCertificate", "acm:ListCertificates",
			"acm:ListTagsForCertificate", "ec2:DescribeRegions", "organizations:ListAccounts", "sts:AssumeRole", "sts:GetCallerIdentity"}},
		{"aws/222222222222/iam", []string{"iam:GenerateCredentialReport", "iam:GetAccountAuthorizationDetails",
			"iam:GetAccountPasswordPolicy", "iam:GetAccountSummary", "iam:GetCredentialReport", "iam:ListAccessKeys",
			"iam:ListAccountAliases", "iam:ListRoles", "iam:ListSAMLProviders", "iam:ListServerCertificates",
			"iam:ListVirtualMFADevices", "organizations:ListAccounts", "sts:AssumeRole", "sts:GetCallerIdentity"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			sim, url := simtest.Start(t, world(), cloudsim.Options{})
			var log opLog
			c := scopedCollector(url, awscollector.Config{Org: true}, &log)
			var sink collectors.MemorySink
			if err := c.CollectScope(context.Background(), tc.id, &sink); err != nil {
				t.Fatal(err)
			}
			if len(sink.Scopes) != 1 || sink.Scopes[0].ID != tc.id || sink.Scopes[0].Status != snapshot.ScopeOK {
				t.Fatalf("scopes = %+v, want %s ok", sink.Scopes, tc.id)
			}
			if len(sink.Resources) == 0 {
				t.Errorf("%s read no resource", tc.id)
			}
			for _, r := range sink.Resources {
				if r.Scope != tc.id {
					t.Errorf("resource %s of scope %s", r.UID, r.Scope)
				}
			}
			if got := slices.Sorted(maps.Keys(sim.Calls())); !slices.Equal(got, tc.calls) {
				t.Errorf("calls served:\ngot  %v\nwant %v", got, tc.calls)
			}
			// The scope's own calls went to its region (IAM's to the default one).
			region := "us-east-1"
			if f := strings.Split(tc.id, "/"); len(f) == 4 {
				region = f[3]
			}
			for _, op := range log.take() {
				if !strings.HasPrefix(op, "STS:") && !strings.HasPrefix(op, "Organizations:") && !strings.HasPrefix(op, "EC2:DescribeRegions@") &&
					!strings.HasSuffix(op, "@"+region) {
					t.Errorf("%s went to another region than %s", op, region)
				}
			}
		})
	}
}

// TestCollectScope_faults: a scope denied by the cloud is reported failed, without
// resources, and every other scope, read alone, is ok.
func TestCollectScope_faults(t *testing.T) {
	tests := []struct {
		fault cloudsim.Fault
		scope string
	}{
		{cloudsim.Fault{Service: "iam", Action: "GetAccountAuthorizationDetails", Account: "222222222222", AccessDenied: true}, "aws/222222222222/iam"},
		{cloudsim.Fault{Service: "ec2", Action: "DescribeSecurityGroups", Account: "111111111111", Region: "eu-west-1", AccessDenied: true}, "aws/111111111111/ec2/eu-west-1"},
		{cloudsim.Fault{Service: "acm", Action: "ListCertificates", Account: "333333333333", Region: "us-east-1", AccessDenied: true}, "aws/333333333333/acm/us-east-1"},
	}
	for _, tc := range tests {
		t.Run(tc.scope, func(t *testing.T) {
			w := world()
			w.Faults = []cloudsim.Fault{tc.fault}
			_, url := simtest.Start(t, w, cloudsim.Options{})
			c := scopedCollector(url, awscollector.Config{Org: true}, nil)
			collectorstest.OnlyScopeDenied(t, c, tc.scope)
		})
	}
}

// TestCollectScope_unknown: an id that is not one of the collector's scopes is
// ErrUnknownScope, and nothing is reported.
func TestCollectScope_unknown(t *testing.T) {
	tests := []struct {
		id      string
		regions []string
	}{
		{"", nil},
		{"aws", nil},
		{"aws/111111111111", nil},
		{"aws//iam", nil},
		{"aws/111111111111/s3", nil},
		{"aws/111111111111/iam/us-east-1", nil},
		{"aws/111111111111/ec2/us-east-1/extra", nil},
		{"aws/111111111111/ec2/", nil},
		{"gcp/acme-prod/iam", nil},
		{"tls/shop.example.com:443", nil},
		{"aws/999999999999/iam", nil},                             // not in the organisation
		{"aws/111111111111/ec2/ap-south-2", nil},                  // not enabled in the account
		{"aws/222222222222/acm/mars-north-1", nil},                // no such region
		{"aws/111111111111/ec2", nil},                             // its regions are listed: the regional scopes are its
		{"aws/111111111111/ec2/us-east-1", []string{"eu-west-1"}}, // not a configured region
		{"aws/111111111111/acm", []string{"eu-west-1"}},
	}
	_, url := simtest.Start(t, world(), cloudsim.Options{})
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			c := scopedCollector(url, awscollector.Config{Org: true, Regions: tc.regions}, nil)
			var sink collectors.MemorySink
			err := c.CollectScope(context.Background(), tc.id, &sink)
			if !errors.Is(err, collectors.ErrUnknownScope) {
				t.Errorf("CollectScope(%q) = %v, want ErrUnknownScope", tc.id, err)
			}
			if len(sink.Scopes) != 0 || len(sink.Resources) != 0 {
				t.Errorf("an unknown scope reported %d scopes and %d resources", len(sink.Scopes), len(sink.Resources))
			}
		})
	}
}

// TestScopes_organisationChanges: Scopes lists the organisation again, so that an account
// that joins is named; and a collector that listed it before the account joined reads
// the account's scope when asked, rather than calling it unknown.
func TestScopes_organisationChanges(t *testing.T) {
	w := world()
	w.AWS.Accounts[2].Status = "SUSPENDED"
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	ctx := context.Background()
	lister := scopedCollector(url, awscollector.Config{Org: true}, nil)
	worker := scopedCollector(url, awscollector.Config{Org: true}, nil)
	for _, c := range []*awscollector.Collector{lister, worker} {
		scopes, err := c.Scopes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scopes {
			if s.Account == "333333333333" {
				t.Fatalf("the suspended account is named: %s", s.ID)
			}
		}
	}
	sim.Do(func(w *cloudsim.World) { w.AWS.Accounts[2].Status = "ACTIVE" })
	scopes, err := lister.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := scopeIDs(scopes); !slices.Contains(ids, "aws/333333333333/iam") || !slices.Contains(ids, "aws/333333333333/ec2/eu-west-1") {
		t.Errorf("the account that joined is not named: %v", ids)
	}
	var sink collectors.MemorySink
	if err := worker.CollectScope(ctx, "aws/333333333333/ec2/eu-west-1", &sink); err != nil {
		t.Fatalf("a worker that listed the organisation before the account joined: %v", err)
	}
	if len(sink.Scopes) != 1 || sink.Scopes[0].Status != snapshot.ScopeOK || sink.Scopes[0].Resources != 1 {
		t.Errorf("scopes = %+v, want aws/333333333333/ec2/eu-west-1 ok with its group", sink.Scopes)
	}
	ids, err := worker.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, "333333333333") {
		t.Errorf("Discover after the account joined = %v", ids)
	}
}

// TestCollectScope_recovers: a scope id Scopes named while an account's regions could not
// be listed is reported failed while that lasts, and unknown once they can be listed:
// the account's scopes are then its regions'.
func TestCollectScope_recovers(t *testing.T) {
	w := world()
	w.Faults = []cloudsim.Fault{{Service: "ec2", Action: "DescribeRegions", Account: "222222222222", AccessDenied: true}}
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	ctx := context.Background()
	c := scopedCollector(url, awscollector.Config{Org: true}, nil)
	scopes, err := c.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(scopeIDs(scopes), "aws/222222222222/ec2") {
		t.Fatalf("Scopes = %v, want aws/222222222222/ec2", scopeIDs(scopes))
	}
	var sink collectors.MemorySink
	if err := c.CollectScope(ctx, "aws/222222222222/ec2", &sink); err != nil {
		t.Fatal(err)
	}
	if s := sink.Scopes[0]; s.Status != snapshot.ScopeFailed || !strings.Contains(s.Error, "DescribeRegions") || s.AccessDenied != 1 {
		t.Errorf("scope = %+v, want failed naming DescribeRegions, its denial counted", s)
	}
	if err := sim.SetFaults(nil, nil); err != nil {
		t.Fatal(err)
	}
	sink = collectors.MemorySink{}
	if err := c.CollectScope(ctx, "aws/222222222222/ec2", &sink); !errors.Is(err, collectors.ErrUnknownScope) {
		t.Errorf("once the regions list: %v, want ErrUnknownScope", err)
	}
	if len(sink.Scopes) != 0 {
		t.Errorf("reported %+v", sink.Scopes)
	}
	if err := c.CollectScope(ctx, "aws/222222222222/ec2/us-east-1", &sink); err != nil || len(sink.Scopes) != 1 || sink.Scopes[0].Status != snapshot.ScopeOK {
		t.Errorf("the regional scope once the regions list: %v, %+v", err, sink.Scopes)
	}
}

// TestCollectScope_cancelled: a cancelled context is CollectScope's error.
func TestCollectScope_cancelled(t *testing.T) {
	w := world()
	w.Latency = cloudsim.Duration(300 * time.Millisecond)
	_, url := simtest.Start(t, w, cloudsim.Options{})
	c := scopedCollector(url, awscollector.Config{Org: true}, nil)
	if _, err := c.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var sink collectors.MemorySink
	err := c.CollectScope(ctx, "aws/111111111111/iam", &sink)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CollectScope = %v, want the context's error", err)
	}
	for _, s := range sink.Scopes {
		if s.Status == snapshot.ScopeOK {
			t.Errorf("a scope cut short reported ok: %+v", s)
		}
	}
}
