package gcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/collectorstest"
	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

// scopedCollector is a collector against the simulator at url, unpaced and quick to
// retry, closed when the test ends.
func scopedCollector(t *testing.T, url string, cfg gcp.Config) *gcp.Collector {
	t.Helper()
	cfg.Endpoint, cfg.RateLimit, cfg.MaxAttempts = url, 1000, 4
	cfg.BaseBackoff, cfg.MaxBackoff = time.Millisecond, 5*time.Millisecond
	c := gcp.New(cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// jsonByScope is each scope's resources as JSON, in uid order.
func jsonByScope(t *testing.T, rs []snapshot.Resource) map[string][]string {
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

// withoutCalls is a scope as JSON, its call count left out: Collect shares organisation
// domains between scopes, so that a scope read alone may make a call more.
func withoutCalls(t *testing.T, s snapshot.Scope) string {
	t.Helper()
	s.Calls = 0
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ids(scopes []snapshot.Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = s.ID
	}
	return out
}

// scopeServices are the simulator services a scope's calls go to.
func scopeServices(s snapshot.Scope) []string {
	if s.Service == "compute" {
		return []string{"compute"}
	}
	if strings.Contains(s.Account, "/") {
		return []string{"cloudresourcemanager"} // a folder's or organisation's policy
	}
	return []string{"cloudresourcemanager", "iamadmin"}
}

// TestScopes_equalCollect: in every world, Scopes names exactly the scopes a full Collect
// reports, ancestors included, and CollectScope of each reports that scope (status,
// error, denials) and its resources as Collect did, making only that scope's calls, all
// counted by the scope.
func TestScopes_equalCollect(t *testing.T) {
	acme := func(t *testing.T) *cloudsim.World {
		w, err := cloudsim.LoadWorld(acmeWorld)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	tests := []struct {
		name   string
		world  func(t *testing.T) *cloudsim.World
		faults []cloudsim.Fault
		cfg    gcp.Config
		// failed are scopes Collect reports failed in this world, absent scopes it does not
		// report: the cases the test is about.
		failed, absent []string
	}{
		{"two projects, an organisation unreadable", func(*testing.T) *cloudsim.World { return world() }, nil, gcp.Config{PageSize: 1},
			[]string{"gcp/organizations/999999999999/iam"}, nil},
		{"folders", func(*testing.T) *cloudsim.World { return folderWorld() }, nil, gcp.Config{}, nil, nil},
		{"a folder that cannot be read", func(*testing.T) *cloudsim.World { return folderWorld() },
			[]cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetFolder", Account: plName, AccessDenied: true}}, gcp.Config{},
			[]string{"gcp/" + plName + "/iam"}, []string{"gcp/" + engName + "/iam"}},
		{"a project that cannot be read", func(*testing.T) *cloudsim.World { return world() },
			[]cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetProject", Account: "acme-prod", AccessDenied: true}}, gcp.Config{},
			[]string{"gcp/acme-prod/iam"}, []string{"gcp/organizations/123456789012/iam"}},
		{"configured projects, one missing", func(*testing.T) *cloudsim.World { return folderWorld() }, nil,
			gcp.Config{Projects: []string{"acme-web", "ghost"}}, []string{"gcp/ghost/iam", "gcp/ghost/compute"}, []string{"gcp/acme-platform/iam"}},
		{"acme", acme, nil, gcp.Config{}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim, url := simtest.Start(t, tc.world(t), cloudsim.Options{})
			if err := sim.SetFaults(tc.faults, nil); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var full collectors.MemorySink
			if err := scopedCollector(t, url, tc.cfg).Collect(ctx, &full); err != nil {
				t.Fatal(err)
			}
			want := map[string]snapshot.Scope{}
			for _, s := range full.Scopes {
				want[s.ID] = s
			}
			wantRes := jsonByScope(t, full.Resources)
			for _, id := range tc.failed {
				if want[id].Status != snapshot.ScopeFailed {
					t.Fatalf("the world does not fail %s in Collect: %+v", id, want[id])
				}
			}
			for _, id := range tc.absent {
				if _, ok := want[id]; ok {
					t.Fatalf("Collect reports %s", id)
				}
			}

			c := scopedCollector(t, url, tc.cfg)
			scopes, err := c.Scopes(ctx)
			if err != nil {
				t.Fatalf("Scopes: %v", err)
			}
			if got, w := ids(scopes), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
				t.Fatalf("Scopes differ from Collect's:\nScopes  %v\nCollect %v", got, w)
			}
			for _, s := range scopes {
				w := want[s.ID]
				if s.Provider != "gcp" || s.Account != w.Account || s.Service != w.Service || s.Region != w.Region || s.Status != "" {
					t.Errorf("Scopes named %+v, Collect %+v", s, w)
				}
			}

			for _, s := range scopes {
				t.Run(s.ID, func(t *testing.T) {
					sim.ResetCalls()
					var sink collectors.MemorySink
					if err := c.CollectScope(ctx, s.ID, &sink); err != nil {
						t.Fatalf("CollectScope: %v", err)
					}
					if len(sink.Scopes) != 1 || sink.Scopes[0].ID != s.ID {
						t.Fatalf("CollectScope reported scopes %v, want %s alone", ids(sink.Scopes), s.ID)
					}
					got := sink.Scopes[0]
					if g, w := withoutCalls(t, got), withoutCalls(t, want[s.ID]); g != w {
						t.Errorf("scope differs from Collect's:\nCollectScope %s\nCollect      %s", g, w)
					}
					gotRes := jsonByScope(t, sink.Resources)
					if len(gotRes) > 1 || (len(gotRes) == 1 && gotRes[s.ID] == nil) {
						t.Errorf("CollectScope reported resources of scopes %v", slices.Sorted(maps.Keys(gotRes)))
					}
					if !slices.Equal(gotRes[s.ID], wantRes[s.ID]) {
						t.Errorf("resources differ from Collect's:\nCollectScope %v\nCollect      %v", gotRes[s.ID], wantRes[s.ID])
					}
					served := 0
					for op, st := range sim.Calls() {
						svc, _, _ := strings.Cut(op, ":")
						if !slices.Contains(scopeServices(got), svc) {
							t.Errorf("reading %s alone called %s", s.ID, op)
						}
						served += st.Calls
					}
					if served != got.Calls || got.Calls == 0 {
						t.Errorf("the scope counts %d calls, the simulator served %d", got.Calls, served)
					}
				})
			}
		})
	}
}

// TestCollectScope_alone: a collector that has not listed its scopes checks the id with
// the discovery it needs (the projects; for an ancestor, their ancestry) and then makes
// that scope's calls only.
func TestCollectScope_alone(t *testing.T) {
	tests := []struct {
		id    string
		calls []string
	}{
		{"gcp/acme-web/compute", []string{"cloudresourcemanager:SearchProjects",
			"compute:AggregatedListInstances", "compute:GetProject", "compute:ListFirewalls", "compute:ListNetworks", "compute:ListSslCertificates"}},
		{"gcp/acme-billing/iam", []string{"cloudresourcemanager:GetIamPolicy", "cloudresourcemanager:GetOrganization",
			"cloudresourcemanager:GetProject", "cloudresourcemanager:SearchProjects", "iamadmin:ListServiceAccounts",
			"iamadmin:ListWorkloadIdentityPools"}},
		{"gcp/" + engName + "/iam", []string{"cloudresourcemanager:GetFolder", "cloudresourcemanager:GetIamPolicy",
			"cloudresourcemanager:GetProject", "cloudresourcemanager:SearchProjects"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			sim, url := simtest.Start(t, folderWorld(), cloudsim.Options{})
			c := scopedCollector(t, url, gcp.Config{})
			var sink collectors.MemorySink
			if err := c.CollectScope(context.Background(), tc.id, &sink); err != nil {
				t.Fatal(err)
			}
			if len(sink.Scopes) != 1 || sink.Scopes[0].ID != tc.id || sink.Scopes[0].Status != snapshot.ScopeOK {
				t.Fatalf("scopes = %+v, want %s ok", sink.Scopes, tc.id)
			}
			for _, r := range sink.Resources {
				if r.Scope != tc.id {
					t.Errorf("resource %s of scope %s", r.UID, r.Scope)
				}
			}
			if got := slices.Sorted(maps.Keys(sim.Calls())); !slices.Equal(got, tc.calls) {
				t.Errorf("calls served:\ngot  %v\nwant %v", got, tc.calls)
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
		{cloudsim.Fault{Service: "compute", Action: "ListFirewalls", Account: "acme-web", AccessDenied: true}, "gcp/acme-web/compute"},
		{cloudsim.Fault{Service: "cloudresourcemanager", Action: "GetIamPolicy", Account: engName, AccessDenied: true}, "gcp/" + engName + "/iam"},
		{cloudsim.Fault{Service: "iamadmin", Action: "ListServiceAccounts", Account: "acme-billing", AccessDenied: true}, "gcp/acme-billing/iam"},
		{cloudsim.Fault{Service: "cloudresourcemanager", Action: "GetIamPolicy", Account: orgName, AccessDenied: true}, "gcp/" + orgName + "/iam"},
	}
	for _, tc := range tests {
		t.Run(tc.scope, func(t *testing.T) {
			sim, url := simtest.Start(t, folderWorld(), cloudsim.Options{})
			if err := sim.SetFaults([]cloudsim.Fault{tc.fault}, nil); err != nil {
				t.Fatal(err)
			}
			c := scopedCollector(t, url, gcp.Config{})
			collectorstest.OnlyScopeDenied(t, c, tc.scope)
		})
	}
}

// TestCollectScope_unknown: an id that is not one of the collector's scopes is
// ErrUnknownScope, and nothing is reported.
func TestCollectScope_unknown(t *testing.T) {
	tests := []string{
		"", "gcp", "gcp/acme-web", "gcp//iam", "gcp/acme-web/storage", "gcp/acme-web/iam/x",
		"gcp/ghost/iam",                // not a project the credentials see
		"gcp/folders/iam",              // a folder without its number
		"gcp/folders/300000000009/iam", // above none of the projects
		"gcp/organizations/1/iam",      // likewise
		"gcp/" + engName + "/compute",  // folders have no compute scope
		"gcp/projects/acme-web/iam",    // a project is named by its id alone
		"aws/111111111111/iam",         // another provider's
		"tls/shop.acme.example:443",    // likewise
	}
	_, url := simtest.Start(t, folderWorld(), cloudsim.Options{})
	c := scopedCollector(t, url, gcp.Config{})
	for _, id := range tests {
		t.Run(id, func(t *testing.T) {
			var sink collectors.MemorySink
			err := c.CollectScope(context.Background(), id, &sink)
			if !errors.Is(err, collectors.ErrUnknownScope) {
				t.Errorf("CollectScope(%q) = %v, want ErrUnknownScope", id, err)
			}
			if len(sink.Scopes) != 0 || len(sink.Resources) != 0 {
				t.Errorf("an unknown scope reported %d scopes and %d resources", len(sink.Scopes), len(sink.Resources))
			}
		})
	}
}
