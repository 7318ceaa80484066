package cloudsim

import (
	"context"
	"errors"
	"strings"
	"testing"

	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/api/googleapi"
	"google.golang.org/protobuf/proto"
)

// folderWorld is an organisation → engineering → platform → acme-platform chain, with a
// project directly under the organisation beside it.
const folderWorld = `gcp:
  organizations:
    - id: "123456789012"
      domain: acme.example
      iam_policy:
        bindings:
          - role: roles/resourcemanager.organizationAdmin
            members: [group:gcp-admins@acme.example]
  folders:
    - id: "200000000001"
      display_name: engineering
      parent: organizations/123456789012
      iam_policy:
        bindings:
          - role: roles/editor
            members: [group:eng@acme.example]
    - id: "200000000002"
      parent: folders/200000000001
  projects:
    - id: acme-platform
      number: "333333333333"
      parent: folders/200000000002
    - id: acme-billing
      number: "444444444444"
      parent: organizations/123456789012
`

func startFolderWorld(t *testing.T) (*Sim, *resourcemanager.ProjectsClient, *resourcemanager.FoldersClient, *resourcemanager.OrganizationsClient) {
	t.Helper()
	w, err := ParseWorld([]byte(folderWorld))
	if err != nil {
		t.Fatal(err)
	}
	sim, srv := startGCP(t, w)
	ctx := context.Background()
	pc, err := resourcemanager.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	fc, err := resourcemanager.NewFoldersRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fc.Close() })
	oc, err := resourcemanager.NewOrganizationsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = oc.Close() })
	return sim, pc, fc, oc
}

// TestGCPFolderAncestry walks a project's ancestry the way a collector does: projects.get's
// parent, then folders.get's parent, up to the organisation.
func TestGCPFolderAncestry(t *testing.T) {
	ctx := context.Background()
	_, pc, fc, _ := startFolderWorld(t)
	p, err := pc.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/acme-platform"})
	if err != nil {
		t.Fatal(err)
	}
	var chain []string
	for parent := p.GetParent(); strings.HasPrefix(parent, "folders/"); {
		f, err := fc.GetFolder(ctx, &resourcemanagerpb.GetFolderRequest{Name: parent})
		if err != nil {
			t.Fatalf("get %s: %v", parent, err)
		}
		if f.GetName() != parent || f.GetState() != resourcemanagerpb.Folder_ACTIVE || f.GetEtag() == "" {
			t.Errorf("folder %s: %v", parent, f)
		}
		chain = append(chain, f.GetName()+"="+f.GetDisplayName())
		parent = f.GetParent()
		if !strings.HasPrefix(parent, "folders/") {
			chain = append(chain, parent)
		}
	}
	want := "folders/200000000002=folder-200000000002 folders/200000000001=engineering organizations/123456789012"
	if got := strings.Join(chain, " "); got != want {
		t.Errorf("ancestry %q, want %q", got, want)
	}
	if _, err := fc.GetFolder(ctx, &resourcemanagerpb.GetFolderRequest{Name: "folders/9"}); httpCode(err) != 403 {
		t.Errorf("unknown folder: %v, want 403", err)
	}
}

func TestGCPFolderAndOrganizationPolicies(t *testing.T) {
	ctx := context.Background()
	sim, _, fc, oc := startFolderWorld(t)
	get := map[string]func(name string) (*iampb.Policy, error){
		"folders/": func(name string) (*iampb.Policy, error) {
			return fc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: name, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		},
		"organizations/": func(name string) (*iampb.Policy, error) {
			return oc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: name, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		},
	}
	set := map[string]func(name string, p *iampb.Policy) (*iampb.Policy, error){
		"folders/": func(name string, p *iampb.Policy) (*iampb.Policy, error) {
			return fc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: name, Policy: p})
		},
		"organizations/": func(name string, p *iampb.Policy) (*iampb.Policy, error) {
			return oc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: name, Policy: p})
		},
	}
	tests := []struct {
		name      string
		wantRoles []string
	}{
		{"organizations/123456789012", []string{"roles/resourcemanager.organizationAdmin"}},
		{"folders/200000000001", []string{"roles/editor"}},
		{"folders/200000000002", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind := tc.name[:strings.IndexByte(tc.name, '/')+1]
			pol, err := get[kind](tc.name)
			if err != nil {
				t.Fatal(err)
			}
			var roles []string
			for _, b := range pol.GetBindings() {
				roles = append(roles, b.GetRole())
			}
			if strings.Join(roles, ",") != strings.Join(tc.wantRoles, ",") || len(pol.GetEtag()) == 0 || pol.GetVersion() != 1 {
				t.Fatalf("policy %v, want roles %v, an etag and version 1", pol, tc.wantRoles)
			}

			// Read-modify-write with the etag read, then with the stale one.
			stale := proto.Clone(pol).(*iampb.Policy)
			pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"group:audit@acme.example"}})
			next, err := set[kind](tc.name, pol)
			if err != nil || len(next.GetBindings()) != len(tc.wantRoles)+1 || string(next.GetEtag()) == string(stale.GetEtag()) {
				t.Fatalf("setIamPolicy: %v %v", next, err)
			}
			_, err = set[kind](tc.name, stale)
			var herr *googleapi.Error
			if !errors.As(err, &herr) || herr.Code != 409 || !strings.Contains(herr.Body, `"ABORTED"`) {
				t.Errorf("stale etag: %v, want 409 ABORTED", err)
			}
			public := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"allAuthenticatedUsers"}}}}
			if _, err := set[kind](tc.name, public); httpCode(err) != 400 {
				t.Errorf("allAuthenticatedUsers: %v, want 400", err)
			}
			again, err := get[kind](tc.name)
			if err != nil || string(again.GetEtag()) != string(next.GetEtag()) || len(again.GetBindings()) != len(next.GetBindings()) {
				t.Errorf("policy after set: %v %v, want %v", again, err, next)
			}
		})
	}
	if _, err := get["folders/"]("folders/9"); httpCode(err) != 403 {
		t.Errorf("unknown folder's policy: %v, want 403", err)
	}
	if _, err := get["organizations/"]("organizations/9"); httpCode(err) != 403 {
		t.Errorf("unknown organisation's policy: %v, want 403", err)
	}

	// Faults name a folder or organisation as the call's account.
	if err := sim.SetFaults([]Fault{{Service: "cloudresourcemanager", Action: "GetIamPolicy", Account: "folders/200000000001", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := get["folders/"]("folders/200000000001"); httpCode(err) != 403 {
		t.Errorf("denied folder: %v, want 403", err)
	}
	for _, name := range []string{"folders/200000000002", "organizations/123456789012"} {
		if _, err := get[name[:strings.IndexByte(name, '/')+1]](name); err != nil {
			t.Errorf("%s beside a denied folder: %v", name, err)
		}
	}
	if _, err := fc.GetFolder(ctx, &resourcemanagerpb.GetFolderRequest{Name: "folders/200000000001"}); err != nil {
		t.Errorf("folders.get of the folder whose policy is denied: %v", err)
	}
}

func TestParseWorldFolders(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"folder id not numeric", "gcp:\n  folders:\n    - {id: eng, parent: organizations/1}\n", `gcp.folders[0].id: "eng" is not a numeric folder id`},
		{"folder twice", "gcp:\n  folders:\n    - {id: '1', parent: organizations/1}\n    - {id: '1', parent: organizations/1}\n", "folder 1 appears twice"},
		{"folder parent", "gcp:\n  folders:\n    - {id: '1', parent: projects/p}\n", `gcp.folders[0].parent: "projects/p" is not organizations/N or folders/N`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWorld([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	w, err := ParseWorld([]byte(folderWorld))
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w2, err := ParseWorld(out)
	if err != nil || len(w2.GCP.Folders) != 2 || w2.GCP.Folders[0].IAMPolicy.Bindings[0].Role != "roles/editor" ||
		w2.GCP.Organizations[0].IAMPolicy.Bindings[0].Members[0] != "group:gcp-admins@acme.example" {
		t.Errorf("round trip: %v\n%s", err, out)
	}
	// A world without organisation policies says nothing of them.
	bare, err := (&World{GCP: GCP{Organizations: []*GCPOrganization{{ID: "1", Domain: "x.example"}}}}).Marshal()
	if err != nil || strings.Contains(string(bare), "iam_policy") {
		t.Errorf("organisation without a policy marshals as %s (%v)", bare, err)
	}
}
