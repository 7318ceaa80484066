package gcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
)

const (
	project  = "acme-prod"
	folder   = "200000000001"
	deployer = "deployer@acme-prod.iam.gserviceaccount.com"
	tempCond = `request.time < timestamp("2027-01-01T00:00:00Z")`
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// world is one project under a folder, with a drift for every fix: basic roles held by
// outsiders (one unconditionally and under a condition), a folder-level editor, an old
// user-managed key, SSH open to the internet.
func world() *cloudsim.World {
	return &cloudsim.World{GCP: cloudsim.GCP{
		Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example"}},
		Folders: []*cloudsim.GCPFolder{{ID: folder, DisplayName: "prod", Parent: "organizations/123456789012",
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
				{Role: "roles/editor", Members: []string{"user:dave@gmail.com"}},
				{Role: "roles/viewer", Members: []string{"group:staff@acme.example"}},
			}}}},
		Projects: []*cloudsim.Project{{
			ID: project, Number: "111111111111", Parent: "folders/" + folder,
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
				{Role: "roles/owner", Members: []string{"user:alice@acme.example"}},
				{Role: "roles/editor", Members: []string{"user:bob@gmail.com", "user:carol@acme.example"}},
				{Role: "roles/editor", Members: []string{"user:bob@gmail.com"}, Condition: &cloudsim.Expr{Title: "temp", Expression: tempCond}},
			}},
			ServiceAccounts: []*cloudsim.ServiceAccount{{Email: deployer, UniqueID: "100000000000000000001", Keys: []*cloudsim.SAKey{
				{ID: "k1", ValidAfter: t0, ValidBefore: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
				{ID: "k2", ValidAfter: t0.AddDate(1, 0, 0), ValidBefore: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
			}}},
			Networks: []*cloudsim.Network{{Name: "default"}},
			Firewalls: []*cloudsim.Firewall{
				{Name: "allow-ssh", Network: "default", Priority: 1000, SourceRanges: []string{"0.0.0.0/0"}, TargetTags: []string{"ssh"},
					Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}, Description: "ssh from anywhere"},
				{Name: "allow-web", Network: "default", SourceRanges: []string{"0.0.0.0/0"}, Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"443"}}}},
			},
		}},
	}}
}

type env struct {
	sim     *cloudsim.Sim
	url     string // the simulator's
	clients *gcpapi.Clients
}

func start(t *testing.T, w *cloudsim.World, faults ...cloudsim.Fault) *env {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	if err := sim.SetFaults(faults, nil); err != nil {
		t.Fatal(err)
	}
	c, err := gcpapi.New(context.Background(), gcpapi.Options{Endpoint: url, RateLimit: 1000, MaxAttempts: 3,
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &env{sim: sim, url: url, clients: c}
}

// collect reads the project with the GCP collector, through a JSON round trip as a
// snapshot file would carry it.
func (e *env) collect(t *testing.T) map[string]snapshot.Resource {
	t.Helper()
	c := gcpcollector.New(gcpcollector.Config{Projects: []string{project}, Endpoint: e.url, RateLimit: 1000,
		MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	out := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back snapshot.Resource
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		out[back.UID] = back
	}
	return out
}

func action(rem remediators.Remediator, res snapshot.Resource, params map[string]any, tg remediators.Target) remediators.Action {
	return remediators.Action{ID: "act-test", Remediator: rem.Spec().Action, Target: res.UID, ResourceType: res.Type,
		Account: res.Account, Region: res.Region, Part: tg.Part, Params: params, Before: tg.Before, Rollback: rem.Spec().Rollback}
}

// planned collects the world and returns the action of one part of one resource.
func (e *env) planned(t *testing.T, rem remediators.Remediator, uid string, params map[string]any, part string) (remediators.Action, []string) {
	t.Helper()
	res, ok := e.collect(t)[uid]
	if !ok {
		t.Fatalf("%s was not collected", uid)
	}
	ts, err := rem.Targets(res, params)
	if err != nil {
		t.Fatalf("Targets: %v", err)
	}
	var parts []string
	var a *remediators.Action
	for _, tg := range ts {
		parts = append(parts, tg.Part)
		if tg.Part == part {
			x := action(rem, res, params, tg)
			a = &x
		}
	}
	if a == nil {
		t.Fatalf("no part %s in %q", part, parts)
	}
	return *a, parts
}

// lifecycle is one fix's whole life against the simulator, as in remediators/aws.
type lifecycle struct {
	fix    func(*gcpapi.Clients) remediators.Remediator
	uid    string
	params map[string]any
	part   string
	parts  []string
	// fixed and undone check the cloud through the SDK after Apply and Rollback.
	fixed, undone func(t *testing.T, e *env)
}

// run: Targets on the collected resource → Apply writes → the cloud is fixed and a new
// collection finds no such part → Apply again is ErrConverged without a write →
// Rollback restores the before-state byte for byte, as collected → Rollback again writes
// nothing.
func (lc lifecycle) run(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	e := start(t, world())
	rem := lc.fix(e.clients)
	a, parts := e.planned(t, rem, lc.uid, lc.params, lc.part)
	if !slices.Equal(parts, lc.parts) {
		t.Errorf("Targets parts = %q, want %q", parts, lc.parts)
	}
	e.sim.ResetCalls()
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if e.sim.WriteCount() == 0 {
		t.Fatal("Apply made no write call")
	}
	lc.fixed(t, e)
	if res, ok := e.collect(t)[lc.uid]; ok {
		ts, err := rem.Targets(res, lc.params)
		if err != nil {
			t.Fatalf("Targets after Apply: %v", err)
		}
		for _, x := range ts {
			if x.Part == lc.part {
				t.Errorf("after Apply the collected resource still has part %s", x.Part)
			}
		}
	}
	e.sim.ResetCalls()
	if err := rem.Apply(ctx, a); !errors.Is(err, remediators.ErrConverged) {
		t.Errorf("second Apply: %v, want ErrConverged", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("second Apply wrote %v, want no write", w)
	}
	if err := rem.Rollback(ctx, a); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	lc.undone(t, e)
	back, _ := e.planned(t, rem, lc.uid, lc.params, lc.part)
	if string(back.Before) != string(a.Before) {
		t.Errorf("after Rollback part %s is\n%s\nwant the before-state\n%s", lc.part, back.Before, a.Before)
	}
	e.sim.ResetCalls()
	if err := rem.Rollback(ctx, a); err != nil {
		t.Errorf("second Rollback: %v", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("second Rollback wrote %v, want no write", w)
	}
}
