package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// genGCPClients are the official clients a GCP collection uses, on one simulator.
type genGCPClients struct {
	projects  *resourcemanager.ProjectsClient
	firewalls *compute.FirewallsClient
	iam       *admin.IamClient
}

func newGCPClients(t *testing.T, srv *Server) genGCPClients {
	t.Helper()
	ctx := context.Background()
	pc, err := resourcemanager.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := compute.NewFirewallsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := admin.NewIamClient(ctx, option.WithEndpoint(srv.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(); fc.Close(); ic.Close() })
	return genGCPClients{pc, fc, ic}
}

// readProject reads a project's policy, firewalls and service accounts with their keys,
// by "type/name"; the first error ends the read.
func (c genGCPClients) readProject(id string) (map[string]string, error) {
	ctx := context.Background()
	out := map[string]string{}
	put := func(k string, m proto.Message) {
		b, _ := json.Marshal(m)
		out[k] = string(b)
	}
	pol, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/" + id})
	if err != nil {
		return nil, err
	}
	put("policy", pol)
	fit := c.firewalls.List(ctx, &computepb.ListFirewallsRequest{Project: id})
	for {
		f, err := fit.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, err
		}
		put("firewall/"+f.GetName(), f)
	}
	sit := c.iam.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/" + id})
	for {
		sa, err := sit.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, err
		}
		keys, err := c.iam.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{Name: sa.GetName()})
		if err != nil {
			return nil, err
		}
		put("sa/"+sa.GetEmail(), sa)
		put("keys/"+sa.GetEmail(), keys)
	}
	return out, nil
}

// Generated projects: Resource Manager lists them all without building any; a project
// reads the same after it was dropped and built again, writes included; another seed
// gives other content.
func TestGenerated_gcpProjects(t *testing.T) {
	world := func(seed uint64) *World {
		return &World{GCP: GCP{Generated: &GeneratedProjects{Projects: 30, Parent: "organizations/123456789012", Resources: 60, Cache: 1, Seed: seed}}}
	}
	sim, srv := startSim(t, world(3), Options{Now: fixedClock})
	c := newGCPClients(t, srv)
	ctx := context.Background()

	n := 0
	it := c.projects.SearchProjects(ctx, &resourcemanagerpb.SearchProjectsRequest{Query: "parent:organizations/123456789012"})
	for {
		p, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("gen-proj-%05d", n); p.GetProjectId() != want || p.GetName() != fmt.Sprintf("projects/%d", 700000000000+n) {
			t.Errorf("project %d: %s (%s); want %s", n, p.GetProjectId(), p.GetName(), want)
		}
		n++
	}
	if st := sim.GeneratedProjectStats(); n != 30 || st.Built != 0 {
		t.Errorf("SearchProjects: %d projects, %d built; want 30, none", n, st.Built)
	}

	a, b := "gen-proj-00004", "gen-proj-00005"
	first, err := c.readProject(a)
	if err != nil {
		t.Fatal(err)
	}
	// 21 service accounts (most with a key), 18 firewalls, the policy.
	if len(first) < 50 || first["firewall/default-allow-ssh"] == "" {
		t.Fatalf("project %s reads %d resources: %v", a, len(first), first["firewall/default-allow-ssh"])
	}
	sa := fmt.Sprintf("projects/-/serviceAccounts/sa-00003@%s.iam.gserviceaccount.com", a)
	if err := c.iam.DisableServiceAccount(ctx, &adminpb.DisableServiceAccountRequest{Name: sa}); err != nil {
		t.Fatalf("disable %s: %v", sa, err)
	}
	if _, err := c.firewalls.Delete(ctx, &computepb.DeleteFirewallRequest{Project: a, Firewall: "default-allow-rdp"}); err != nil {
		t.Fatal(err)
	}
	written, err := c.readProject(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := written["firewall/default-allow-rdp"]; ok || changed(first, written) != 1 || len(written) != len(first)-1 {
		t.Fatalf("the writes changed %d resources; want the account disabled and the rule gone", changed(first, written))
	}
	if _, err := c.readProject(b); err != nil { // drops a
		t.Fatal(err)
	}
	// The overlay: the account changed, the rule removed.
	if st := sim.GeneratedProjectStats(); st.Evicted != 1 || st.Overlays != 1 || st.OverlayResources != 2 {
		t.Errorf("stats %+v; want a dropped with an overlay of 2 resources", st)
	}
	again, err := c.readProject(a)
	if err != nil {
		t.Fatal(err)
	}
	if d := changed(written, again); d != 0 || len(again) != len(written) {
		t.Errorf("project %s after eviction: %d of %d resources differ from what was written", a, d, len(written))
	}
	if !strings.Contains(again["sa/sa-00003@"+a+".iam.gserviceaccount.com"], `"disabled":true`) {
		t.Errorf("service account after eviction: %s; want it disabled", again["sa/sa-00003@"+a+".iam.gserviceaccount.com"])
	}

	_, srv2 := startSim(t, world(4), Options{Now: fixedClock})
	other, err := newGCPClients(t, srv2).readProject(b)
	if err != nil {
		t.Fatal(err)
	}
	pristine, err := c.readProject(b)
	if err != nil {
		t.Fatal(err)
	}
	if changed(pristine, other) == 0 {
		t.Error("another seed gives the same project")
	}
}

// About fault_share of the generated projects refuse their calls. (Denied only: the GCP
// clients retry a 5xx or a throttle until their deadline.)
func TestGenerated_gcpFaultShare(t *testing.T) {
	const n, share = 200, 0.25
	w := &World{GCP: GCP{Generated: &GeneratedProjects{Projects: n, Resources: 10, Cache: 2, FaultShare: share,
		Faults: []Fault{{AccessDenied: true}}}}}
	_, srv := startSim(t, w, Options{})
	c := newGCPClients(t, srv)
	refused := 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range n {
		_, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: fmt.Sprintf("projects/gen-proj-%05d", i)})
		if err != nil {
			if code := httpCode(err); code != 403 {
				t.Errorf("project %d: %v; want 403", i, err)
			}
			refused++
		}
	}
	// 50 expected, σ ≈ 6.
	if refused < 32 || refused > 68 {
		t.Errorf("%d of %d projects refuse; want about %.0f", refused, n, share*n)
	}
	t.Logf("%d of %d projects refuse", refused, n)
}
