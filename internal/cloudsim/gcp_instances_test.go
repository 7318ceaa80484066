package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"
)

// instancesWorld is gcpTestWorld with instances declared in YAML, as a world file does.
func instancesWorld(t *testing.T) *World {
	t.Helper()
	w, err := ParseWorld([]byte(`
gcp:
  projects:
    - id: acme-prod
      number: "111111111111"
      networks: [{name: default, auto_create_subnetworks: true}, {name: prod}]
      instances:
        - {name: web-2, zone: europe-west1-c, networks: [prod], tags: [web, http-server], service_accounts: [web@acme-prod.iam.gserviceaccount.com]}
        - {name: web-1, zone: europe-west1-b, networks: [prod, default], tags: [web]}
        - {name: batch, zone: europe-west1-b, status: TERMINATED}
`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// aggregatedInstances lists a project's instances with InstancesClient.AggregatedList, one
// instance a page, as "zone/name".
func aggregatedInstances(ctx context.Context, c *compute.InstancesClient, project string) ([]string, []*computepb.Instance, error) {
	var names []string
	var all []*computepb.Instance
	it := c.AggregatedList(ctx, &computepb.AggregatedListInstancesRequest{Project: project, MaxResults: proto.Uint32(1)})
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return names, all, nil
		}
		if err != nil {
			return nil, nil, err
		}
		for _, in := range pair.Value.GetInstances() {
			if want := "zones/" + lastSegment(in.GetZone()); pair.Key != want {
				return nil, nil, fmt.Errorf("instance %s under key %s, want %s", in.GetName(), pair.Key, want)
			}
			names = append(names, lastSegment(in.GetZone())+"/"+in.GetName())
			all = append(all, in)
		}
	}
}

func TestGCPInstances_aggregatedListWithOfficialClient(t *testing.T) {
	ctx := context.Background()
	_, srv := startGCP(t, instancesWorld(t))
	c, err := compute.NewInstancesRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	names, all, err := aggregatedInstances(ctx, c, "acme-prod")
	if err != nil {
		t.Fatal(err)
	}
	// One a page, by zone then name, whatever order the world declares them in.
	if want := []string{"europe-west1-b/batch", "europe-west1-b/web-1", "europe-west1-c/web-2"}; !slices.Equal(names, want) {
		t.Fatalf("aggregated list: %v, want %v", names, want)
	}
	byName := map[string]*computepb.Instance{}
	for _, in := range all {
		byName[in.GetName()] = in
	}
	web1, web2, batch := byName["web-1"], byName["web-2"], byName["batch"]
	if nets := []string{lastSegment(web1.GetNetworkInterfaces()[0].GetNetwork()), lastSegment(web1.GetNetworkInterfaces()[1].GetNetwork())}; !slices.Equal(nets, []string{"prod", "default"}) {
		t.Errorf("web-1's interfaces are on %v, want prod then default", nets)
	}
	if got := web2.GetServiceAccounts(); len(got) != 1 || got[0].GetEmail() != "web@acme-prod.iam.gserviceaccount.com" {
		t.Errorf("web-2 runs as %v", got)
	}
	if !slices.Equal(web2.GetTags().GetItems(), []string{"web", "http-server"}) || web2.GetStatus() != "RUNNING" {
		t.Errorf("web-2: tags %v, status %s", web2.GetTags().GetItems(), web2.GetStatus())
	}
	// Defaults: the default network, no account, the declared status.
	if n := batch.GetNetworkInterfaces(); len(n) != 1 || !strings.HasSuffix(n[0].GetNetwork(), "/global/networks/default") ||
		len(batch.GetServiceAccounts()) != 0 || batch.GetStatus() != "TERMINATED" {
		t.Errorf("batch: interfaces %v, accounts %v, status %s", n, batch.GetServiceAccounts(), batch.GetStatus())
	}
	if web1.GetId() == 0 || !strings.HasSuffix(web1.GetSelfLink(), "/projects/acme-prod/zones/europe-west1-b/instances/web-1") {
		t.Errorf("web-1: id %d, self link %s", web1.GetId(), web1.GetSelfLink())
	}

	// A filter applies to instances.
	it := c.AggregatedList(ctx, &computepb.AggregatedListInstancesRequest{Project: "acme-prod", Filter: proto.String(`status = "RUNNING"`)})
	running := 0
	for {
		pair, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		running += len(pair.Value.GetInstances())
	}
	if running != 2 {
		t.Errorf("filtered on RUNNING: %d instances, want 2", running)
	}

	// One zone's list.
	var zone []string
	zit := c.List(ctx, &computepb.ListInstancesRequest{Project: "acme-prod", Zone: "europe-west1-b"})
	for {
		in, err := zit.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		zone = append(zone, in.GetName())
	}
	if !slices.Equal(zone, []string{"batch", "web-1"}) {
		t.Errorf("zone europe-west1-b lists %v", zone)
	}

	// A project the caller cannot see is 403, as for firewalls.
	if _, _, err := aggregatedInstances(ctx, c, "nope"); httpCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), "compute.instances.list") {
		t.Errorf("unknown project: %v, want 403 naming compute.instances.list", err)
	}
}

func TestGCPInstances_worldRefusesWhatComputeCannotHold(t *testing.T) {
	for name, inst := range map[string]string{
		"no zone":      `{name: vm}`,
		"bad name":     `{name: Web_1, zone: europe-west1-b}`,
		"two accounts": `{name: vm, zone: europe-west1-b, service_accounts: [a@x.iam.gserviceaccount.com, b@x.iam.gserviceaccount.com]}`,
		"same name twice": `{name: vm, zone: europe-west1-b}
        - {name: vm, zone: europe-west1-b}`,
	} {
		_, err := ParseWorld([]byte(`
gcp:
  projects:
    - id: p
      number: "1"
      instances:
        - ` + inst + "\n"))
		if err == nil || !strings.Contains(err.Error(), "instances[") {
			t.Errorf("%s: %v, want an error naming the instance", name, err)
		}
	}
}

// Every generated project's firewall rules target some instance: the generated rules'
// app tags are all carried, so a generated organisation has no unused rule.
func TestGenerated_gcpInstancesCoverTheRules(t *testing.T) {
	for _, resources := range []int{60, 2000} {
		sim, err := New(&World{GCP: GCP{Generated: &GeneratedProjects{Projects: 1, Resources: resources, Seed: 1}}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := sim.gcpProject("gen-proj-00000")
		if p == nil || len(p.Instances) == 0 {
			t.Fatalf("resources %d: no instances in %+v", resources, p)
		}
		tags := map[string]bool{}
		for _, in := range p.Instances {
			for _, tag := range in.Tags {
				tags[tag] = true
			}
		}
		for _, f := range p.Firewalls {
			for _, tag := range f.TargetTags {
				if !tags[tag] {
					t.Errorf("resources %d: rule %s targets tag %s, which no instance carries", resources, f.Name, tag)
				}
			}
		}
	}
}

// Compute's view of a project says whether it is a Shared VPC host.
func TestGCPComputeProject_sharedVPCHost(t *testing.T) {
	ctx := context.Background()
	w := instancesWorld(t)
	w.GCP.Projects = append(w.GCP.Projects, &Project{ID: "acme-net", Number: "333333333333", SharedVPCHost: true})
	_, srv := startGCP(t, w)
	c, err := compute.NewProjectsRESTClient(ctx, restOpts(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for id, want := range map[string]string{"acme-prod": "UNSPECIFIED_XPN_PROJECT_STATUS", "acme-net": "HOST"} {
		p, err := c.Get(ctx, &computepb.GetProjectRequest{Project: id})
		if err != nil {
			t.Fatal(err)
		}
		if p.GetName() != id || p.GetXpnProjectStatus() != want {
			t.Errorf("%s: name %s, xpnProjectStatus %s, want %s", id, p.GetName(), p.GetXpnProjectStatus(), want)
		}
	}
	if _, err := c.Get(ctx, &computepb.GetProjectRequest{Project: "nope"}); httpCode(err) != http.StatusForbidden {
		t.Errorf("unknown project: %v, want 403", err)
	}
}
