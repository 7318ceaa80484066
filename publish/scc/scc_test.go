package scc_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	securitycenter "cloud.google.com/go/securitycenter/apiv1"
	"cloud.google.com/go/securitycenter/apiv1/securitycenterpb"
	"google.golang.org/api/iterator"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/publish"
	"github.com/warden-sec/warden/publish/scc"
	"github.com/warden-sec/warden/store"
)

const org = "123456789012"

// env is one case: a simulator serving Security Command Center for the organization, an
// official client over gRPC, a fresh store.
type env struct {
	t      *testing.T
	sim    *cloudsim.Sim
	client *securitycenter.Client
	st     *store.Store
}

// transports are the official client's two ways to Security Command Center, both of
// which the simulator serves: every case runs over each.
var transports = []struct {
	name string
	dial func(ctx context.Context, url string) (*securitycenter.Client, error)
}{
	{"grpc", func(ctx context.Context, url string) (*securitycenter.Client, error) {
		_, rpc, err := gcpapi.ClientOptions(url)
		if err != nil {
			return nil, err
		}
		return securitycenter.NewClient(ctx, rpc...)
	}},
	{"rest", func(ctx context.Context, url string) (*securitycenter.Client, error) {
		rest, _, err := gcpapi.ClientOptions(url)
		if err != nil {
			return nil, err
		}
		return securitycenter.NewRESTClient(ctx, rest...)
	}},
}

// each runs f over each transport, each with a fresh simulator.
func each(t *testing.T, f func(t *testing.T, e *env)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { f(t, newEnv(t, tr.dial)) })
	}
}

func newEnv(t *testing.T, dial func(ctx context.Context, url string) (*securitycenter.Client, error)) *env {
	t.Helper()
	sim, url := simtest.Start(t, &cloudsim.World{GCP: cloudsim.GCP{Organizations: []*cloudsim.GCPOrganization{{ID: org, Domain: "acme.example"}}}}, cloudsim.Options{})
	client, err := dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{t: t, sim: sim, client: client, st: st}
}

// sink is a new sink, as a new warden process makes it.
func (e *env) sink(all bool) *scc.Sink {
	e.t.Helper()
	s, err := scc.New(e.client, scc.Options{Organization: org, All: all})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) run(s *scc.Sink, items []publish.Item, now time.Time) publish.Result {
	e.t.Helper()
	res, err := publish.Run(context.Background(), e.st, s, items, now)
	if err != nil {
		e.t.Fatalf("publish: %v", err)
	}
	return res
}

// calls returns the Security Command Center calls made since the last, and resets them.
func (e *env) calls() map[string]int {
	out := map[string]int{}
	for k, v := range e.sim.Calls() {
		out[k] = v.Calls
	}
	e.sim.ResetCalls()
	return out
}

// findings reads back every finding of every source of the organization through
// ListFindings, by finding id.
func (e *env) findings() map[string]*securitycenterpb.Finding {
	e.t.Helper()
	out := map[string]*securitycenterpb.Finding{}
	it := e.client.ListFindings(context.Background(), &securitycenterpb.ListFindingsRequest{Parent: "organizations/" + org + "/sources/-"})
	for {
		r, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			e.t.Fatalf("ListFindings: %v", err)
		}
		f := r.GetFinding()
		out[f.GetName()[len(f.GetParent())+len("/findings/"):]] = f
	}
	e.sim.ResetCalls()
	return out
}

func gcpFinding(n int) findings.Finding {
	res := fmt.Sprintf("//compute.googleapis.com/projects/acme-prod/global/firewalls/allow-ssh-%d", n)
	return findings.Finding{Policy: "WARDEN-GCP-NET-001", Title: "Firewall opens SSH to the internet", Severity: findings.High,
		Resource: res, ResourceType: "gcp.compute.firewall", Account: "acme-prod", Scope: "gcp/acme-prod/compute",
		Message: fmt.Sprintf("allow-ssh-%d opens SSH to 0.0.0.0/0", n), Fingerprint: findings.Fingerprint("WARDEN-GCP-NET-001", "acme-prod", res, "22"),
		Remediation: findings.Remediation{Action: "gcp.compute.restrict_firewall", Risk: findings.RiskMedium},
		Status:      findings.StatusOpen, FirstSeen: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
}

// warden's source is created once: a second warden finds it by its display name.
func TestSCC_sourceCreatedOnce(t *testing.T) { each(t, testSourceCreatedOnce) }

func testSourceCreatedOnce(t *testing.T, e *env) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	a := []publish.Item{{Finding: gcpFinding(1)}}
	e.run(e.sink(false), a, t0)
	if c := e.calls(); c["securitycenter:CreateSource"] != 1 || c["securitycenter:CreateFinding"] != 1 {
		t.Fatalf("first run: %v", c)
	}
	b := append(a, publish.Item{Finding: gcpFinding(2)})
	e.run(e.sink(false), b, t0.Add(time.Minute))
	if c := e.calls(); c["securitycenter:CreateSource"] != 0 || c["securitycenter:ListSources"] != 1 || c["securitycenter:CreateFinding"] != 1 {
		t.Fatalf("second warden: %v", c)
	}
	fs := e.findings()
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2", len(fs))
	}
	src := e.sink(false)
	name, err := src.Source(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for id, f := range fs {
		if f.GetParent() != name {
			t.Errorf("finding %s in %s, want warden's source %s", id, f.GetParent(), name)
		}
	}
}

// A finding's state and mute follow warden: open is ACTIVE, waived is muted, unknown
// stays ACTIVE (with warden's status in its properties), resolved is INACTIVE; a waiver
// lifted unmutes it. Each change costs the calls it needs, an unchanged sweep none.
func TestSCC_lifecycle(t *testing.T) { each(t, testLifecycle) }

func testLifecycle(t *testing.T, e *env) {
	s := e.sink(false)
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	open, waived, unknown := gcpFinding(1), gcpFinding(2), gcpFinding(3)
	waived.Status = findings.StatusWaived
	waived.Waiver = &findings.WaiverRef{Owner: "bob", Reason: "bastion", Expires: t0.Add(720 * time.Hour)}
	unknown.Status = findings.StatusUnknown
	aws := findings.Finding{Policy: "WARDEN-AWS-IAM-001", Resource: "arn:aws:iam::111111111111:user/alice", ResourceType: "aws.iam.user",
		Fingerprint: "0123456789abcdef0123456789abcdef", Status: findings.StatusOpen}
	items := []publish.Item{{Finding: open, Fix: &publish.Fix{Action: "gcp.compute.restrict_firewall", ID: "a1", State: "pending_approval"}},
		{Finding: waived}, {Finding: unknown}, {Finding: aws}}
	if res := e.run(s, items, t0); res.Considered != 3 || res.Sent != 3 {
		t.Fatalf("first run: %s (the AWS finding is not Security Command Center's)", res)
	}
	if c := e.calls(); c["securitycenter:CreateFinding"] != 3 || c["securitycenter:SetMute"] != 1 || c["securitycenter:SetFindingState"] != 0 {
		t.Errorf("first run's calls: %v", c)
	}
	want := func(f findings.Finding, st securitycenterpb.Finding_State, mute securitycenterpb.Finding_Mute, status string) *securitycenterpb.Finding {
		t.Helper()
		got, ok := e.findings()[f.Fingerprint]
		if !ok {
			t.Fatalf("finding %s not in Security Command Center", f.Fingerprint)
		}
		if got.GetState() != st || got.GetMute() != mute || got.GetSourceProperties()["warden_status"].GetStringValue() != status {
			t.Errorf("finding %s: state %s, mute %s, warden_status %v; want %s, %s, %s", f.Fingerprint, got.GetState(), got.GetMute(),
				got.GetSourceProperties()["warden_status"], st, mute, status)
		}
		return got
	}
	got := want(open, securitycenterpb.Finding_ACTIVE, securitycenterpb.Finding_UNDEFINED, "open")
	if got.GetCategory() != "WARDEN-GCP-NET-001" || got.GetResourceName() != open.Resource || got.GetSeverity() != securitycenterpb.Finding_HIGH ||
		got.GetSourceProperties()["fix_state"].GetStringValue() != "pending_approval" || got.GetFindingClass() != securitycenterpb.Finding_MISCONFIGURATION {
		t.Errorf("open finding: %v", got)
	}
	want(waived, securitycenterpb.Finding_ACTIVE, securitycenterpb.Finding_MUTED, "waived")
	want(unknown, securitycenterpb.Finding_ACTIVE, securitycenterpb.Finding_UNDEFINED, "unknown")

	// Nothing changed: no call at all.
	if res := e.run(s, items, t0.Add(time.Minute)); res.Sent != 0 {
		t.Fatalf("unchanged sweep: %s", res)
	}
	if c := e.calls(); len(c) != 0 {
		t.Errorf("unchanged sweep's calls: %v", c)
	}

	// The open finding resolves (it is no longer among the findings), the waiver is
	// lifted (the finding is open again).
	items[1].Finding.Status, items[1].Finding.Waiver = findings.StatusOpen, nil
	t2 := t0.Add(2 * time.Minute)
	if res := e.run(s, items[1:], t2); res.Sent != 2 || res.Resolved != 1 {
		t.Fatalf("third run: %s", res)
	}
	if c := e.calls(); c["securitycenter:UpdateFinding"] != 2 || c["securitycenter:SetFindingState"] != 1 || c["securitycenter:SetMute"] != 1 || c["securitycenter:CreateFinding"] != 0 {
		t.Errorf("third run's calls: %v", c)
	}
	got = want(open, securitycenterpb.Finding_INACTIVE, securitycenterpb.Finding_UNDEFINED, "resolved")
	if !got.GetEventTime().AsTime().Equal(t2) {
		t.Errorf("resolved finding's event time %v, want %v", got.GetEventTime().AsTime(), t2)
	}
	want(waived, securitycenterpb.Finding_ACTIVE, securitycenterpb.Finding_UNMUTED, "open")

	// Seen again: ACTIVE again.
	if res := e.run(s, items, t2.Add(time.Minute)); res.Sent != 1 {
		t.Fatalf("fourth run: %s", res)
	}
	want(open, securitycenterpb.Finding_ACTIVE, securitycenterpb.Finding_UNDEFINED, "open")
}

// With all, every finding goes to Security Command Center, whatever its cloud.
func TestSCC_all(t *testing.T) { each(t, testAll) }

func testAll(t *testing.T, e *env) {
	aws := findings.Finding{Policy: "WARDEN-AWS-IAM-001", Title: "t", Resource: "arn:aws:iam::111111111111:user/alice", ResourceType: "aws.iam.user",
		Fingerprint: "0123456789abcdef0123456789abcdef", Status: findings.StatusOpen}
	if res := e.run(e.sink(true), []publish.Item{{Finding: aws}, {Finding: gcpFinding(1)}}, time.Now()); res.Sent != 2 {
		t.Fatalf("all: %s", res)
	}
	if got := e.findings()[aws.Fingerprint].GetResourceName(); got != aws.Resource {
		t.Errorf("AWS finding's resource name %q", got)
	}
}

// A warden that lost what it sent (a new database) finds its findings there already:
// each is updated and its state set, never duplicated.
func TestSCC_afterANewDatabase(t *testing.T) { each(t, testNewDatabase) }

func testNewDatabase(t *testing.T, e *env) {
	items := []publish.Item{{Finding: gcpFinding(1)}, {Finding: gcpFinding(2)}}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	e.run(e.sink(false), items, t0)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e.st = st
	e.calls()
	if res := e.run(e.sink(false), items, t0.Add(time.Hour)); res.Sent != 2 || len(res.Refused) != 0 {
		t.Fatalf("after a new database: %s", res)
	}
	if c := e.calls(); c["securitycenter:UpdateFinding"] != 2 || c["securitycenter:SetFindingState"] != 2 {
		t.Errorf("calls after a new database: %v", c)
	}
	fs := e.findings()
	if len(fs) != 2 {
		t.Fatalf("%d findings, want the same 2", len(fs))
	}
	for id, f := range fs {
		if !f.GetEventTime().AsTime().Equal(t0.Add(time.Hour)) || f.GetState() != securitycenterpb.Finding_ACTIVE {
			t.Errorf("finding %s: event time %v, state %s", id, f.GetEventTime().AsTime(), f.GetState())
		}
	}
}
