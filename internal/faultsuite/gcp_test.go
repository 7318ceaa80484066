package faultsuite_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/store/storetest"
)

// project is the GCP world's one project.
const project = "acme-prod"

// editor is the member gcpWorld grants roles/editor to, beside Google's APIs service
// agent, which holds it by design (no policy finds it).
const editor = "user:bob@acme.example"

// gcpWorld is one project whose firewall rules open SSH to the internet (two of them,
// beside an office rule) and whose IAM policy grants the basic role roles/editor to a
// user.
func gcpWorld() *cloudsim.World {
	ssh := func(name string) *cloudsim.Firewall {
		return &cloudsim.Firewall{Name: name, Network: "prod", Direction: "INGRESS", Priority: 1000, SourceRanges: []string{"0.0.0.0/0"},
			TargetTags: []string{"ssh"}, Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}, Description: "anywhere"}
	}
	return &cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{{
		ID: project, Number: "222222222222",
		IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{
			{Role: "roles/editor", Members: []string{editor, "serviceAccount:222222222222@cloudservices.gserviceaccount.com"}},
			{Role: "roles/viewer", Members: []string{"user:alice@acme.example", editor}},
		}},
		Networks: []*cloudsim.Network{{Name: "prod"}},
		Firewalls: []*cloudsim.Firewall{ssh("ssh-0"), ssh("ssh-1"),
			{Name: "office-https", Network: "prod", Direction: "INGRESS", Priority: 1000, SourceRanges: []string{"10.0.0.0/8"},
				Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"443"}}}, Description: "office"}},
	}}}}
}

// gcpCloud is gcpWorld. Its fixes are a disable of each SSH rule (a Compute PATCH,
// whose operation the simulator finishes at once) and the removal of the user from
// roles/editor (a read-modify-write of the project's policy: one setIamPolicy).
var gcpCloud = cloud{
	start: startGCP,
	net:   fix{"gcp.compute.disable_firewall", "compute", "PatchFirewall"},
	iam:   fix{"gcp.iam.remove_binding_member", "cloudresourcemanager", "SetIamPolicy"},

	netReads:   []cloudsim.Fault{{Service: "compute", Action: "List*"}, {Service: "compute", Action: "Get*"}},
	netScope:   "compute",
	iamReads:   []cloudsim.Fault{{Service: "cloudresourcemanager", Action: "Get*"}},
	iamScope:   "iam",
	verifyRead: cloudsim.Fault{Service: "compute", Action: "GetFirewall"},
	limits:     map[string]float64{"compute": 2, "cloudresourcemanager": 3, "iamadmin": 3},

	applyNet: func(w *cloudsim.World, a remediate.PlannedAction) {
		if f := firewall(w, a.Part); f != nil {
			f.Disabled = true
		}
	},
	open: func(w *cloudsim.World, a remediate.PlannedAction) bool {
		switch a.Remediator {
		case "gcp.compute.disable_firewall":
			f := firewall(w, a.Part)
			return f != nil && !f.Disabled
		case "gcp.iam.remove_binding_member":
			return slices.ContainsFunc(w.GCP.Projects[0].IAMPolicy.Bindings, func(b cloudsim.Binding) bool {
				return b.Role == a.Params["role"] && slices.Contains(b.Members, a.Params["member"].(string))
			})
		}
		panic("no check of " + a.Remediator)
	},
	untouched: func(t *testing.T, w *cloudsim.World) {
		t.Helper()
		// Each rule is as it began but for the flag the fix sets; the office rule applies.
		began := gcpWorld().GCP.Projects[0]
		p := w.GCP.Projects[0]
		for _, b := range began.Firewalls {
			f := firewall(w, b.Name)
			if f == nil {
				t.Errorf("firewall rule %s is gone", b.Name)
				continue
			}
			got := *f
			got.ID, got.Disabled = "", b.Disabled
			if !reflect.DeepEqual(&got, b) {
				t.Errorf("firewall rule %s is now\n%+v\nwant, but for disabled,\n%+v", b.Name, got, *b)
			}
			if f.Disabled && b.Name == "office-https" {
				t.Errorf("the office rule was disabled")
			}
		}
		// The policy lost the user's editor role, and nothing else.
		want := slices.Clone(began.IAMPolicy.Bindings)
		want[0].Members = want[0].Members[1:]
		if !reflect.DeepEqual(p.IAMPolicy.Bindings, want) {
			t.Errorf("the project's bindings are now\n%+v\nwant\n%+v", p.IAMPolicy.Bindings, want)
		}
	},
}

func TestFaults_cloudGCP(t *testing.T) {
	for _, c := range cloudCases(gcpCloud) {
		t.Run(c.name, func(t *testing.T) { runCloudCase(t, gcpCloud, c) })
	}
}

// startGCP starts gcpWorld, and warden on it through one set of Google clients shared
// by the collector and the fixes. The clients retry as the AWS cases' do: two attempts,
// a millisecond or two apart, so that a throttled or failed call is given up at once.
func startGCP(t *testing.T) *rig {
	sim, url := simtest.Start(t, gcpWorld(), cloudsim.Options{})
	clients, err := gcpapi.New(context.Background(), gcpapi.Options{Endpoint: url, RateLimit: 1000, MaxAttempts: 2,
		BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = clients.Close() })
	reg, err := builtin.New(builtin.Deps{GCP: clients})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t, storetest.Backends(t)["sqlite"](t))
	log := audit.New(st, audit.Options{})
	return &rig{sim: sim, store: st, log: log, gate: gates.New(st, log, approvers, time.Now),
		engine: remediatetest.Engine(t, reg, nil), registry: reg,
		reader:   gcpcollector.New(gcpcollector.Config{Projects: []string{project}, Clients: clients}),
		accounts: []string{project}, now: time.Now}
}

// firewall is the rule of that name in the project, nil if there is none.
func firewall(w *cloudsim.World, name string) *cloudsim.Firewall {
	for _, f := range w.GCP.Projects[0].Firewalls {
		if f.Name == name {
			return f
		}
	}
	return nil
}
