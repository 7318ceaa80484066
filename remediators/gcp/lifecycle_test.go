package gcp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	gcpfix "github.com/warden-sec/warden/remediators/gcp"
)

const (
	projectUID = "//cloudresourcemanager.googleapis.com/projects/" + project
	folderUID  = "//cloudresourcemanager.googleapis.com/folders/" + folder
	keyUID     = "//iam.googleapis.com/projects/" + project + "/serviceAccounts/" + deployer + "/keys/k1"
	sshUID     = "//compute.googleapis.com/projects/" + project + "/global/firewalls/allow-ssh"
)

// bindings renders a policy as "role[condition title]=member,member" lines, in order.
func bindings(t *testing.T, e *env, resource string) []string {
	t.Helper()
	var p *iampb.Policy
	var err error
	req := &iampb.GetIamPolicyRequest{Resource: resource, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}}
	if strings.HasPrefix(resource, "folders/") {
		p, err = e.clients.Folders.GetIamPolicy(context.Background(), req)
	} else {
		p, err = e.clients.Projects.GetIamPolicy(context.Background(), req)
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range p.Bindings {
		cond := ""
		if c := b.GetCondition(); c != nil {
			cond = fmt.Sprintf("[%s: %s]", c.GetTitle(), c.GetExpression())
		}
		out = append(out, b.Role+cond+"="+strings.Join(b.Members, ","))
	}
	return out
}

func removeMember(c *gcpapi.Clients) remediators.Remediator { return gcpfix.NewRemoveBindingMember(c) }

var (
	ownerLine = "roles/owner=user:alice@acme.example"
	tempLine  = "roles/editor[temp: " + tempCond + "]=user:bob@gmail.com"
)

func TestRemoveBindingMember_removesOneMemberOfTheUnconditionalBinding(t *testing.T) {
	lifecycle{
		fix: removeMember, uid: projectUID, params: map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com"},
		part:  "roles/editor/user:bob@gmail.com",
		parts: []string{"roles/editor/user:bob@gmail.com", "roles/editor/user:bob@gmail.com?condition=" + tempCond},
		fixed: func(t *testing.T, e *env) {
			want := []string{ownerLine, "roles/editor=user:carol@acme.example", tempLine}
			if got := bindings(t, e, "projects/"+project); !slices.Equal(got, want) {
				t.Errorf("policy after Apply:\n%q\nwant\n%q", got, want)
			}
		},
		undone: func(t *testing.T, e *env) {
			want := []string{ownerLine, "roles/editor=user:carol@acme.example,user:bob@gmail.com", tempLine}
			if got := bindings(t, e, "projects/"+project); !slices.Equal(got, want) {
				t.Errorf("policy after Rollback:\n%q\nwant\n%q", got, want)
			}
		},
	}.run(t)
}

func TestRemoveBindingMember_conditionNamesOneBindingWhichEmptyIsDropped(t *testing.T) {
	params := map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com", "condition": "temp"}
	lifecycle{
		fix: removeMember, uid: projectUID, params: params,
		part: "roles/editor/user:bob@gmail.com?condition=" + tempCond, parts: []string{"roles/editor/user:bob@gmail.com?condition=" + tempCond},
		fixed: func(t *testing.T, e *env) {
			want := []string{ownerLine, "roles/editor=user:bob@gmail.com,user:carol@acme.example"}
			if got := bindings(t, e, "projects/"+project); !slices.Equal(got, want) {
				t.Errorf("policy after Apply:\n%q\nwant\n%q", got, want)
			}
		},
		undone: func(t *testing.T, e *env) {
			want := []string{ownerLine, "roles/editor=user:bob@gmail.com,user:carol@acme.example", tempLine}
			if got := bindings(t, e, "projects/"+project); !slices.Equal(got, want) {
				t.Errorf("policy after Rollback:\n%q\nwant\n%q", got, want)
			}
		},
	}.run(t)
}

func TestRemoveBindingMember_onAFolderPolicy(t *testing.T) {
	lifecycle{
		fix: removeMember, uid: folderUID, params: map[string]any{"role": "roles/editor", "member": "user:dave@gmail.com"},
		part: "roles/editor/user:dave@gmail.com", parts: []string{"roles/editor/user:dave@gmail.com"},
		fixed: func(t *testing.T, e *env) {
			if got := bindings(t, e, "folders/"+folder); !slices.Equal(got, []string{"roles/viewer=group:staff@acme.example"}) {
				t.Errorf("folder policy after Apply: %q", got)
			}
		},
		undone: func(t *testing.T, e *env) {
			want := []string{"roles/viewer=group:staff@acme.example", "roles/editor=user:dave@gmail.com"}
			if got := bindings(t, e, "folders/"+folder); !slices.Equal(got, want) {
				t.Errorf("folder policy after Rollback: %q, want %q", got, want)
			}
		},
	}.run(t)
}

// A concurrent setIamPolicy between the fix's read and its write makes the write ABORTED:
// the fix reads again and writes again, and the concurrent change survives.
func TestRemoveBindingMember_retriesAfterAConcurrentWrite(t *testing.T) {
	ctx := context.Background()
	e := start(t, world())
	rem := gcpfix.NewRemoveBindingMember(e.clients)
	a, _ := e.planned(t, rem, projectUID, map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com"}, "roles/editor/user:bob@gmail.com")
	e.sim.ResetCalls()
	e.sim.OnNextCall("cloudresourcemanager:SetIamPolicy", func() {
		// Another administrator, through their own client, between our read and write.
		p, err := e.clients.Projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + project,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err != nil {
			t.Error(err)
			return
		}
		p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:eve@acme.example"}})
		if _, err := e.clients.Projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/" + project, Policy: p}); err != nil {
			t.Error(err)
		}
	})
	if err := rem.Apply(ctx, a); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []string{ownerLine, "roles/editor=user:carol@acme.example", tempLine, "roles/viewer=user:eve@acme.example"}
	if got := bindings(t, e, "projects/"+project); !slices.Equal(got, want) {
		t.Errorf("policy:\n%q\nwant\n%q", got, want)
	}
	// Ours refused, theirs, ours again.
	if n := e.sim.Calls()["cloudresourcemanager:SetIamPolicy"].Calls; n != 3 {
		t.Errorf("SetIamPolicy calls = %d, want 3", n)
	}
}

// A policy that keeps changing under the fix is given up on with the conflict, never
// written blindly.
func TestRemoveBindingMember_givesUpOnEndlessConflicts(t *testing.T) {
	ctx := context.Background()
	e := start(t, world())
	rem := gcpfix.NewRemoveBindingMember(e.clients)
	a, _ := e.planned(t, rem, projectUID, map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com"}, "roles/editor/user:bob@gmail.com")
	var interfere func()
	n := 0
	interfere = func() {
		n++
		e.sim.Do(func(w *cloudsim.World) { w.GCP.Projects[0].IAMPolicy.Etag = fmt.Sprintf("QUJD%04d", n) })
		e.sim.OnNextCall("cloudresourcemanager:SetIamPolicy", interfere)
	}
	e.sim.OnNextCall("cloudresourcemanager:SetIamPolicy", interfere)
	err := rem.Apply(ctx, a)
	if !gcpapi.IsConflict(err) || errors.Is(err, remediators.ErrConverged) {
		t.Fatalf("Apply under endless conflicts: %v, want the conflict", err)
	}
	if got := bindings(t, e, "projects/"+project); !slices.Contains(got, "roles/editor=user:bob@gmail.com,user:carol@acme.example") {
		t.Errorf("policy changed by a refused write: %q", got)
	}
}

func keyDisabled(t *testing.T, e *env, id string) bool {
	t.Helper()
	k, err := e.clients.IAM.GetServiceAccountKey(context.Background(), &adminpb.GetServiceAccountKeyRequest{
		Name: "projects/" + project + "/serviceAccounts/" + deployer + "/keys/" + id})
	if err != nil {
		t.Fatal(err)
	}
	return k.GetDisabled()
}

func TestDisableServiceAccountKey_lifecycle(t *testing.T) {
	lifecycle{
		fix: func(c *gcpapi.Clients) remediators.Remediator { return gcpfix.NewDisableServiceAccountKey(c) },
		uid: keyUID, part: "k1", parts: []string{"k1"},
		fixed: func(t *testing.T, e *env) {
			if !keyDisabled(t, e, "k1") || keyDisabled(t, e, "k2") {
				t.Errorf("after Apply: k1 disabled %v, k2 disabled %v; want k1 only", keyDisabled(t, e, "k1"), keyDisabled(t, e, "k2"))
			}
		},
		undone: func(t *testing.T, e *env) {
			if keyDisabled(t, e, "k1") {
				t.Error("k1 still disabled after Rollback")
			}
		},
	}.run(t)
}

func firewall(t *testing.T, e *env, name string) *computepb.Firewall {
	t.Helper()
	fw, err := e.clients.Firewalls.Get(context.Background(), &computepb.GetFirewallRequest{Project: project, Firewall: name})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

func TestDisableFirewall_lifecycle(t *testing.T) {
	lifecycle{
		fix: func(c *gcpapi.Clients) remediators.Remediator { return gcpfix.NewDisableFirewall(c) },
		uid: sshUID, part: "allow-ssh", parts: []string{"allow-ssh"},
		fixed: func(t *testing.T, e *env) {
			fw := firewall(t, e, "allow-ssh")
			if !fw.GetDisabled() || !slices.Equal(fw.GetSourceRanges(), []string{"0.0.0.0/0"}) || fw.GetDescription() != "ssh from anywhere" ||
				!slices.Equal(fw.GetTargetTags(), []string{"ssh"}) || fw.GetAllowed()[0].GetPorts()[0] != "22" {
				t.Errorf("firewall after Apply: %v, want disabled and otherwise unchanged", fw)
			}
			if firewall(t, e, "allow-web").GetDisabled() {
				t.Error("another rule was disabled")
			}
		},
		undone: func(t *testing.T, e *env) {
			if fw := firewall(t, e, "allow-ssh"); fw.GetDisabled() {
				t.Errorf("firewall after Rollback: %v, want enabled", fw)
			}
		},
	}.run(t)
}

// Denied and throttled writes are errors a caller counts and reports: never "already
// converged", and the cloud is unchanged.
func TestApply_refusedWritesAreErrorsNotConverged(t *testing.T) {
	tests := []struct {
		name  string
		fault cloudsim.Fault
		fix   func(*gcpapi.Clients) remediators.Remediator
		uid   string
		part  string
		is    func(error) bool
	}{
		{"denied key", cloudsim.Fault{Service: "iamadmin", Writes: true, AccessDenied: true},
			func(c *gcpapi.Clients) remediators.Remediator { return gcpfix.NewDisableServiceAccountKey(c) }, keyUID, "k1", gcpapi.IsDenied},
		{"throttled firewall", cloudsim.Fault{Service: "compute", Action: "PatchFirewall", ThrottleRate: 1},
			func(c *gcpapi.Clients) remediators.Remediator { return gcpfix.NewDisableFirewall(c) }, sshUID, "allow-ssh", gcpapi.IsThrottled},
		{"denied policy", cloudsim.Fault{Service: "cloudresourcemanager", Action: "SetIamPolicy", AccessDenied: true},
			removeMember, projectUID, "roles/editor/user:bob@gmail.com", gcpapi.IsDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, world())
			rem := tt.fix(e.clients)
			a, _ := e.planned(t, rem, tt.uid, map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com"}, tt.part)
			if err := e.sim.SetFaults([]cloudsim.Fault{tt.fault}, nil); err != nil {
				t.Fatal(err)
			}
			err := rem.Apply(context.Background(), a)
			if err == nil || errors.Is(err, remediators.ErrConverged) || !tt.is(err) {
				t.Fatalf("Apply: %v, want a %s error", err, tt.name)
			}
			if err := e.sim.SetFaults(nil, nil); err != nil {
				t.Fatal(err)
			}
			if again, _ := e.planned(t, rem, tt.uid, map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com"}, tt.part); string(again.Before) != string(a.Before) {
				t.Errorf("a refused write changed the part: %s, was %s", again.Before, a.Before)
			}
		})
	}
}
