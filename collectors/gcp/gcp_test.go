package gcp_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/certinfo"
	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

var (
	t0      = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	forever = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// world has two projects that between them hold every GCP type and attribute: acme-prod
// under an organisation the caller can read, acme-dev under one it cannot (so that the
// policy of acme-dev's organisation is a failed scope). Folders: ancestors_test.go.
func world() *cloudsim.World {
	return &cloudsim.World{GCP: cloudsim.GCP{
		Organizations: []*cloudsim.GCPOrganization{{ID: "123456789012", Domain: "acme.example"}},
		Projects: []*cloudsim.Project{{
			ID: "acme-prod", Number: "111111111111", Parent: "organizations/123456789012",
			IAMPolicy: cloudsim.IAMPolicy{Etag: "BwXhqQ7eQwU=", Version: 3, Bindings: []cloudsim.Binding{
				{Role: "roles/owner", Members: []string{"user:alice@acme.example", "group:admins@acme.example"}},
				{Role: "roles/editor", Members: []string{"serviceAccount:111111111111-compute@developer.gserviceaccount.com"}},
				{Role: "roles/viewer", Members: []string{"domain:acme.example"},
					Condition: &cloudsim.Expr{Title: "business hours", Expression: "request.time.getHours() < 18"}},
			}, AuditConfigs: []cloudsim.AuditConfig{{Service: "allServices", LogConfigs: []cloudsim.AuditLogConfig{
				{LogType: "ADMIN_READ"}, {LogType: "DATA_READ", ExemptedMembers: []string{"user:bot@acme.example"}}}}}},
			WorkloadIdentityPools: []*cloudsim.WorkloadIdentityPool{{ID: "ci", Providers: []*cloudsim.WorkloadIdentityProvider{
				{ID: "github", AttributeCondition: "assertion.repository_owner == 'acme'",
					AttributeMapping: map[string]string{"google.subject": "assertion.sub"},
					OIDC:             &cloudsim.OIDCProvider{IssuerURI: "https://token.actions.githubusercontent.com"}},
				{ID: "aws", Disabled: true, AWS: &cloudsim.AWSProvider{AccountID: "123456789012"}},
			}}, {ID: "old", Disabled: true, State: "DELETED"}},
			ServiceAccounts: []*cloudsim.ServiceAccount{
				{Email: "111111111111-compute@developer.gserviceaccount.com", UniqueID: "100000000000000000001",
					DisplayName: "Compute Engine default service account",
					Keys:        []*cloudsim.SAKey{{ID: "a1", Type: "SYSTEM_MANAGED", ValidAfter: t0, ValidBefore: t0.AddDate(0, 0, 14)}}},
				{Email: "deployer@acme-prod.iam.gserviceaccount.com", UniqueID: "100000000000000000002", DisplayName: "Deployer",
					Keys: []*cloudsim.SAKey{
						{ID: "b1", ValidAfter: t0, ValidBefore: forever},
						{ID: "b2", ValidAfter: t0.AddDate(0, 1, 0), ValidBefore: forever, Disabled: true, Algorithm: "KEY_ALG_RSA_1024"},
					}},
				{Email: "old@acme-prod.iam.gserviceaccount.com", UniqueID: "100000000000000000003", Disabled: true},
			},
			Networks: []*cloudsim.Network{{Name: "default", AutoCreateSubnetworks: true}, {Name: "prod"}, {Name: "empty"}, {Name: "legacy", Legacy: true}},
			Firewalls: []*cloudsim.Firewall{
				{Name: "allow-ssh", Network: "default", SourceRanges: []string{"0.0.0.0/0"}, Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}},
				{Name: "allow-web", Network: "prod", Priority: 900, SourceTags: []string{"lb"}, TargetTags: []string{"web"},
					Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"80", "8000-8080"}}, {Protocol: "icmp"}}},
				{Name: "deny-gre", Network: "prod", Direction: "EGRESS", Disabled: true, Priority: 65534,
					DestinationRanges: []string{"0.0.0.0/0"}, Denied: []cloudsim.FirewallRule{{Protocol: "47"}},
					TargetServiceAccounts: []string{"deployer@acme-prod.iam.gserviceaccount.com"}},
			},
			// What the rules apply to: allow-web's tag is on web-1, deny-gre's account runs
			// batch (stopped, still a target), ops is the one instance of default.
			Instances: []*cloudsim.Instance{
				{Name: "web-1", Zone: "europe-west1-b", Networks: []string{"prod"}, Tags: []string{"web"}},
				{Name: "batch", Zone: "europe-west1-c", Networks: []string{"prod"}, Status: "TERMINATED",
					ServiceAccounts: []string{"deployer@acme-prod.iam.gserviceaccount.com"}},
				{Name: "ops", Zone: "europe-west1-b", ServiceAccounts: []string{"deployer@acme-prod.iam.gserviceaccount.com"}},
			},
			SslCertificates: []*cloudsim.SslCertificate{
				{Name: "shop", Cert: cloudsim.CertSpec{Subject: "CN=shop.acme.example", Issuer: "CN=R11,O=Let's Encrypt,C=US",
					KeyAlgorithm: "EC", KeySize: 256, DNSNames: []string{"shop.acme.example"}, NotBefore: t0, NotAfter: t0.AddDate(0, 3, 0)}},
				{Name: "www", Type: "MANAGED", ManagedStatus: "ACTIVE", Domains: []string{"www.acme.example"},
					Cert: cloudsim.CertSpec{Subject: "CN=www.acme.example", Issuer: "CN=WR3,O=Google Trust Services,C=US",
						KeyAlgorithm: "EC", KeySize: 256, DNSNames: []string{"www.acme.example"}, NotBefore: t0, NotAfter: t0.AddDate(0, 3, 0)}},
				{Name: "new", Type: "MANAGED", ManagedStatus: "PROVISIONING", Domains: []string{"new.acme.example"}},
			},
		}, {
			ID: "acme-dev", Number: "222222222222", Parent: "organizations/999999999999",
			IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{{Role: "roles/owner", Members: []string{"user:bob@acme.example"}}}},
			Networks:  []*cloudsim.Network{{Name: "default", AutoCreateSubnetworks: true}},
			Firewalls: []*cloudsim.Firewall{{Name: "allow-all", Network: "default", SourceRanges: []string{"0.0.0.0/0"},
				Allowed: []cloudsim.FirewallRule{{Protocol: "all"}}}},
		}},
	}}
}

type run struct {
	resources map[string]snapshot.Resource
	scopes    map[string]snapshot.Scope
	sim       *cloudsim.Sim
}

// collect runs the collector with the real clients against a simulator over w.
func collect(t *testing.T, w *cloudsim.World, faults []cloudsim.Fault, cfg gcp.Config) run {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	if err := sim.SetFaults(faults, nil); err != nil {
		t.Fatal(err)
	}
	cfg.Endpoint = url
	if cfg.RateLimit == 0 {
		cfg.RateLimit = 1000
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 4
	}
	cfg.BaseBackoff, cfg.MaxBackoff = time.Millisecond, 5*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sink collectors.MemorySink
	if err := gcp.New(cfg).Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	out := run{resources: map[string]snapshot.Resource{}, scopes: map[string]snapshot.Scope{}, sim: sim}
	for _, r := range sink.Resources {
		// What the collector writes is what the snapshot reader accepts.
		if err := snapshot.Validate(r); err != nil {
			t.Errorf("collected resource is not valid: %v", err)
		}
		if _, dup := out.resources[r.UID]; dup {
			t.Errorf("resource %s reported twice", r.UID)
		}
		out.resources[r.UID] = r
	}
	for _, s := range sink.Scopes {
		if _, dup := out.scopes[s.ID]; dup {
			t.Errorf("scope %s reported twice", s.ID)
		}
		out.scopes[s.ID] = s
	}
	return out
}

// certOf describes the certificate the simulator minted for an SSL certificate.
func certOf(t *testing.T, sim *cloudsim.Sim, project, name string) map[string]any {
	t.Helper()
	var pemText string
	sim.Do(func(w *cloudsim.World) {
		for _, p := range w.GCP.Projects {
			for _, c := range p.SslCertificates {
				if p.ID == project && c.Name == name {
					pemText = c.Cert.PEM
				}
			}
		}
	})
	b, _ := pem.Decode([]byte(pemText))
	if b == nil {
		t.Fatalf("no certificate %s/%s in the world", project, name)
	}
	x, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return certinfo.Describe(x)
}

// normal is v as decoded JSON, so that expected and collected attributes compare alike.
func normal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCollect(t *testing.T) {
	// PageSize 1 makes every listing take several pages.
	got := collect(t, world(), nil, gcp.Config{PageSize: 1})
	const (
		iamP, iamD   = "gcp/acme-prod/iam", "gcp/acme-dev/iam"
		compP, compD = "gcp/acme-prod/compute", "gcp/acme-dev/compute"
		sa           = "//iam.googleapis.com/projects/acme-prod/serviceAccounts/"
		fw           = "//compute.googleapis.com/projects/acme-prod/global/firewalls/"
		net          = "//compute.googleapis.com/projects/acme-prod/global/networks/"
		ssl          = "//compute.googleapis.com/projects/acme-prod/global/sslCertificates/"
		orgA, orgB   = "gcp/organizations/123456789012/iam", "gcp/organizations/999999999999/iam"
	)
	any2 := func(s ...string) []any {
		out := []any{}
		for _, v := range s {
			out = append(out, v)
		}
		return out
	}
	rule := func(proto string, ports ...string) map[string]any {
		return map[string]any{"protocol": proto, "ports": any2(ports...)}
	}
	targets := func(n int, sample ...string) map[string]any {
		return map[string]any{"known": true, "instances": n, "sample": any2(sample...)}
	}
	tests := []struct {
		uid, typ, name, scope string
		attrs                 map[string]any
	}{
		{"//cloudresourcemanager.googleapis.com/projects/acme-prod", "gcp.project.iam_policy", "acme-prod", iamP, map[string]any{
			"project_id": "acme-prod", "project_number": "111111111111", "organization_domain": "acme.example", "etag": "BwXhqQ7eQwU=",
			"bindings": []any{
				map[string]any{"role": "roles/owner", "members": any2("user:alice@acme.example", "group:admins@acme.example"), "condition": nil},
				map[string]any{"role": "roles/editor", "members": any2("serviceAccount:111111111111-compute@developer.gserviceaccount.com"), "condition": nil},
				map[string]any{"role": "roles/viewer", "members": any2("domain:acme.example"),
					"condition": map[string]any{"title": "business hours", "expression": "request.time.getHours() < 18"}},
			},
			"audit_configs": []any{map[string]any{"service": "allServices", "audit_log_configs": []any{
				map[string]any{"log_type": "ADMIN_READ"},
				map[string]any{"log_type": "DATA_READ", "exempted_members": any2("user:bot@acme.example")}}}},
		}},
		{"//iam.googleapis.com/projects/111111111111/locations/global/workloadIdentityPools/ci/providers/github", "gcp.iam.workload_identity_provider", "github", iamP, map[string]any{
			"pool": "ci", "pool_disabled": false, "disabled": false, "state": "ACTIVE",
			"attribute_condition": "assertion.repository_owner == 'acme'", "protocol": "oidc",
			"issuer_uri": "https://token.actions.githubusercontent.com", "allowed_audiences": any2(),
			"attribute_mapping": map[string]any{"google.subject": "assertion.sub"}}},
		{"//iam.googleapis.com/projects/111111111111/locations/global/workloadIdentityPools/ci/providers/aws", "gcp.iam.workload_identity_provider", "aws", iamP, map[string]any{
			"pool": "ci", "pool_disabled": false, "disabled": true, "state": "ACTIVE",
			"attribute_condition": "", "protocol": "aws", "aws_account_id": "123456789012"}},
		{"//cloudresourcemanager.googleapis.com/organizations/123456789012", "gcp.organization.iam_policy", "acme.example", orgA, map[string]any{"audit_configs": []any{},
			"organization_id": "123456789012", "domain": "acme.example", "etag": "*", "bindings": []any{}}},
		{"//cloudresourcemanager.googleapis.com/projects/acme-dev", "gcp.project.iam_policy", "acme-dev", iamD, map[string]any{"audit_configs": []any{},
			"project_id": "acme-dev", "project_number": "222222222222", "organization_domain": "", "etag": "*",
			"bindings": []any{map[string]any{"role": "roles/owner", "members": any2("user:bob@acme.example"), "condition": nil}}}},
		{sa + "111111111111-compute@developer.gserviceaccount.com", "gcp.iam.service_account", "111111111111-compute@developer.gserviceaccount.com", iamP, map[string]any{
			"email": "111111111111-compute@developer.gserviceaccount.com", "unique_id": "100000000000000000001",
			"display_name": "Compute Engine default service account", "disabled": false, "default_compute": true}},
		{sa + "deployer@acme-prod.iam.gserviceaccount.com", "gcp.iam.service_account", "deployer@acme-prod.iam.gserviceaccount.com", iamP, map[string]any{
			"email": "deployer@acme-prod.iam.gserviceaccount.com", "unique_id": "100000000000000000002",
			"display_name": "Deployer", "disabled": false, "default_compute": false}},
		{sa + "old@acme-prod.iam.gserviceaccount.com", "gcp.iam.service_account", "old@acme-prod.iam.gserviceaccount.com", iamP, map[string]any{
			"email": "old@acme-prod.iam.gserviceaccount.com", "unique_id": "100000000000000000003",
			"display_name": "", "disabled": true, "default_compute": false}},
		{sa + "111111111111-compute@developer.gserviceaccount.com/keys/a1", "gcp.iam.service_account_key", "a1", iamP, map[string]any{
			"key_id": "a1", "service_account": "111111111111-compute@developer.gserviceaccount.com", "key_type": "SYSTEM_MANAGED",
			"valid_after": "2025-03-01T09:00:00Z", "valid_before": "2025-03-15T09:00:00Z", "disabled": false, "key_algorithm": "KEY_ALG_RSA_2048"}},
		{sa + "deployer@acme-prod.iam.gserviceaccount.com/keys/b1", "gcp.iam.service_account_key", "b1", iamP, map[string]any{
			"key_id": "b1", "service_account": "deployer@acme-prod.iam.gserviceaccount.com", "key_type": "USER_MANAGED",
			"valid_after": "2025-03-01T09:00:00Z", "valid_before": "9999-12-31T23:59:59Z", "disabled": false, "key_algorithm": "KEY_ALG_RSA_2048"}},
		{sa + "deployer@acme-prod.iam.gserviceaccount.com/keys/b2", "gcp.iam.service_account_key", "b2", iamP, map[string]any{
			"key_id": "b2", "service_account": "deployer@acme-prod.iam.gserviceaccount.com", "key_type": "USER_MANAGED",
			"valid_after": "2025-04-01T09:00:00Z", "valid_before": "9999-12-31T23:59:59Z", "disabled": true, "key_algorithm": "KEY_ALG_RSA_1024"}},
		{fw + "allow-ssh", "gcp.compute.firewall", "allow-ssh", compP, map[string]any{
			"network": "default", "direction": "INGRESS", "disabled": false, "priority": 1000, "source_ranges": any2("0.0.0.0/0"),
			"source_tags": any2(), "target_tags": any2(), "target_service_accounts": any2(), "allowed": []any{rule("tcp", "22")}, "denied": []any{},
			"targets": targets(1, "ops")}},
		{fw + "allow-web", "gcp.compute.firewall", "allow-web", compP, map[string]any{
			"network": "prod", "direction": "INGRESS", "disabled": false, "priority": 900, "source_ranges": any2(),
			"source_tags": any2("lb"), "target_tags": any2("web"), "target_service_accounts": any2(), "allowed": []any{rule("tcp", "80", "8000-8080"), rule("icmp")}, "denied": []any{},
			"targets": targets(1, "web-1")}},
		{fw + "deny-gre", "gcp.compute.firewall", "deny-gre", compP, map[string]any{
			"network": "prod", "direction": "EGRESS", "disabled": true, "priority": 65534, "source_ranges": any2(),
			"source_tags": any2(), "target_tags": any2(), "target_service_accounts": any2("deployer@acme-prod.iam.gserviceaccount.com"), "allowed": []any{}, "denied": []any{rule("47")},
			"targets": targets(1, "batch")}},
		{"//compute.googleapis.com/projects/acme-dev/global/firewalls/allow-all", "gcp.compute.firewall", "allow-all", compD, map[string]any{
			"network": "default", "direction": "INGRESS", "disabled": false, "priority": 1000, "source_ranges": any2("0.0.0.0/0"),
			"source_tags": any2(), "target_tags": any2(), "target_service_accounts": any2(), "allowed": []any{rule("all")}, "denied": []any{},
			"targets": targets(0)}},
		{net + "default", "gcp.compute.network", "default", compP, map[string]any{"auto_create_subnetworks": true, "mode": "auto", "firewalls": any2("allow-ssh")}},
		{net + "prod", "gcp.compute.network", "prod", compP, map[string]any{"auto_create_subnetworks": false, "mode": "custom", "firewalls": any2("allow-web", "deny-gre")}},
		{net + "empty", "gcp.compute.network", "empty", compP, map[string]any{"auto_create_subnetworks": false, "mode": "custom", "firewalls": any2()}},
		{net + "legacy", "gcp.compute.network", "legacy", compP, map[string]any{"mode": "legacy", "firewalls": any2()}},
		{"//compute.googleapis.com/projects/acme-dev/global/networks/default", "gcp.compute.network", "default", compD,
			map[string]any{"auto_create_subnetworks": true, "mode": "auto", "firewalls": any2("allow-all")}},
		{ssl + "shop", "gcp.compute.ssl_certificate", "shop", compP, map[string]any{
			"cert_type": "SELF_MANAGED", "managed_status": "", "certificate": certOf(t, got.sim, "acme-prod", "shop")}},
		{ssl + "www", "gcp.compute.ssl_certificate", "www", compP, map[string]any{
			"cert_type": "MANAGED", "managed_status": "ACTIVE", "certificate": certOf(t, got.sim, "acme-prod", "www")}},
		{ssl + "new", "gcp.compute.ssl_certificate", "new", compP, map[string]any{
			"cert_type": "MANAGED", "managed_status": "PROVISIONING", "certificate": nil}},
	}
	for _, tc := range tests {
		t.Run(tc.uid, func(t *testing.T) {
			r, ok := got.resources[tc.uid]
			if !ok {
				t.Fatalf("not collected")
			}
			account := tc.scope[len("gcp/"):strings.LastIndexByte(tc.scope, '/')]
			if r.Type != tc.typ || r.Name != tc.name || r.Scope != tc.scope || r.Account != account || r.Region != "global" {
				t.Errorf("got %s %q scope %s account %s region %s, want %s %q scope %s account %s region global",
					r.Type, r.Name, r.Scope, r.Account, r.Region, tc.typ, tc.name, tc.scope, account)
			}
			want := tc.attrs
			if want["etag"] == "*" { // made up by the simulator
				want["etag"] = r.Attributes["etag"]
			}
			if g, w := normal(t, r.Attributes), normal(t, want); !reflect.DeepEqual(g, w) {
				gb, _ := json.Marshal(g)
				wb, _ := json.Marshal(w)
				t.Errorf("attributes\n got  %s\n want %s", gb, wb)
			}
		})
	}
	if len(got.resources) != len(tests) {
		t.Errorf("collected %d resources, want %d", len(got.resources), len(tests))
	}
	wantScopes := map[string]snapshot.Scope{
		iamP:  {ID: iamP, Provider: "gcp", Account: "acme-prod", Service: "iam", Status: "ok", Resources: 9, Calls: 14},
		compP: {ID: compP, Provider: "gcp", Account: "acme-prod", Service: "compute", Status: "ok", Resources: 10, Calls: 14}, // the project, 3 pages of instances
		// acme-dev's organisation cannot be read: its domain is empty, and that is no failure.
		iamD:  {ID: iamD, Provider: "gcp", Account: "acme-dev", Service: "iam", Status: "ok", AccessDenied: 1, Resources: 1, Calls: 5},
		compD: {ID: compD, Provider: "gcp", Account: "acme-dev", Service: "compute", Status: "ok", Resources: 2, Calls: 5},
		// acme-prod's organisation: its domain was read (and cached) by acme-prod's scope.
		orgA: {ID: orgA, Provider: "gcp", Account: "organizations/123456789012", Service: "iam", Status: "ok", Resources: 1, Calls: 1},
		// acme-dev's organisation: its policy is unknown, not empty.
		orgB: {ID: orgB, Provider: "gcp", Account: "organizations/999999999999", Service: "iam", Status: "failed", AccessDenied: 1, Calls: 1,
			Error: "cloudresourcemanager.GetIamPolicy: PermissionDenied: Permission 'resourcemanager.organizations.getIamPolicy' denied on resource '//cloudresourcemanager.googleapis.com/organizations/999999999999' (or it may not exist)."},
	}
	if !reflect.DeepEqual(got.scopes, wantScopes) {
		t.Errorf("scopes\n got  %+v\n want %+v", got.scopes, wantScopes)
	}
}

func TestCollectFailures(t *testing.T) {
	full := collect(t, world(), nil, gcp.Config{})
	tests := []struct {
		name   string
		faults []cloudsim.Fault
		cfg    gcp.Config
		// status of each scope that is not ok, and the start of its error
		want map[string][2]string
		// scopes whose resources are all expected despite faults; the rest expect none
		// (failed) or, for partial scopes, what `missing` leaves out
		missing func(uid string) bool
		check   func(t *testing.T, scopes map[string]snapshot.Scope)
	}{
		{
			name:   "IAM admin denied on one project",
			faults: []cloudsim.Fault{{Service: "iamadmin", Account: "acme-prod", AccessDenied: true}},
			want:   map[string][2]string{"gcp/acme-prod/iam": {"failed", "iam.ListServiceAccounts: PermissionDenied: "}},
			check: func(t *testing.T, s map[string]snapshot.Scope) {
				if s["gcp/acme-prod/iam"].AccessDenied != 1 {
					t.Errorf("access denied counted %d, want 1", s["gcp/acme-prod/iam"].AccessDenied)
				}
			},
		},
		{
			name:   "keys of one account denied",
			faults: []cloudsim.Fault{{Service: "iamadmin", Action: "ListServiceAccountKeys", Account: "acme-prod", AccessDenied: true}},
			want:   map[string][2]string{"gcp/acme-prod/iam": {"partial", "iam.ListServiceAccountKeys: PermissionDenied: "}},
			missing: func(uid string) bool {
				return strings.Contains(uid, "acme-prod/serviceAccounts/") && strings.Contains(uid, "/keys/")
			},
		},
		{
			name:   "organisations unreadable",
			faults: []cloudsim.Fault{{Service: "cloudresourcemanager", Action: "GetOrganization", ErrorRate: 1}},
			want: map[string][2]string{
				"gcp/acme-prod/iam": {"partial", "cloudresourcemanager.GetOrganization: Unavailable: "},
				"gcp/acme-dev/iam":  {"partial", "cloudresourcemanager.GetOrganization: Unavailable: "},
				// the organisation's policy was read, but without its domain it is left out
				"gcp/organizations/123456789012/iam": {"partial", "cloudresourcemanager.GetOrganization: Unavailable: "},
			},
			missing: func(uid string) bool { return strings.HasPrefix(uid, "//cloudresourcemanager.googleapis.com/") },
		},
		{
			name:   "throttling storm on compute",
			faults: []cloudsim.Fault{{Service: "compute", ThrottleRate: 0.5}},
			cfg:    gcp.Config{MaxAttempts: 40, PageSize: 1},
			check: func(t *testing.T, s map[string]snapshot.Scope) {
				if s["gcp/acme-prod/compute"].Throttled+s["gcp/acme-dev/compute"].Throttled == 0 {
					t.Errorf("no throttled calls counted: %+v", s)
				}
			},
		},
		{
			name:   "throttling storm on IAM admin (gRPC)",
			faults: []cloudsim.Fault{{Service: "iamadmin", ThrottleRate: 0.5}},
			cfg:    gcp.Config{MaxAttempts: 40, PageSize: 1},
			check: func(t *testing.T, s map[string]snapshot.Scope) {
				if s["gcp/acme-prod/iam"].Throttled+s["gcp/acme-dev/iam"].Throttled == 0 {
					t.Errorf("no throttled calls counted: %+v", s)
				}
			},
		},
		{
			name:   "compute down in one project",
			faults: []cloudsim.Fault{{Service: "compute", Account: "acme-dev", ErrorRate: 1}},
			want:   map[string][2]string{"gcp/acme-dev/compute": {"failed", "compute.ListFirewalls: Unavailable: "}},
		},
		{
			name:   "SSL certificates unreadable",
			faults: []cloudsim.Fault{{Service: "compute", Action: "ListSslCertificates", Account: "acme-prod", ErrorRate: 1}},
			want:   map[string][2]string{"gcp/acme-prod/compute": {"partial", "compute.ListSslCertificates: Unavailable: "}},
			missing: func(uid string) bool {
				return strings.Contains(uid, "acme-prod/global/sslCertificates/")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// acme-dev's organisation is never readable.
			if tc.want == nil {
				tc.want = map[string][2]string{}
			}
			tc.want["gcp/organizations/999999999999/iam"] = [2]string{"failed", "cloudresourcemanager.GetIamPolicy: PermissionDenied: "}
			got := collect(t, world(), tc.faults, tc.cfg)
			if len(got.scopes) != 6 {
				t.Errorf("scopes: %v", got.scopes)
			}
			for id, s := range got.scopes {
				want := [2]string{"ok", ""}
				if w, ok := tc.want[id]; ok {
					want = w
				}
				if s.Status != want[0] || !strings.HasPrefix(s.Error, want[1]) || (want[1] == "") != (s.Error == "") {
					t.Errorf("scope %s: %s %q, want %s %q…", id, s.Status, s.Error, want[0], want[1])
				}
			}
			for uid, r := range full.resources {
				status := tc.want[r.Scope][0]
				expected := status == "" || status == "partial" && (tc.missing == nil || !tc.missing(uid))
				g, ok := got.resources[uid]
				switch {
				case expected && !ok:
					t.Errorf("%s missing", uid)
				case !expected && ok:
					t.Errorf("%s reported from a %s scope", uid, status)
				case ok && !reflect.DeepEqual(normal(t, g), normal(t, r)):
					t.Errorf("%s differs from the fault-free collection:\n got  %v\n want %v", uid, g, r)
				}
			}
			for _, r := range got.resources {
				if got.scopes[r.Scope].Status == "failed" {
					t.Errorf("%s reported from failed scope %s", r.UID, r.Scope)
				}
				if n := got.scopes[r.Scope].Resources; n == 0 {
					t.Errorf("scope %s counts no resources but reported %s", r.Scope, r.UID)
				}
			}
			if tc.check != nil {
				tc.check(t, got.scopes)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	_, url := simtest.Start(t, world(), cloudsim.Options{})
	ctx := context.Background()
	ids, err := gcp.New(gcp.Config{Endpoint: url, PageSize: 1}).Discover(ctx)
	if err != nil || !slices.Equal(ids, []string{"acme-prod", "acme-dev"}) {
		t.Errorf("discover: %v %v", ids, err)
	}
	ids, err = gcp.New(gcp.Config{Endpoint: url, Projects: []string{"acme-dev"}}).Discover(ctx)
	if err != nil || !slices.Equal(ids, []string{"acme-dev"}) {
		t.Errorf("configured projects: %v %v", ids, err)
	}

	// An unknown project is a failed scope pair, not an error of the collection.
	var sink collectors.MemorySink
	if err := gcp.New(gcp.Config{Endpoint: url, Projects: []string{"ghost"}}).Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Resources) != 0 || len(sink.Scopes) != 2 || sink.Scopes[0].Status != "failed" || sink.Scopes[1].Status != "failed" {
		t.Errorf("unknown project: %+v %+v", sink.Resources, sink.Scopes)
	}

	// A cancelled collection says so, and reports no scope as read.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	sink = collectors.MemorySink{}
	err = gcp.New(gcp.Config{Endpoint: url, Projects: []string{"acme-prod"}}).Collect(cctx, &sink)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	for _, s := range sink.Scopes {
		if s.Status != "failed" {
			t.Errorf("cancelled collection reported %s as %s", s.ID, s.Status)
		}
	}
}

// TestCollectProjectsOnce: a project named twice is read once (collect fails on a scope or
// resource reported twice).
func TestCollectProjectsOnce(t *testing.T) {
	tests := []struct {
		name     string
		projects []string
		scopes   int
	}{
		{"repeated", []string{"acme-prod", "acme-dev", "acme-prod"}, 6},
		{"an empty one", []string{"", "acme-prod"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := collect(t, world(), nil, gcp.Config{Projects: tc.projects})
			if len(got.scopes) != tc.scopes {
				t.Errorf("%d scopes, want %d: %v", len(got.scopes), tc.scopes, slices.Sorted(maps.Keys(got.scopes)))
			}
		})
	}
}

// TestCollectSSLCertificateBodies: a certificate that is there but does not parse is
// unknown (a partial scope), not reported as absent from a scope that claims to be whole.
func TestCollectSSLCertificateBodies(t *testing.T) {
	tests := []struct {
		name   string
		cert   *cloudsim.SslCertificate
		status string
	}{
		{"does not parse", &cloudsim.SslCertificate{Name: "broken",
			Cert: cloudsim.CertSpec{PEM: "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"}}, "partial"},
		{"not issued yet", &cloudsim.SslCertificate{Name: "broken", Type: "MANAGED", ManagedStatus: "PROVISIONING",
			Domains: []string{"later.acme.example"}}, "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			w.GCP.Projects[0].SslCertificates = append(w.GCP.Projects[0].SslCertificates, tc.cert)
			got := collect(t, w, nil, gcp.Config{Projects: []string{"acme-prod"}})
			s := got.scopes["gcp/acme-prod/compute"]
			if s.Status != tc.status || tc.status == "partial" && !strings.Contains(s.Error, "broken") {
				t.Errorf("compute scope %s %q, want %s", s.Status, s.Error, tc.status)
			}
			r, ok := got.resources["//compute.googleapis.com/projects/acme-prod/global/sslCertificates/broken"]
			if !ok || r.Attributes["certificate"] != nil {
				t.Errorf("certificate resource %v: %+v, want it with a null certificate", ok, r)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	w := world()
	prod := w.GCP.Projects[0]
	for i := range 30 {
		prod.Firewalls = append(prod.Firewalls, &cloudsim.Firewall{Name: fmt.Sprintf("rule-%02d", i), Network: "prod",
			Allowed: []cloudsim.FirewallRule{{Protocol: "tcp"}}})
	}
	// acme-prod's compute scope makes 33+3+3 calls with PageSize 1: at 100 calls/s after a
	// burst of 10, that takes about 0.3 s, and acme-dev's scopes do not wait for it.
	start := time.Now()
	got := collect(t, w, nil, gcp.Config{Projects: []string{"acme-prod"}, RateLimit: 100, PageSize: 1})
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("39 calls at 100/s took %v", d)
	}
	if n := got.scopes["gcp/acme-prod/compute"].Resources; n != 40 {
		t.Errorf("compute resources: %d, want 40", n)
	}
	if n := got.sim.CallsTo("compute"); n < 39 {
		t.Errorf("compute calls: %d", n)
	}
}
