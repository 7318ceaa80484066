package cloudsim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"
	admin "cloud.google.com/go/iam/admin/apiv1"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	recapi "cloud.google.com/go/recommender/apiv1"
	recommenderpb "cloud.google.com/go/recommender/apiv1/recommenderpb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"github.com/googleapis/gax-go/v2/apierror"
	"golang.org/x/oauth2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// gcpClients are the official clients, calling as one member (or as the operator).
type gcpClients struct {
	projects    *resourcemanager.ProjectsClient
	folders     *resourcemanager.FoldersClient
	firewalls   *compute.FirewallsClient
	iam         *admin.IamClient
	recommender *recapi.Client
}

// gcpClientsAs creates the clients with member's bearer token (SimToken); member "" calls
// as the operator, without one.
func gcpClientsAs(t *testing.T, srv *Server, member string) *gcpClients {
	t.Helper()
	ctx := context.Background()
	auth := option.WithoutAuthentication()
	if member != "" {
		auth = option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: SimToken(member), TokenType: "Bearer"}))
	}
	rest := []option.ClientOption{option.WithEndpoint(srv.URL), auth}
	rpc := []option.ClientOption{option.WithEndpoint(srv.Addr), auth,
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	c := &gcpClients{}
	var err error
	steps := []func() error{
		func() error { c.projects, err = resourcemanager.NewProjectsRESTClient(ctx, rest...); return err },
		func() error { c.folders, err = resourcemanager.NewFoldersRESTClient(ctx, rest...); return err },
		func() error { c.firewalls, err = compute.NewFirewallsRESTClient(ctx, rest...); return err },
		func() error { c.iam, err = admin.NewIamClient(ctx, rpc...); return err },
		func() error { c.recommender, err = recapi.NewClient(ctx, rpc...); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c.projects.Close()
		c.folders.Close()
		c.firewalls.Close()
		c.iam.Close()
		c.recommender.Close()
	})
	return c
}

// denied tells whether err is Google's permission denial naming perm, over REST (403
// PERMISSION_DENIED) or gRPC (codes.PermissionDenied).
func denied(err error, perm string) bool {
	if err == nil || !strings.Contains(err.Error(), perm) {
		return false
	}
	var ae *apierror.APIError
	if errors.As(err, &ae) && ae.HTTPCode() == http.StatusForbidden && ae.GRPCStatus().Code() == codes.PermissionDenied {
		return true
	}
	return status.Code(err) == codes.PermissionDenied
}

func enforcedWorld() *World {
	w := gcpTestWorld()
	w.GCP.EnforceIAM = true
	w.GCP.Folders = []*GCPFolder{{ID: "55", Parent: "organizations/123456789012", IAMPolicy: IAMPolicy{Bindings: []Binding{
		{Role: "roles/compute.networkViewer", Members: []string{"user:net@acme.example"}}}}}}
	w.GCP.Organizations[0].IAMPolicy = IAMPolicy{Bindings: []Binding{
		{Role: "roles/iam.securityReviewer", Members: []string{"user:auditor@acme.example"}}}}
	p := w.GCP.Projects[0]
	p.Parent = "folders/55"
	p.IAMPolicy.Bindings = append(p.IAMPolicy.Bindings,
		Binding{Role: "roles/viewer", Members: []string{"serviceAccount:reader@acme-prod.iam.gserviceaccount.com"}},
		Binding{Role: "roles/recommender.iamViewer", Members: []string{"user:rec@acme.example"}},
		Binding{Role: "roles/editor", Members: []string{"group:ops@acme.example"}},
		Binding{Role: "roles/owner", Members: []string{"user:cond@acme.example"}, Condition: &Expr{Expression: "request.time < timestamp('2000-01-01T00:00:00Z')"}},
	)
	return w
}

// TestGCPEnforce: each member's call through the official clients is allowed or denied by
// the roles bound to it on the project, its folder and its organisation; the operator is
// never restricted.
func TestGCPEnforce(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, enforcedWorld())
	const (
		owner  = "user:alice@acme.example"
		editor = "serviceAccount:111111111111-compute@developer.gserviceaccount.com"
		viewer = "serviceAccount:reader@acme-prod.iam.gserviceaccount.com"
	)
	calls := map[string]func(c *gcpClients) error{
		"getIamPolicy": func(c *gcpClients) error {
			_, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod"})
			return err
		},
		"setIamPolicy": func(c *gcpClients) error {
			pol, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod"})
			if err != nil {
				return err
			}
			_, err = c.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/acme-prod", Policy: pol})
			return err
		},
		"getProject": func(c *gcpClients) error {
			_, err := c.projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/acme-prod"})
			return err
		},
		"getFolder": func(c *gcpClients) error {
			_, err := c.folders.GetFolder(ctx, &resourcemanagerpb.GetFolderRequest{Name: "folders/55"})
			return err
		},
		"listFirewalls": func(c *gcpClients) error {
			_, err := c.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: "acme-prod"}).Next()
			return err
		},
		"insertFirewall": func(c *gcpClients) error {
			op, err := c.firewalls.Insert(ctx, &computepb.InsertFirewallRequest{Project: "acme-prod", FirewallResource: &computepb.Firewall{
				Name:    proto.String("fw-" + strings.NewReplacer(":", "-", "@", "-", ".", "-").Replace(strings.ToLower(time.Now().Format("150405.000000")))),
				Network: proto.String("global/networks/default"), SourceRanges: []string{"10.0.0.0/8"},
				Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp"), Ports: []string{"443"}}}}})
			if err == nil {
				err = op.Wait(ctx)
			}
			return err
		},
		"listServiceAccounts": func(c *gcpClients) error {
			_, err := c.iam.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/acme-prod"}).Next()
			return err
		},
		"getServiceAccountWildcard": func(c *gcpClients) error {
			_, err := c.iam.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/-/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"})
			return err
		},
		"disableServiceAccount": func(c *gcpClients) error {
			return c.iam.DisableServiceAccount(ctx, &adminpb.DisableServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/ci@acme-prod.iam.gserviceaccount.com"})
		},
		"listRecommendations": func(c *gcpClients) error {
			_, err := c.recommender.ListRecommendations(ctx, &recommenderpb.ListRecommendationsRequest{
				Parent: "projects/acme-prod/locations/global/recommenders/" + iamRecommender}).Next()
			if errors.Is(err, iterator.Done) {
				err = nil
			}
			return err
		},
	}
	for _, tc := range []struct {
		member, call string
		deniedPerm   string // "": allowed
	}{
		{"", "setIamPolicy", ""},
		{"", "insertFirewall", ""},
		{owner, "setIamPolicy", ""},
		{owner, "insertFirewall", ""},
		{editor, "insertFirewall", ""},
		{editor, "disableServiceAccount", ""},
		{editor, "getIamPolicy", ""},
		{editor, "setIamPolicy", "resourcemanager.projects.setIamPolicy"},
		{viewer, "listFirewalls", ""},
		{viewer, "listServiceAccounts", ""},
		{viewer, "getServiceAccountWildcard", ""},
		{viewer, "listRecommendations", ""},
		{viewer, "getProject", ""},
		{viewer, "insertFirewall", "compute.firewalls.create"},
		{viewer, "disableServiceAccount", "iam.serviceAccounts.disable"},
		{viewer, "setIamPolicy", "resourcemanager.projects.setIamPolicy"},
		{viewer, "getFolder", "resourcemanager.folders.get"},
		// Granted on the folder above the project.
		{"user:net@acme.example", "listFirewalls", ""},
		{"user:net@acme.example", "getProject", "resourcemanager.projects.get"},
		// Granted on the organisation.
		{"user:auditor@acme.example", "getIamPolicy", ""},
		{"user:auditor@acme.example", "listServiceAccounts", ""},
		{"user:auditor@acme.example", "getServiceAccountWildcard", "iam.serviceAccounts.get"},
		{"user:rec@acme.example", "listRecommendations", ""},
		{"user:rec@acme.example", "listFirewalls", "compute.firewalls.list"},
		// Not modelled, so failing closed: groups and conditions grant nothing.
		{"user:member-of-ops@acme.example", "listFirewalls", "compute.firewalls.list"},
		{"user:cond@acme.example", "getProject", "resourcemanager.projects.get"},
		{"user:nobody@acme.example", "listServiceAccounts", "iam.serviceAccounts.list"},
	} {
		t.Run(tc.member+"/"+tc.call, func(t *testing.T) {
			err := calls[tc.call](gcpClientsAs(t, srv, tc.member))
			if tc.deniedPerm == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.deniedPerm != "" && !denied(err, tc.deniedPerm) {
				t.Fatalf("got %v, want PermissionDenied on %s", err, tc.deniedPerm)
			}
		})
	}
}

// TestGCPEnforceCounts: a refused call is counted as denied, and records no use.
func TestGCPEnforceCounts(t *testing.T) {
	sim, srv := startGCP(t, enforcedWorld())
	c := gcpClientsAs(t, srv, "serviceAccount:reader@acme-prod.iam.gserviceaccount.com")
	err := c.iam.DisableServiceAccount(context.Background(), &adminpb.DisableServiceAccountRequest{Name: "projects/acme-prod/serviceAccounts/ci@acme-prod.iam.gserviceaccount.com"})
	if !denied(err, "iam.serviceAccounts.disable") {
		t.Fatalf("disable as viewer: %v", err)
	}
	if st := sim.Calls()["iamadmin:DisableServiceAccount"]; st.AccessDenied != 1 {
		t.Errorf("counted %+v, want one denied call", st)
	}
	sim.Do(func(w *World) {
		if used := w.GCP.usage.used["acme-prod"]["serviceAccount:reader@acme-prod.iam.gserviceaccount.com"]; len(used) != 0 {
			t.Errorf("a refused call was recorded as used: %v", used)
		}
	})
}

// TestGCPEnforceOff: without gcp.enforce_iam, a member's token restricts nothing.
func TestGCPEnforceOff(t *testing.T) {
	w := enforcedWorld()
	w.GCP.EnforceIAM = false
	_, srv := startGCP(t, w)
	c := gcpClientsAs(t, srv, "user:nobody@acme.example")
	if _, err := c.projects.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/acme-prod"}); err != nil {
		t.Fatal(err)
	}
}

func TestGCPCaller(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer sim:user:a@b.example": "user:a@b.example",
		"bearer sim:serviceAccount:x": "serviceAccount:x",
		"Bearer ya29.real-token":      "",
		"Bearer sim:nocolon":          "",
		"":                            "",
		"Basic sim:user:a@b":          "",
	} {
		if got := gcpCaller(in); got != want {
			t.Errorf("gcpCaller(%q) = %q, want %q", in, got, want)
		}
	}
}
