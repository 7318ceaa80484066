package cloudsim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"
	admin "cloud.google.com/go/iam/admin/apiv1"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func gcpTestWorld() *World {
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	return &World{GCP: GCP{
		Organizations: []*GCPOrganization{{ID: "123456789012", Domain: "acme.example"}},
		Projects: []*Project{{
			ID: "acme-prod", Number: "111111111111", Parent: "organizations/123456789012",
			IAMPolicy: IAMPolicy{Bindings: []Binding{
				{Role: "roles/owner", Members: []string{"user:alice@acme.example"}},
				{Role: "roles/editor", Members: []string{"serviceAccount:111111111111-compute@developer.gserviceaccount.com"}},
			}},
			ServiceAccounts: []*ServiceAccount{
				{Email: "111111111111-compute@developer.gserviceaccount.com", DisplayName: "Compute Engine default service account",
					Keys: []*SAKey{{ID: "sys1", Type: "SYSTEM_MANAGED", ValidAfter: t0, ValidBefore: t0.AddDate(0, 0, 30)}}},
				{Email: "deployer@acme-prod.iam.gserviceaccount.com", Keys: []*SAKey{
					{ID: "k1", ValidAfter: t0, ValidBefore: userKeyExpiry},
					{ID: "k2", ValidAfter: t0, ValidBefore: userKeyExpiry, Disabled: true},
				}},
				{Email: "ci@acme-prod.iam.gserviceaccount.com", Disabled: true},
			},
			Networks: []*Network{{Name: "default", AutoCreateSubnetworks: true}, {Name: "prod"}},
			Firewalls: []*Firewall{
				{Name: "allow-ssh", Network: "default", SourceRanges: []string{"0.0.0.0/0"}, Allowed: []FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}},
				{Name: "allow-web", Network: "prod", TargetTags: []string{"web"}, SourceRanges: []string{"0.0.0.0/0"}, Allowed: []FirewallRule{{Protocol: "tcp", Ports: []string{"80", "443"}}}},
				{Name: "deny-egress", Network: "prod", Direction: "EGRESS", Priority: 65534, DestinationRanges: []string{"0.0.0.0/0"}, Denied: []FirewallRule{{Protocol: "all"}}},
			},
			SslCertificates: []*SslCertificate{
				{Name: "shop", Cert: CertSpec{Subject: "CN=shop.acme.example", Issuer: "CN=R11,O=Let's Encrypt,C=US", KeyAlgorithm: "EC", KeySize: 256, DNSNames: []string{"shop.acme.example"}}},
				{Name: "managed", Type: "MANAGED", ManagedStatus: "PROVISIONING", Domains: []string{"www.acme.example"}},
			},
		}, {ID: "acme-dev", Number: "222222222222"}},
	}}
}

// startGCP serves a simulator over w on a loopback port.
func startGCP(t *testing.T, w *World) (*Sim, *Server) {
	t.Helper()
	return startSim(t, w, Options{})
}

func restOpts(srv *Server) []option.ClientOption {
	return []option.ClientOption{option.WithEndpoint(srv.URL), option.WithoutAuthentication()}
}

func httpCode(err error) int {
	var ae *apierror.APIError
	if errors.As(err, &ae) {
		return ae.HTTPCode()
	}
	return 0
}

func TestGCPIAMAdminGRPC(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, gcpTestWorld())
	c, err := admin.NewIamClient(ctx, option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var emails []string
	it := c.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/acme-prod", PageSize: 2})
	for {
		sa, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		emails = append(emails, sa.GetEmail())
	}
	if len(emails) != 3 {
		t.Fatalf("listed %v, want 3 accounts over two pages", emails)
	}

	const sa = "projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"
	got, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/-/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"})
	if err != nil || got.GetName() != sa || got.GetUniqueId() == "" || got.GetProjectId() != "acme-prod" {
		t.Fatalf("get: %v %v", got, err)
	}
	created, err := c.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/acme-dev", AccountId: "builder",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "Builder"}})
	if err != nil || created.GetEmail() != "builder@acme-dev.iam.gserviceaccount.com" || created.GetDisplayName() != "Builder" {
		t.Fatalf("create: %v %v", created, err)
	}

	keys, err := c.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{Name: sa})
	if err != nil || len(keys.GetKeys()) != 2 || !keys.GetKeys()[1].GetDisabled() || keys.GetKeys()[0].GetKeyAlgorithm() != adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_RSA_2048 {
		t.Fatalf("keys: %v %v", keys, err)
	}
	sysKeys, err := c.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{
		Name:     "projects/acme-prod/serviceAccounts/111111111111-compute@developer.gserviceaccount.com",
		KeyTypes: []adminpb.ListServiceAccountKeysRequest_KeyType{adminpb.ListServiceAccountKeysRequest_USER_MANAGED}})
	if err != nil || len(sysKeys.GetKeys()) != 0 {
		t.Fatalf("user-managed keys of the default account: %v %v", sysKeys, err)
	}
	nk, err := c.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa})
	if err != nil || len(nk.GetPrivateKeyData()) == 0 || nk.GetKeyType() != adminpb.ListServiceAccountKeysRequest_USER_MANAGED {
		t.Fatalf("create key: %v %v", nk, err)
	}

	steps := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"create again", func() error {
			_, err := c.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/acme-dev", AccountId: "builder"})
			return err
		}, codes.AlreadyExists},
		{"bad account id", func() error {
			_, err := c.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/acme-dev", AccountId: "X"})
			return err
		}, codes.InvalidArgument},
		{"disable account", func() error {
			return c.DisableServiceAccount(ctx, &adminpb.DisableServiceAccountRequest{Name: sa})
		}, codes.OK},
		{"enable account", func() error { return c.EnableServiceAccount(ctx, &adminpb.EnableServiceAccountRequest{Name: sa}) }, codes.OK},
		{"get key", func() error {
			_, err := c.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: nk.GetName()})
			return err
		}, codes.OK},
		{"disable key", func() error {
			return c.DisableServiceAccountKey(ctx, &adminpb.DisableServiceAccountKeyRequest{Name: sa + "/keys/k1"})
		}, codes.OK},
		{"enable key", func() error {
			return c.EnableServiceAccountKey(ctx, &adminpb.EnableServiceAccountKeyRequest{Name: sa + "/keys/k2"})
		}, codes.OK},
		{"delete key", func() error {
			return c.DeleteServiceAccountKey(ctx, &adminpb.DeleteServiceAccountKeyRequest{Name: nk.GetName()})
		}, codes.OK},
		{"delete system key", func() error {
			return c.DeleteServiceAccountKey(ctx, &adminpb.DeleteServiceAccountKeyRequest{
				Name: "projects/acme-prod/serviceAccounts/111111111111-compute@developer.gserviceaccount.com/keys/sys1"})
		}, codes.InvalidArgument},
		{"deleted key is gone", func() error {
			_, err := c.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: nk.GetName()})
			return err
		}, codes.NotFound},
		{"delete account", func() error {
			return c.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: "projects/acme-dev/serviceAccounts/builder@acme-dev.iam.gserviceaccount.com"})
		}, codes.OK},
		{"unknown account", func() error {
			_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/nobody@acme-prod.iam.gserviceaccount.com"})
			return err
		}, codes.NotFound},
		{"unknown project", func() error {
			it := c.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/elsewhere"})
			_, err := it.Next()
			return err
		}, codes.PermissionDenied},
	}
	for _, st := range steps {
		if got := status.Code(st.call()); got != st.want {
			t.Errorf("%s: code %v, want %v", st.name, got, st.want)
		}
	}
	keys, _ = c.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{Name: sa})
	if len(keys.GetKeys()) != 2 || !keys.GetKeys()[0].GetDisabled() || keys.GetKeys()[1].GetDisabled() {
		t.Errorf("after disable k1 and enable k2: %v", keys.GetKeys())
	}
}

func TestGCPResourceManager(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, gcpTestWorld())
	pc, err := resourcemanager.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	oc, err := resourcemanager.NewOrganizationsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()

	for _, name := range []string{"projects/acme-prod", "projects/111111111111"} {
		p, err := pc.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: name})
		if err != nil || p.GetName() != "projects/111111111111" || p.GetProjectId() != "acme-prod" ||
			p.GetParent() != "organizations/123456789012" || p.GetState() != resourcemanagerpb.Project_ACTIVE {
			t.Fatalf("get %s: %v %v", name, p, err)
		}
	}
	if _, err := pc.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/nope"}); httpCode(err) != 403 {
		t.Errorf("unknown project: %v, want 403", err)
	}

	pol, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod",
		Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
	if err != nil || len(pol.GetBindings()) != 2 || pol.GetBindings()[0].GetRole() != "roles/owner" || len(pol.GetEtag()) == 0 {
		t.Fatalf("getIamPolicy: %v %v", pol, err)
	}
	stale := proto.Clone(pol).(*iampb.Policy)
	pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"group:ops@acme.example"}})
	pol.Version = 3
	pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/browser", Members: []string{"user:bob@acme.example"},
		Condition: &expr.Expr{Title: "until 2027", Expression: `request.time < timestamp("2027-01-01T00:00:00Z")`}})
	newPol, err := pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: pol})
	if err != nil || len(newPol.GetBindings()) != 4 || string(newPol.GetEtag()) == string(pol.GetEtag()) {
		t.Fatalf("setIamPolicy: %v %v", newPol, err)
	}
	_, err = pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: stale})
	var herr *googleapi.Error
	if !errors.As(err, &herr) || herr.Code != 409 || !strings.Contains(herr.Body, `"ABORTED"`) {
		t.Errorf("stale etag: %v, want 409 ABORTED", err)
	}
	public := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"allUsers"}}}}
	if _, err := pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: public}); httpCode(err) != 400 {
		t.Errorf("allUsers on a project: %v, want 400", err)
	}

	org, err := oc.GetOrganization(ctx, &resourcemanagerpb.GetOrganizationRequest{Name: "organizations/123456789012"})
	if err != nil || org.GetDisplayName() != "acme.example" {
		t.Fatalf("get organization: %v %v", org, err)
	}
	if _, err := oc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "organizations/123456789012"}); err != nil {
		t.Errorf("organization getIamPolicy: %v", err)
	}
	if _, err := oc.GetOrganization(ctx, &resourcemanagerpb.GetOrganizationRequest{Name: "organizations/9"}); httpCode(err) != 403 {
		t.Errorf("unknown organization: %v, want 403", err)
	}

	searches := []struct {
		query string
		want  []string
	}{
		{"", []string{"acme-prod", "acme-dev"}},
		{"parent:organizations/123456789012", []string{"acme-prod"}},
		{"id:acme-*", []string{"acme-prod", "acme-dev"}},
		{"id:acme-dev state:ACTIVE", []string{"acme-dev"}},
	}
	for _, tc := range searches {
		var ids []string
		it := pc.SearchProjects(ctx, &resourcemanagerpb.SearchProjectsRequest{Query: tc.query, PageSize: 1})
		for {
			p, err := it.Next()
			if errors.Is(err, iterator.Done) {
				break
			}
			if err != nil {
				t.Fatalf("search %q: %v", tc.query, err)
			}
			ids = append(ids, p.GetProjectId())
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("search %q: %v, want %v", tc.query, ids, tc.want)
		}
	}
	lit := pc.ListProjects(ctx, &resourcemanagerpb.ListProjectsRequest{Parent: "organizations/123456789012"})
	if p, err := lit.Next(); err != nil || p.GetProjectId() != "acme-prod" {
		t.Errorf("list: %v %v", p, err)
	}
}

// selfSigned makes a small certificate and key in PEM, to upload.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}))
}

func TestGCPCompute(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, gcpTestWorld())
	fc, err := compute.NewFirewallsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	nc, err := compute.NewNetworksRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sc, err := compute.NewSslCertificatesRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()

	listFW := func(filter string) []string {
		t.Helper()
		req := &computepb.ListFirewallsRequest{Project: "acme-prod", MaxResults: proto.Uint32(1)}
		if filter != "" {
			req.Filter = proto.String(filter)
		}
		var names []string
		it := fc.List(ctx, req)
		for {
			f, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return names
			}
			if err != nil {
				t.Fatalf("list firewalls %q: %v", filter, err)
			}
			names = append(names, f.GetName())
		}
	}
	filters := []struct{ filter, want string }{
		{"", "allow-ssh,allow-web,deny-egress"},
		{`name = "allow-web"`, "allow-web"},
		{`direction != INGRESS`, "deny-egress"},
		{`network eq ".*/prod"`, "allow-web,deny-egress"},
		{`(network eq ".*/prod") (direction = "INGRESS")`, "allow-web"},
		{`targetTags = web`, "allow-web"},
	}
	for _, tc := range filters {
		if got := strings.Join(listFW(tc.filter), ","); got != tc.want {
			t.Errorf("filter %q: %s, want %s", tc.filter, got, tc.want)
		}
	}
	if sim.Calls()["compute:ListFirewalls"].Calls < 3 {
		t.Errorf("maxResults 1 should page: %v", sim.Calls()["compute:ListFirewalls"])
	}

	fw, err := fc.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-ssh"})
	if err != nil || fw.GetNetwork() != computeBase+"acme-prod/global/networks/default" || fw.GetPriority() != 1000 ||
		fw.GetAllowed()[0].GetIPProtocol() != "tcp" || fw.GetDirection() != "INGRESS" || fw.GetId() == 0 {
		t.Fatalf("get: %v %v", fw, err)
	}
	op, err := fc.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
		Name: proto.String("allow-rdp"), Network: proto.String("global/networks/prod"),
		Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp"), Ports: []string{"3389"}}}}})
	if err != nil || !op.Done() {
		t.Fatalf("insert: %v %v", op, err)
	}
	if err := op.Wait(ctx); err != nil {
		t.Fatalf("wait: %v", err)
	}
	rdp, err := fc.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-rdp"})
	if err != nil || !slices.Equal(rdp.GetSourceRanges(), []string{"0.0.0.0/0"}) || !strings.HasSuffix(rdp.GetNetwork(), "/networks/prod") {
		t.Fatalf("inserted rule: %v %v", rdp, err)
	}
	if _, err := fc.Patch(ctx, &computepb.PatchFirewallRequest{Project: "acme-prod", Firewall: "allow-rdp",
		FirewallResource: &computepb.Firewall{SourceRanges: []string{"10.0.0.0/8"}, Disabled: proto.Bool(true)}}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	rdp, _ = fc.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-rdp"})
	if !rdp.GetDisabled() || !slices.Equal(rdp.GetSourceRanges(), []string{"10.0.0.0/8"}) || rdp.GetAllowed()[0].GetPorts()[0] != "3389" {
		t.Errorf("patched rule: %v", rdp)
	}

	errs := []struct {
		name string
		call func() error
		want int
	}{
		{"insert twice", func() error {
			_, err := fc.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
				Name: proto.String("allow-rdp"), Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp")}}}})
			return err
		}, 409},
		{"allowed and denied", func() error {
			_, err := fc.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
				Name: proto.String("both"), Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp")}}, Denied: []*computepb.Denied{{IPProtocol: proto.String("udp")}}}})
			return err
		}, 400},
		{"unknown network", func() error {
			_, err := fc.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
				Name: proto.String("nonet"), Network: proto.String("global/networks/none"), Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp")}}}})
			return err
		}, 400},
		{"delete", func() error {
			_, err := fc.Delete(ctx, &computepb.DeleteFirewallRequest{Project: "acme-prod", Firewall: "allow-rdp"})
			return err
		}, 0},
		{"get deleted", func() error {
			_, err := fc.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-rdp"})
			return err
		}, 404},
		{"unknown project", func() error {
			_, err := fc.Get(ctx, &computepb.GetFirewallRequest{Project: "nope", Firewall: "x"})
			return err
		}, 403},
		{"bad filter", func() error {
			_, err := fc.List(ctx, &computepb.ListFirewallsRequest{Project: "acme-prod", Filter: proto.String("name > 3 OR x")}).Next()
			return err
		}, 400},
	}
	for _, tc := range errs {
		if got := httpCode(tc.call()); got != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.want)
		}
	}

	nets, err := nc.List(ctx, &computepb.ListNetworksRequest{Project: "acme-prod"}).Next()
	if err != nil || nets.GetName() != "default" || !nets.GetAutoCreateSubnetworks() {
		t.Errorf("networks: %v %v", nets, err)
	}
	if n, err := nc.Get(ctx, &computepb.GetNetworkRequest{Project: "acme-prod", Network: "prod"}); err != nil || n.GetAutoCreateSubnetworks() {
		t.Errorf("get network: %v %v", n, err)
	}

	shop, err := sc.Get(ctx, &computepb.GetSslCertificateRequest{Project: "acme-prod", SslCertificate: "shop"})
	if err != nil || !strings.HasPrefix(shop.GetCertificate(), "-----BEGIN CERTIFICATE-----") || shop.GetType() != "SELF_MANAGED" ||
		!slices.Equal(shop.GetSubjectAlternativeNames(), []string{"shop.acme.example"}) || shop.GetExpireTime() == "" {
		t.Fatalf("get certificate: %v %v", shop, err)
	}
	managed, err := sc.Get(ctx, &computepb.GetSslCertificateRequest{Project: "acme-prod", SslCertificate: "managed"})
	if err != nil || managed.GetManaged().GetStatus() != "PROVISIONING" || managed.GetType() != "MANAGED" {
		t.Fatalf("get managed certificate: %v %v", managed, err)
	}
	certPEM, keyPEM := selfSigned(t, "api.acme.example")
	if _, err := sc.Insert(ctx, &computepb.InsertSslCertificateRequest{Project: "acme-prod", SslCertificateResource: &computepb.SslCertificate{
		Name: proto.String("api"), Certificate: proto.String(certPEM), PrivateKey: proto.String(keyPEM)}}); err != nil {
		t.Fatalf("insert certificate: %v", err)
	}
	_, otherKey := selfSigned(t, "other")
	if _, err := sc.Insert(ctx, &computepb.InsertSslCertificateRequest{Project: "acme-prod", SslCertificateResource: &computepb.SslCertificate{
		Name: proto.String("mismatch"), Certificate: proto.String(certPEM), PrivateKey: proto.String(otherKey)}}); httpCode(err) != 400 {
		t.Errorf("mismatched key: %v, want 400", err)
	}
	var names []string
	for it := sc.List(ctx, &computepb.ListSslCertificatesRequest{Project: "acme-prod"}); ; {
		c, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, c.GetName())
	}
	if strings.Join(names, ",") != "shop,managed,api" {
		t.Errorf("certificates: %v", names)
	}
	if _, err := sc.Delete(ctx, &computepb.DeleteSslCertificateRequest{Project: "acme-prod", SslCertificate: "api"}); err != nil {
		t.Errorf("delete certificate: %v", err)
	}
}

func TestGCPFaults(t *testing.T) {
	ctx := context.Background()
	sim, srv := startGCP(t, gcpTestWorld())
	fc, err := compute.NewFirewallsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	ic, err := admin.NewIamClient(ctx, option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()
	tests := []struct {
		fault     Fault
		wantHTTP  int
		wantGRPC  codes.Code
		countedAs func(CallStats) int
	}{
		{Fault{AccessDenied: true, Account: "acme-prod"}, 403, codes.PermissionDenied, func(s CallStats) int { return s.AccessDenied }},
		{Fault{ThrottleRate: 1}, 429, codes.ResourceExhausted, func(s CallStats) int { return s.Throttled }},
	}
	for _, tc := range tests {
		if err := sim.SetFaults([]Fault{tc.fault}, nil); err != nil {
			t.Fatal(err)
		}
		sim.ResetCalls()
		_, err := fc.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-ssh"})
		if httpCode(err) != tc.wantHTTP {
			t.Errorf("%+v: compute answered %v, want HTTP %d", tc.fault, err, tc.wantHTTP)
		}
		_, err = ic.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/ci@acme-prod.iam.gserviceaccount.com"})
		if status.Code(err) != tc.wantGRPC {
			t.Errorf("%+v: IAM answered %v, want %v", tc.fault, err, tc.wantGRPC)
		}
		if n := tc.countedAs(sim.Calls()["iamadmin:GetServiceAccount"]); n != 1 {
			t.Errorf("%+v: counted %d, want 1", tc.fault, n)
		}
	}
}
