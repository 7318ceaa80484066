package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"
	admin "cloud.google.com/go/iam/admin/apiv1"
	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb "cloud.google.com/go/iam/apiv1/iampb"
	recapi "cloud.google.com/go/recommender/apiv1"
	"cloud.google.com/go/recommender/apiv1/recommenderpb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	resourcemanagerpb "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
)

// googleClients are the official Google clients, calling the simulator as one member.
type googleClients struct {
	projects    *resourcemanager.ProjectsClient
	firewalls   *compute.FirewallsClient
	iam         *admin.IamClient
	recommender *recapi.Client
}

// googleAs creates the clients against the simulator at url, with member's bearer token
// (cloudsim.SimToken), or as the operator, without one, when member is "".
func googleAs(t *testing.T, url, member string) *googleClients {
	t.Helper()
	ctx := context.Background()
	auth := option.WithoutAuthentication()
	if member != "" {
		auth = option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: cloudsim.SimToken(member), TokenType: "Bearer"}))
	}
	rest := []option.ClientOption{option.WithEndpoint(url), auth}
	rpc := []option.ClientOption{option.WithEndpoint(strings.TrimPrefix(url, "http://")), auth,
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	c := &googleClients{}
	var err error
	for _, step := range []func() error{
		func() error { c.projects, err = resourcemanager.NewProjectsRESTClient(ctx, rest...); return err },
		func() error { c.firewalls, err = compute.NewFirewallsRESTClient(ctx, rest...); return err },
		func() error { c.iam, err = admin.NewIamClient(ctx, rpc...); return err },
		func() error { c.recommender, err = recapi.NewClient(ctx, rpc...); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { c.projects.Close(); c.firewalls.Close(); c.iam.Close(); c.recommender.Close() })
	return c
}

// TestLeastPrivilege_GCP_throughTheGoogleClients is issue 29's proof on Google Cloud,
// through Google's official Go clients against a simulator that enforces IAM and whose
// IAM recommender learns from what members use: the operator creates a service account
// and grants it editor; the account writes once, early, then only reads, with its own
// token; 100 days on, warden plans Google's recommendation to replace editor with viewer,
// an approver signs, apply changes the binding; the clients read the new policy and the
// recommendation SUCCEEDED, the account's reads still succeed and its write is refused;
// rollback restores the identical bindings, and the write succeeds again; the audit log
// verifies.
func TestLeastPrivilege_GCP_throughTheGoogleClients(t *testing.T) {
	const (
		project = "acme-app"
		sa      = "serviceAccount:deployer@acme-app.iam.gserviceaccount.com"
	)
	ctx := context.Background()
	start := time.Now().UTC().AddDate(0, 0, -200).Truncate(time.Second)
	e := startSimEnv(t, &cloudsim.World{Clock: start, GCP: cloudsim.GCP{EnforceIAM: true, RecommendFromUsage: true,
		Projects: []*cloudsim.Project{{ID: project, Number: "314159265358", Name: "App",
			Networks:  []*cloudsim.Network{{Name: "default"}},
			Firewalls: []*cloudsim.Firewall{{Name: "allow-internal", Network: "default", SourceRanges: []string{"10.0.0.0/8"}, Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"443"}}}}},
		}}}})
	op := googleAs(t, e.url, "")
	app := googleAs(t, e.url, sa)
	advance := func(d string) {
		t.Helper()
		resp, err := http.Post(e.url+"/_sim/clock", "text/plain", strings.NewReader(d))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("move the simulator's clock: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	bindings := func() []string {
		t.Helper()
		pol, err := op.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + project})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range pol.Bindings {
			members := slices.Sorted(slices.Values(b.Members))
			out = append(out, b.Role+"="+strings.Join(members, ","))
		}
		slices.Sort(out)
		return out
	}
	insertFirewall := func(name string) error { // editor's, not viewer's
		op, err := app.firewalls.Insert(ctx, &computepb.InsertFirewallRequest{Project: project, FirewallResource: &computepb.Firewall{
			Name: proto.String(name), Network: proto.String("global/networks/default"), SourceRanges: []string{"10.20.0.0/16"},
			Allowed: []*computepb.Allowed{{IPProtocol: proto.String("tcp"), Ports: []string{"8443"}}}}})
		if err == nil {
			err = op.Wait(ctx)
		}
		return err
	}
	reads := func() error { // all of them viewer's
		_, err1 := app.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: project}).Next()
		_, err2 := app.firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: project, Firewall: "allow-internal"})
		_, err3 := app.iam.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/" + project}).Next()
		_, err4 := app.projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/" + project})
		return errors.Join(err1, err2, err3, err4)
	}

	// The operator (no token) creates the account and grants it editor, under the etag.
	if _, err := op.iam.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/" + project, AccountId: "deployer",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "Deployer"}}); err != nil {
		t.Fatal(err)
	}
	pol, err := op.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + project})
	if err != nil {
		t.Fatal(err)
	}
	pol.Bindings = append(pol.Bindings, &iampb.Binding{Role: "roles/editor", Members: []string{sa}})
	if _, err := op.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/" + project, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	granted := bindings()

	// Day 1: the account writes once, the only time. Then 99 days on, it reads.
	advance("24h")
	if err := insertFirewall("deployer-once"); err != nil {
		t.Fatalf("the account's early write: %v", err)
	}
	advance("2376h")
	if err := reads(); err != nil {
		t.Fatalf("the account's reads: %v", err)
	}
	if _, err := app.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/" + project, Policy: pol}); status.Code(err) != codes.PermissionDenied && !strings.Contains(fmt.Sprint(err), "403") {
		t.Fatalf("editor set an IAM policy (owner's): %v", err) // enforcement is on
	}

	bobKey, bobPub := sshKeyFile(t, e.dir, "bob")
	e.cfg = write(t, e.dir, "warden.yaml", `gates:
  approvers: [bob]
  signers: {bob: ["`+bobPub+`"]}
  refuse: [critical]
targets:
  gcp:
    projects: [`+project+`]
    endpoint: `+e.url+`
    recommendations: true
`)
	planFile := filepath.Join(e.dir, "plan.json")
	later := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
	if code, out, stderr := e.warden(t, "plan", "--out", planFile, "--now", later); code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, stderr)
	}
	p, err := remediate.ReadPlan(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var act *remediate.PlannedAction
	for i, a := range p.Actions {
		if a.Remediator == "gcp.iam.apply_role_recommendation" && a.Part == "roles/editor/"+sa {
			act = &p.Actions[i]
		}
	}
	if act == nil || fmt.Sprint(act.Params["new_roles"]) != "[roles/viewer]" {
		t.Fatalf("no recommendation to replace the account's editor with viewer in the plan: %+v", p.Actions)
	}
	recName, _ := act.Params["recommendation"].(string)
	if code, out, _ := e.warden(t, "plan", "--now", later); code != 0 || !strings.Contains(out, "replacing roles/editor of "+sa+" with roles/viewer") ||
		!strings.Contains(out, "used 4 of") {
		t.Errorf("the plan does not show the recommendation and its evidence:\n%s", out)
	}

	// Apply asks bob; bob signs; apply replaces the role.
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	req := itemsByAction(res)[act.ID].Request
	if code != 0 || req == "" {
		t.Fatalf("apply: exit %d, %+v\n%s", code, res, stderr)
	}
	t.Setenv("WARDEN_ACTOR", "bob")
	if code, out, stderr := e.warden(t, "approve", req, "--sign-key", bobKey, "--reason", "CHG-29"); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	t.Setenv("WARDEN_ACTOR", "alice")
	if code, res, stderr := e.applyJSON(t, planFile, "--confirm"); code != 0 || itemsByAction(res)[act.ID].State != remediate.StateVerified {
		t.Fatalf("apply after approval: exit %d, %+v\n%s", code, itemsByAction(res)[act.ID], stderr)
	}

	// The Google clients read viewer instead of editor, and the recommendation succeeded;
	// the account's reads still succeed, its write is refused.
	after := bindings()
	if !slices.Contains(after, "roles/viewer="+sa) || slices.ContainsFunc(after, func(b string) bool { return strings.HasPrefix(b, "roles/editor=") && strings.Contains(b, sa) }) {
		t.Errorf("bindings after apply: %q", after)
	}
	rec, err := op.recommender.GetRecommendation(ctx, &recommenderpb.GetRecommendationRequest{Name: recName})
	if err != nil || rec.GetStateInfo().GetState() != recommenderpb.RecommendationStateInfo_SUCCEEDED {
		t.Errorf("the recommendation after apply: %v %v", rec.GetStateInfo(), err)
	}
	if err := reads(); err != nil {
		t.Errorf("the account's reads after apply: %v", err)
	}
	if err := insertFirewall("deployer-twice"); err == nil || !strings.Contains(err.Error(), "compute.firewalls.create") || !strings.Contains(err.Error(), "403") {
		t.Errorf("the account's write with viewer: %v, want 403 PERMISSION_DENIED on compute.firewalls.create", err)
	}

	// Rollback restores the identical bindings; the write works again.
	if code, out, stderr := e.warden(t, "rollback", act.ID); code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, stderr)
	}
	if got := bindings(); !slices.Equal(got, granted) {
		t.Errorf("bindings after rollback: %q, want %q", got, granted)
	}
	if err := insertFirewall("deployer-twice"); err != nil {
		t.Errorf("the account's write after rollback: %v", err)
	}
	if code, out, stderr := e.warden(t, "audit", "verify"); code != 0 {
		t.Errorf("audit verify: exit %d\n%s%s", code, out, stderr)
	}
}
