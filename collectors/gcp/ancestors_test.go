package gcp_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/snapshot"
)

const (
	orgName = "organizations/123456789012"
	engName = "folders/200000000001" // engineering, under the organisation
	plName  = "folders/200000000002" // platform, under engineering
	orgUID  = "//cloudresourcemanager.googleapis.com/" + orgName
	engUID  = "//cloudresourcemanager.googleapis.com/" + engName
	plUID   = "//cloudresourcemanager.googleapis.com/" + plName
)

// folderWorld is organisation → engineering → platform → {acme-platform, acme-web}, and
// acme-billing directly under the organisation: three projects share the organisation,
// two share both folders.
func folderWorld() *cloudsim.World {
	return &cloudsim.World{GCP: cloudsim.GCP{
		Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example",
			IAMPolicy: cloudsim.IAMPolicy{Etag: "BwYOrgOrgOrg", Bindings: []cloudsim.Binding{
				{Role: "roles/resourcemanager.organizationAdmin", Members: []string{"group:gcp-admins@acme.example"}},
			}}}},
		Folders: []*cloudsim.GCPFolder{
			{ID: "200000000001", DisplayName: "engineering", Parent: orgName, IAMPolicy: cloudsim.IAMPolicy{
				Etag: "BwYEngEngEng", Version: 3, Bindings: []cloudsim.Binding{
					{Role: "roles/editor", Members: []string{"group:eng@acme.example"}},
					{Role: "roles/viewer", Members: []string{"user:contractor@gmail.com"},
						Condition: &cloudsim.Expr{Title: "until 2027", Expression: `request.time < timestamp("2027-01-01T00:00:00Z")`}},
				}}},
			{ID: "200000000002", DisplayName: "platform", Parent: engName},
		},
		Projects: []*cloudsim.Project{
			{ID: "acme-platform", Number: "300000000001", Parent: plName},
			{ID: "acme-web", Number: "300000000002", Parent: plName},
			{ID: "acme-billing", Number: "300000000003", Parent: orgName},
		},
	}}
}

func TestCollectAncestors(t *testing.T) {
	got := collect(t, folderWorld(), nil, gcp.Config{Concurrency: 3})
	any2 := func(s ...string) []any {
		out := []any{}
		for _, v := range s {
			out = append(out, v)
		}
		return out
	}
	tests := []struct {
		uid, typ, name, account string
		attrs                   map[string]any
	}{
		{orgUID, "gcp.organization.iam_policy", "acme.example", orgName, map[string]any{"audit_configs": []any{},
			"organization_id": "123456789012", "domain": "acme.example", "etag": "BwYOrgOrgOrg",
			"bindings": []any{map[string]any{"role": "roles/resourcemanager.organizationAdmin", "members": any2("group:gcp-admins@acme.example"), "condition": nil}}}},
		{engUID, "gcp.folder.iam_policy", "engineering", engName, map[string]any{"audit_configs": []any{},
			"folder_id": "200000000001", "display_name": "engineering", "parent": orgName, "etag": "BwYEngEngEng",
			"bindings": []any{
				map[string]any{"role": "roles/editor", "members": any2("group:eng@acme.example"), "condition": nil},
				map[string]any{"role": "roles/viewer", "members": any2("user:contractor@gmail.com"),
					"condition": map[string]any{"title": "until 2027", "expression": `request.time < timestamp("2027-01-01T00:00:00Z")`}},
			}}},
		{plUID, "gcp.folder.iam_policy", "platform", plName, map[string]any{"audit_configs": []any{},
			"folder_id": "200000000002", "display_name": "platform", "parent": engName, "etag": "*", "bindings": []any{}}},
	}
	for _, tc := range tests {
		t.Run(tc.uid, func(t *testing.T) {
			r, ok := got.resources[tc.uid]
			if !ok {
				t.Fatal("not collected")
			}
			scope := "gcp/" + tc.account + "/iam"
			if r.Type != tc.typ || r.Name != tc.name || r.Account != tc.account || r.Region != "global" || r.Scope != scope {
				t.Errorf("got %s %q account %s region %s scope %s, want %s %q account %s region global scope %s",
					r.Type, r.Name, r.Account, r.Region, r.Scope, tc.typ, tc.name, tc.account, scope)
			}
			if tc.attrs["etag"] == "*" { // made up by the simulator
				tc.attrs["etag"] = r.Attributes["etag"]
			}
			if g, w := normal(t, r.Attributes), normal(t, tc.attrs); !reflect.DeepEqual(g, w) {
				gb, _ := json.Marshal(g)
				wb, _ := json.Marshal(w)
				t.Errorf("attributes\n got  %s\n want %s", gb, wb)
			}
			s := got.scopes[scope]
			want := snapshot.Scope{ID: scope, Provider: "gcp", Account: tc.account, Service: "iam", Status: "ok", Resources: 1, Calls: s.Calls}
			if s != want || s.Calls == 0 {
				t.Errorf("scope %+v, want %+v", s, want)
			}
		})
	}
	// Three projects, each with two scopes, and the three ancestors once each (collect
	// fails the test on a resource or scope reported twice).
	if len(got.scopes) != 9 {
		t.Errorf("scopes: %v", slices.Sorted(maps.Keys(got.scopes)))
	}
	calls := got.sim.Calls()
	if n := calls["cloudresourcemanager:GetFolder"].Calls; n != 2 {
		t.Errorf("folders.get called %d times, want 2 (once per folder)", n)
	}
	if n := calls["cloudresourcemanager:GetIamPolicy"].Calls; n != 6 {
		t.Errorf("getIamPolicy called %d times, want 6 (three projects, three ancestors)", n)
	}

	// A project directly under the organisation has only the organisation above it.
	got = collect(t, folderWorld(), nil, gcp.Config{Projects: []string{"acme-billing"}})
	if _, ok := got.resources[orgUID]; !ok || len(got.scopes) != 3 {
		t.Errorf("acme-billing alone: scopes %v", slices.Sorted(maps.Keys(got.scopes)))
	}
}

func TestCollectAncestorFailures(t *testing.T) {
	full := collect(t, folderWorld(), nil, gcp.Config{})
	const (
		orgScope = "gcp/" + orgName + "/iam"
		engScope = "gcp/" + engName + "/iam"
		plScope  = "gcp/" + plName + "/iam"
	)
	tests := []struct {
		name   string
		faults []cloudsim.Fault
		// status, error prefix and access_denied count of the scopes that are not ok
		want map[string]snapshot.Scope
		// ancestor scopes never reached
		absent []string
	}{
		{
			// The walk goes on above the folder: engineering is reached only through it.
			name:   "folder policy denied",
			faults: []cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetIamPolicy", Account: plName, AccessDenied: true}},
			want: map[string]snapshot.Scope{plScope: {Status: "failed", AccessDenied: 1,
				Error: "cloudresourcemanager.GetIamPolicy: PermissionDenied: "}},
		},
		{
			// The folder's parent is unknown: engineering is not reached from platform, and
			// the organisation only through acme-billing.
			name:   "folders.get denied",
			faults: []cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetFolder", Account: plName, AccessDenied: true}},
			want: map[string]snapshot.Scope{plScope: {Status: "failed", AccessDenied: 1,
				Error: "cloudresourcemanager.GetFolder: PermissionDenied: "}},
			absent: []string{engScope},
		},
		{
			name:   "organisation policy denied",
			faults: []cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetIamPolicy", Account: orgName, AccessDenied: true}},
			want: map[string]snapshot.Scope{orgScope: {Status: "failed", AccessDenied: 1,
				Error: "cloudresourcemanager.GetIamPolicy: PermissionDenied: "}},
		},
		{
			name:   "folder policy unavailable",
			faults: []cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetIamPolicy", Account: engName, ErrorRate: 1}},
			want: map[string]snapshot.Scope{engScope: {Status: "failed",
				Error: "cloudresourcemanager.GetIamPolicy: Unavailable: "}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := collect(t, folderWorld(), tc.faults, gcp.Config{})
			for id := range full.scopes {
				s, ok := got.scopes[id]
				switch w, bad := tc.want[id]; {
				case slices.Contains(tc.absent, id):
					if ok {
						t.Errorf("scope %s read: %+v", id, s)
					}
				case !ok:
					t.Errorf("scope %s missing", id)
				case bad:
					if s.Status != w.Status || !strings.HasPrefix(s.Error, w.Error) || s.AccessDenied != w.AccessDenied || s.Resources != 0 {
						t.Errorf("scope %s: %s %q denied %d resources %d, want %s %q… denied %d and none",
							id, s.Status, s.Error, s.AccessDenied, s.Resources, w.Status, w.Error, w.AccessDenied)
					}
				case s.Status != "ok" || s.Error != "" || s.AccessDenied != 0:
					t.Errorf("scope %s: %s %q denied %d, want ok", id, s.Status, s.Error, s.AccessDenied)
				}
			}
			if len(got.scopes) != len(full.scopes)-len(tc.absent) {
				t.Errorf("scopes: %v", slices.Sorted(maps.Keys(got.scopes)))
			}
			// Every resource of an ok scope is the fault-free one; failed scopes have none.
			for uid, r := range full.resources {
				g, ok := got.resources[uid]
				expected := got.scopes[r.Scope].Status == "ok"
				switch {
				case expected && !ok:
					t.Errorf("%s missing", uid)
				case !expected && ok:
					t.Errorf("%s reported from scope %s (%s)", uid, r.Scope, got.scopes[r.Scope].Status)
				case ok && !reflect.DeepEqual(normal(t, g), normal(t, r)):
					t.Errorf("%s differs from the fault-free collection:\n got  %v\n want %v", uid, g, r)
				}
			}
		})
	}
}
