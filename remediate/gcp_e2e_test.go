package remediate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	iampb "cloud.google.com/go/iam/apiv1/iampb"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

const gcpProject = "acme-prod"

// The GCP path through the machine with the official Google clients: an outsider's
// basic role is removed from one binding (read-modify-write with the etag, the
// conditional binding and the other members untouched), verified by reading again, and
// added back by rollback.
func TestApply_gcpBindingMemberRemovedVerifiedAndRolledBack(t *testing.T) {
	ctx := context.Background()
	const cond = `request.time < timestamp("2027-01-01T00:00:00Z")`
	w := &cloudsim.World{GCP: cloudsim.GCP{
		Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example"}},
		Projects: []*cloudsim.Project{{ID: gcpProject, Number: "111111111111", Parent: "organizations/123456789012",
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
				{Role: "roles/owner", Members: []string{"user:alice@acme.example"}},
				{Role: "roles/editor", Members: []string{"user:bob@gmail.com", "user:carol@acme.example"}},
				{Role: "roles/viewer", Members: []string{"user:bob@gmail.com"}, Condition: &cloudsim.Expr{Title: "temp", Expression: cond}},
			}},
			Networks: []*cloudsim.Network{{Name: "default"}},
		}},
	}}
	e := startGCP(t, w, gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium, findings.RiskHigh}})
	clients, m, log := e.clients, e.machine, e.log
	plan := e.plan(t)
	p := plan.Only(func(a remediate.PlannedAction) bool {
		return a.Remediator == "gcp.iam.remove_binding_member" && strings.Contains(fmt.Sprint(a.Params), "bob@gmail.com") &&
			fmt.Sprint(a.Params["role"]) == "roles/editor"
	})
	if len(p.Actions) != 1 {
		var got []string
		for _, a := range plan.Actions {
			got = append(got, a.Remediator+" "+a.Part+fmt.Sprint(a.Params))
		}
		t.Fatalf("want one removal of bob from roles/editor; plan:\n%s", strings.Join(got, "\n"))
	}
	id := p.Actions[0].ID
	// Two policies (a basic role, an outside member) find bob's editor role: one change,
	// one action; the other finding is a notice naming it.
	merged := 0
	for _, n := range plan.Notices {
		if strings.Contains(n.Reason, "the same change is planned as "+id) {
			merged++
		}
	}
	if merged != 1 {
		t.Errorf("%d notices name %s as the same change, want 1: %+v", merged, id, plan.Notices)
	}

	policy := func() []string {
		t.Helper()
		pol, err := clients.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + gcpProject,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range pol.Bindings {
			line := b.Role
			if c := b.GetCondition(); c != nil {
				line += "[" + c.GetTitle() + "]"
			}
			// Members are a set: their order is not part of the policy.
			members := slices.Sorted(slices.Values(b.Members))
			out = append(out, line+"="+strings.Join(members, ","))
		}
		return out
	}
	before := policy()

	r, err := m.Apply(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	if it := itemOf(t, r, id); it.State != remediate.StateVerified || !it.Wrote {
		t.Fatalf("fix: %+v", it)
	}
	want := []string{"roles/owner=user:alice@acme.example", "roles/editor=user:carol@acme.example", "roles/viewer[temp]=user:bob@gmail.com"}
	if got := policy(); !slices.Equal(got, want) {
		t.Fatalf("policy after the fix:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	it, err := m.Rollback(ctx, id)
	if err != nil || it.State != remediate.StateRolledBack {
		t.Fatalf("rollback: %+v %v", it, err)
	}
	after := policy()
	slices.Sort(after)
	slices.Sort(before)
	if !slices.Equal(after, before) {
		t.Fatalf("policy after rollback:\n%s\nwant the original:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	if rep, err := log.Verify(ctx, nil); err != nil || rep.Entries == 0 {
		t.Fatalf("audit verify: %+v %v", rep, err)
	}
}

// gcpEnv is the GCP side of a machine test: the simulator, the official Google clients,
// the built-in pack, a SQLite store with its audit log and gate, and the machine acting
// as alice.
type gcpEnv struct {
	clients *gcpapi.Clients
	reg     *remediators.Registry
	eng     *engine.Engine
	reader  *gcpcollector.Collector
	log     *audit.Log
	gate    *gates.Gate
	gates   gates.Config
	machine *remediate.Machine
}

// startGCP serves w and wires an environment around it, gated by gcfg.
func startGCP(t *testing.T, w *cloudsim.World, gcfg gates.Config) *gcpEnv {
	t.Helper()
	return startGCPOn(t, w, gcfg, storetest.Backends(t)["sqlite"](t), false)
}

// startGCPOn is startGCP on the database dsn, its reader reading IAM recommendations
// when recommendations is set.
func startGCPOn(t *testing.T, w *cloudsim.World, gcfg gates.Config, dsn string, recommendations bool) *gcpEnv {
	t.Helper()
	_, url := simtest.Start(t, w, cloudsim.Options{})
	clients, err := gcpapi.New(context.Background(), gcpapi.Options{Endpoint: url, RateLimit: 1000, MaxAttempts: 3,
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = clients.Close() })
	reg, err := builtin.Registry(nil, clients)
	if err != nil {
		t.Fatal(err)
	}
	e := &gcpEnv{clients: clients, reg: reg, gates: gcfg,
		eng:    remediatetest.Engine(t, reg, map[string]any{"allowed_domains": []any{"acme.example"}}),
		reader: gcpcollector.New(gcpcollector.Config{Projects: []string{gcpProject}, Clients: clients, Recommendations: recommendations})}
	st := storetest.Open(t, dsn)
	e.log = audit.New(st, audit.Options{})
	e.gate = gates.New(st, e.log, gcfg, time.Now)
	e.machine = remediate.New(remediate.Options{Store: st, Log: e.log, Gate: e.gate, Gates: gcfg, Registry: reg,
		Observer: remediate.Readers{e.reader}, Engine: e.eng, Actor: "alice"})
	return e
}

// plan collects the project, evaluates it and plans every finding, as alice.
func (e *gcpEnv) plan(t *testing.T) *remediate.Plan {
	t.Helper()
	ctx := context.Background()
	var sink collectors.MemorySink
	if err := e.reader.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	h := snapshot.Header{Version: 1, CollectedAt: now, Scopes: sink.Scopes}
	res, err := e.eng.Evaluate(ctx, h, now, sink.Resources)
	if err != nil || len(res.EvalErrors) > 0 {
		t.Fatalf("evaluate: %v %v", err, res.EvalErrors)
	}
	byUID := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		byUID[r.UID] = r
	}
	p, err := remediate.NewPlan(remediate.PlanInput{Header: h, Name: "gcp", Findings: res.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { r, ok := byUID[uid]; return r, ok },
		Complete: func(string) bool { return true }, Registry: e.reg, Gates: e.gates, Actor: "alice", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
