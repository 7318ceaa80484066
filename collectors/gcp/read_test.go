package gcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

const acmeWorld = "../../fixtures/acme/world.yaml"

// readable are the types Read supports.
var readable = []string{"gcp.project.iam_policy", "gcp.folder.iam_policy", "gcp.organization.iam_policy",
	"gcp.iam.service_account", "gcp.iam.service_account_key", "gcp.compute.firewall", "gcp.compute.ssl_certificate"}

// acme serves acme's world, with one folder between the organisation and acme-data-1193
// so that every policy kind is there, and returns a collector of its projects.
func acme(t *testing.T) (*gcp.Collector, *cloudsim.Sim) {
	t.Helper()
	w, err := cloudsim.LoadWorld(acmeWorld)
	if err != nil {
		t.Fatal(err)
	}
	org := "organizations/" + w.GCP.Organizations[0].ID
	w.GCP.Folders = append(w.GCP.Folders, &cloudsim.GCPFolder{ID: "200000000001", DisplayName: "data", Parent: org,
		IAMPolicy: cloudsim.IAMPolicy{Etag: "BwYDataData", Version: 3, Bindings: []cloudsim.Binding{
			{Role: "roles/viewer", Members: []string{"group:data@acme.example"},
				Condition: &cloudsim.Expr{Title: "until 2027", Expression: `request.time < timestamp("2027-01-01T00:00:00Z")`}}}}})
	for _, p := range w.GCP.Projects {
		if p.ID == "acme-data-1193" {
			p.Parent = "folders/200000000001"
		}
	}
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	var projects []string
	for _, p := range w.GCP.Projects {
		projects = append(projects, p.ID)
	}
	c := gcp.New(gcp.Config{Projects: projects, Endpoint: url, RateLimit: 1000, MaxAttempts: 2,
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	return c, sim
}

func jsonOf(t *testing.T, r snapshot.Resource) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRead_equalsCollect reads every resource of a supported type that Collect reported
// for acme, each alone: the answer is the resource Collect reported, to the attribute.
func TestRead_equalsCollect(t *testing.T) {
	c, sim := acme(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, want := range sink.Resources {
		if !slices.Contains(readable, want.Type) {
			continue
		}
		seen[want.Type]++
		sim.ResetCalls()
		got, err := c.Read(ctx, want.UID)
		if err != nil {
			t.Errorf("Read(%s): %v", want.UID, err)
			continue
		}
		if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
			t.Errorf("Read(%s) differs from Collect:\nread    %s\ncollect %s", want.UID, g, w)
		}
		for op := range sim.Calls() {
			if strings.Contains(op, ":List") || strings.Contains(op, "Search") {
				t.Errorf("Read(%s) made the listing %s", want.UID, op)
			}
		}
	}
	for _, typ := range readable {
		if seen[typ] == 0 {
			t.Errorf("acme's world has no %s to read", typ)
		}
	}
	t.Logf("read %v", seen)
}

// TestRead_goneIsNotFound deletes one resource of each kind Google answers NOT_FOUND for:
// Read says ErrNotFound. A project that is gone is PERMISSION_DENIED, as Google answers:
// an error, never ErrNotFound.
func TestRead_goneIsNotFound(t *testing.T) {
	const sa = "//iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/"
	tests := []struct {
		name     string
		uid      string // the first of this type in acme-prod-4821 when it ends in "/"
		typ      string
		delete   func(p *cloudsim.Project, name string)
		notFound bool
	}{
		{"service account", sa, "gcp.iam.service_account", func(p *cloudsim.Project, email string) {
			p.ServiceAccounts = slices.DeleteFunc(p.ServiceAccounts, func(a *cloudsim.ServiceAccount) bool { return a.Email == email })
		}, true},
		{"service account key", sa, "gcp.iam.service_account_key", func(p *cloudsim.Project, id string) {
			for _, a := range p.ServiceAccounts {
				a.Keys = slices.DeleteFunc(a.Keys, func(k *cloudsim.SAKey) bool { return k.ID == id })
			}
		}, true},
		{"firewall", "//compute.googleapis.com/projects/acme-prod-4821/global/firewalls/", "gcp.compute.firewall", func(p *cloudsim.Project, name string) {
			p.Firewalls = slices.DeleteFunc(p.Firewalls, func(f *cloudsim.Firewall) bool { return f.Name == name })
		}, true},
		{"ssl certificate", "//compute.googleapis.com/projects/acme-prod-4821/global/sslCertificates/", "gcp.compute.ssl_certificate", func(p *cloudsim.Project, name string) {
			p.SslCertificates = slices.DeleteFunc(p.SslCertificates, func(c *cloudsim.SslCertificate) bool { return c.Name == name })
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, sim := acme(t)
			ctx := context.Background()
			var sink collectors.MemorySink
			if err := c.Collect(ctx, &sink); err != nil {
				t.Fatal(err)
			}
			uid := ""
			for _, r := range sink.Resources {
				if r.Type == tc.typ && strings.HasPrefix(r.UID, tc.uid) {
					uid = r.UID
					break
				}
			}
			if uid == "" {
				t.Fatalf("no %s in acme-prod-4821", tc.typ)
			}
			if _, err := c.Read(ctx, uid); err != nil {
				t.Fatalf("Read(%s) before the deletion: %v", uid, err)
			}
			sim.Do(func(w *cloudsim.World) {
				for _, p := range w.GCP.Projects {
					if p.ID == "acme-prod-4821" {
						tc.delete(p, uid[strings.LastIndexByte(uid, '/')+1:])
					}
				}
			})
			if _, err := c.Read(ctx, uid); !errors.Is(err, collectors.ErrNotFound) {
				t.Errorf("Read(%s) after the deletion = %v, want ErrNotFound", uid, err)
			}
		})
	}
	t.Run("project", func(t *testing.T) {
		c, sim := acme(t)
		sim.Do(func(w *cloudsim.World) {
			w.GCP.Projects = slices.DeleteFunc(w.GCP.Projects, func(p *cloudsim.Project) bool { return p.ID == "acme-prod-4821" })
		})
		_, err := c.Read(context.Background(), "//cloudresourcemanager.googleapis.com/projects/acme-prod-4821")
		if err == nil || errors.Is(err, collectors.ErrNotFound) {
			t.Errorf("Read of a deleted project's policy = %v, want an error other than ErrNotFound", err)
		}
	})
}

// TestRead_deniedOrThrottledIsNotNotFound: a read Google refused or throttled to the end
// is an error, never ErrNotFound.
func TestRead_deniedOrThrottledIsNotNotFound(t *testing.T) {
	uids := []string{
		"//cloudresourcemanager.googleapis.com/projects/acme-prod-4821",
		"//cloudresourcemanager.googleapis.com/folders/200000000001",
		"//cloudresourcemanager.googleapis.com/organizations/631475985395",
		"//compute.googleapis.com/projects/acme-prod-4821/global/firewalls/nope",
		"//iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/nope@acme-prod-4821.iam.gserviceaccount.com",
		"//iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/nope@acme-prod-4821.iam.gserviceaccount.com/keys/k",
	}
	faults := map[string][]cloudsim.Fault{
		"denied":    {{AccessDenied: true}},
		"throttled": {{ThrottleRate: 1}},
		"down":      {{ErrorRate: 1}},
	}
	for name, fs := range faults {
		t.Run(name, func(t *testing.T) {
			c, sim := acme(t)
			if err := sim.SetFaults(fs, nil); err != nil {
				t.Fatal(err)
			}
			for _, uid := range uids {
				_, err := c.Read(context.Background(), uid)
				if err == nil || errors.Is(err, collectors.ErrNotFound) {
					t.Errorf("Read(%s) = %v, want an error other than ErrNotFound", uid, err)
				}
			}
		})
	}
}

func TestRead_refusesForeignUIDs(t *testing.T) {
	c, _ := acme(t)
	for _, uid := range []string{"arn:aws:iam::111111111111:user/alice", "//compute.googleapis.com/projects/p/global/networks/default",
		"//cloudresourcemanager.googleapis.com/projects/a/b", "tls://a:443"} {
		if _, err := c.Read(context.Background(), uid); !errors.Is(err, collectors.ErrUnsupported) {
			t.Errorf("Read(%s) = %v, want ErrUnsupported", uid, err)
		}
	}
}
