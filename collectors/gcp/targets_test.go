package gcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// targetsWorld is one project whose rules select instances each way Compute does.
func targetsWorld() *cloudsim.World {
	const sa = "web@acme-prod.iam.gserviceaccount.com"
	allow := []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"443"}}}
	p := &cloudsim.Project{ID: "acme-prod", Number: "111111111111",
		Networks: []*cloudsim.Network{{Name: "default", AutoCreateSubnetworks: true}, {Name: "prod"}, {Name: "empty"}},
		Firewalls: []*cloudsim.Firewall{
			{Name: "all-of-prod", Network: "prod", SourceRanges: []string{"10.0.0.0/8"}, Allowed: allow},
			{Name: "by-tag", Network: "prod", TargetTags: []string{"web", "api"}, SourceRanges: []string{"0.0.0.0/0"}, Allowed: allow},
			{Name: "by-account", Network: "prod", TargetServiceAccounts: []string{sa}, SourceRanges: []string{"0.0.0.0/0"}, Allowed: allow},
			{Name: "tag-of-nothing", Network: "prod", TargetTags: []string{"legacy-db"}, SourceRanges: []string{"10.0.0.0/8"}, Allowed: allow},
			// the tag is on an instance, but of another network
			{Name: "tag-elsewhere", Network: "default", TargetTags: []string{"api"}, SourceRanges: []string{"10.0.0.0/8"}, Allowed: allow},
			{Name: "empty-network", Network: "empty", SourceRanges: []string{"10.0.0.0/8"}, Allowed: allow},
		},
	}
	// Seven web instances (one stopped, one in a second zone under the same name), an api
	// instance running as the account, and one on two networks.
	for i := range 6 {
		p.Instances = append(p.Instances, &cloudsim.Instance{Name: fmt.Sprintf("web-%d", i), Zone: "europe-west1-b", Networks: []string{"prod"}, Tags: []string{"web"}})
	}
	p.Instances[5].Status = "TERMINATED"
	p.Instances = append(p.Instances,
		&cloudsim.Instance{Name: "web-0", Zone: "europe-west1-c", Networks: []string{"prod"}, Tags: []string{"web"}},
		&cloudsim.Instance{Name: "api", Zone: "europe-west1-c", Networks: []string{"prod"}, Tags: []string{"api"}, ServiceAccounts: []string{sa}},
		&cloudsim.Instance{Name: "bastion", Zone: "europe-west1-d", Networks: []string{"default", "prod"}})
	return &cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{p}}}
}

func TestCollect_firewallTargets(t *testing.T) {
	got := collect(t, targetsWorld(), nil, gcp.Config{PageSize: 2})
	fw := "//compute.googleapis.com/projects/acme-prod/global/firewalls/"
	for name, want := range map[string]string{
		// nine instances, eight on prod; web-0 named once
		"all-of-prod":    `{"instances":9,"known":true,"sample":["api","bastion","web-0","web-1","web-2"]}`,
		"by-tag":         `{"instances":8,"known":true,"sample":["api","web-0","web-1","web-2","web-3"]}`,
		"by-account":     `{"instances":1,"known":true,"sample":["api"]}`,
		"tag-of-nothing": `{"instances":0,"known":true,"sample":[]}`,
		"tag-elsewhere":  `{"instances":0,"known":true,"sample":[]}`,
		"empty-network":  `{"instances":0,"known":true,"sample":[]}`,
	} {
		r, ok := got.resources[fw+name]
		if !ok {
			t.Fatalf("%s not collected", name)
		}
		if g := jsonText(t, r.Attributes["targets"]); g != want {
			t.Errorf("%s: targets %s, want %s", name, g, want)
		}
	}
	if s := got.scopes["gcp/acme-prod/compute"]; s.Status != "ok" {
		t.Errorf("scope %+v, want ok", s)
	}
}

// Instances that cannot be read leave every rule's targets unknown, the scope partial and
// the rules otherwise as read whole: unknown is never "targets nothing".
func TestCollect_firewallTargetsUnknownWhenInstancesFail(t *testing.T) {
	full := collect(t, targetsWorld(), nil, gcp.Config{})
	for _, fault := range []cloudsim.Fault{
		{Service: "compute", Action: "AggregatedListInstances", Account: "acme-prod", ErrorRate: 1},
		{Service: "compute", Action: "AggregatedListInstances", Account: "acme-prod", AccessDenied: true},
	} {
		got := collect(t, targetsWorld(), []cloudsim.Fault{fault}, gcp.Config{})
		s := got.scopes["gcp/acme-prod/compute"]
		if s.Status != "partial" || !strings.HasPrefix(s.Error, "compute.AggregatedListInstances: ") {
			t.Errorf("fault %+v: scope %s %q, want partial on the instance list", fault, s.Status, s.Error)
		}
		if len(got.resources) != len(full.resources) {
			t.Errorf("fault %+v: %d resources, want %d", fault, len(got.resources), len(full.resources))
		}
		for uid, r := range got.resources {
			if r.Type != "gcp.compute.firewall" {
				continue
			}
			tg, _ := r.Attributes["targets"].(map[string]any)
			if tg["known"] != false || !strings.HasPrefix(fmt.Sprint(tg["error"]), "compute.AggregatedListInstances: ") || tg["instances"] != nil {
				t.Errorf("fault %+v: %s targets %v, want unknown with the reason", fault, uid, tg)
			}
			delete(r.Attributes, "targets")
			want := full.resources[uid]
			delete(want.Attributes, "targets")
			if !reflect.DeepEqual(normal(t, r), normal(t, want)) {
				t.Errorf("fault %+v: %s differs beyond its targets", fault, uid)
			}
		}
	}
}

// A rule read alone has its targets as Collect gave them, and none known when the
// instances cannot be read.
func TestRead_firewallTargets(t *testing.T) {
	sim, url := simtest.Start(t, targetsWorld(), cloudsim.Options{})
	c := gcp.New(gcp.Config{Endpoint: url, Projects: []string{"acme-prod"}, RateLimit: 1000, MaxAttempts: 1})
	t.Cleanup(func() { _ = c.Close() })
	uid := "//compute.googleapis.com/projects/acme-prod/global/firewalls/by-account"
	r, err := c.Read(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	if g := jsonText(t, r.Attributes["targets"]); g != `{"instances":1,"known":true,"sample":["api"]}` {
		t.Errorf("targets %s", g)
	}
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "compute", Action: "AggregatedListInstances", AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	r, err = c.Read(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	if tg, _ := r.Attributes["targets"].(map[string]any); tg["known"] != false {
		t.Errorf("targets %v with the instances unreadable, want unknown", tg)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A Shared VPC host's rules also apply to its service projects' instances, which are not
// read: its rules' targets are unknown (never "none"), and the scope is whole all the
// same, since nothing failed.
func TestCollect_sharedVPCHostTargetsUnknown(t *testing.T) {
	w := targetsWorld()
	w.GCP.Projects[0].SharedVPCHost = true
	got := collect(t, w, nil, gcp.Config{})
	if s := got.scopes["gcp/acme-prod/compute"]; s.Status != "ok" {
		t.Errorf("scope %+v, want ok", s)
	}
	r := got.resources["//compute.googleapis.com/projects/acme-prod/global/firewalls/tag-of-nothing"]
	if tg, _ := r.Attributes["targets"].(map[string]any); tg["known"] != false || !strings.Contains(fmt.Sprint(tg["error"]), "Shared VPC host") {
		t.Errorf("targets %v, want unknown for a Shared VPC host", tg)
	}
	if n := got.sim.Calls()["compute:AggregatedListInstances"].Calls; n != 0 {
		t.Errorf("listed a host's instances %d times, for nothing", n)
	}

	// Compute's project unreadable: unknown too, and the scope partial.
	got = collect(t, targetsWorld(), []cloudsim.Fault{{Service: "compute", Action: "GetProject", AccessDenied: true}}, gcp.Config{})
	if s := got.scopes["gcp/acme-prod/compute"]; s.Status != "partial" || !strings.HasPrefix(s.Error, "compute.GetProject: ") {
		t.Errorf("scope %s %q, want partial on compute.GetProject", s.Status, s.Error)
	}
	r = got.resources["//compute.googleapis.com/projects/acme-prod/global/firewalls/tag-of-nothing"]
	if tg, _ := r.Attributes["targets"].(map[string]any); tg["known"] != false {
		t.Errorf("targets %v with the project unreadable, want unknown", tg)
	}
}
