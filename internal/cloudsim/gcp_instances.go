package cloudsim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"
)

// instanceRoutes serves the reads of Compute Engine VM instances: the project-wide
// aggregated list (every zone at once, as warden reads them) and one zone's list, and the
// Compute project, which says whether other projects' instances share its networks.
func (s *Sim) instanceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /compute/v1/projects/{project}/aggregated/instances", s.aggregatedListInstances)
	mux.HandleFunc("GET /compute/v1/projects/{project}/zones/{zone}/instances", s.listZoneInstances)
	mux.HandleFunc("GET /compute/v1/projects/{project}", s.getComputeProject)
}

// getComputeProject answers projects.get of Compute: the project's id, name and whether it
// is a Shared VPC host (xpnProjectStatus).
func (s *Sim) getComputeProject(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "GetProject", "compute.projects.get", func(p *Project) (any, error) {
		xpn := "UNSPECIFIED_XPN_PROJECT_STATUS"
		if p.SharedVPCHost {
			xpn = "HOST"
		}
		return &computepb.Project{Kind: proto.String("compute#project"), Id: idOf(p.Number), Name: proto.String(p.ID),
			DefaultNetworkTier: proto.String("PREMIUM"), XpnProjectStatus: proto.String(xpn),
			SelfLink: proto.String(computeBase + p.ID)}, nil
	})
}

// validateInstances refuses instances Compute could not hold: a name that is not RFC 1035,
// no zone, the same name twice in a zone, or more than one service account.
func validateInstances(p *Project) error {
	seen := map[string]bool{}
	for i, in := range p.Instances {
		if !namePattern.MatchString(in.Name) {
			return fmt.Errorf("instances[%d].name: %q is not a Compute resource name (lower-case letters, digits and dashes)", i, in.Name)
		}
		if in.Zone == "" {
			return fmt.Errorf("instances[%d] (%s).zone: empty; give a zone such as europe-west1-b", i, in.Name)
		}
		if seen[in.Zone+"/"+in.Name] {
			return fmt.Errorf("instances[%d]: %s appears twice in zone %s", i, in.Name, in.Zone)
		}
		seen[in.Zone+"/"+in.Name] = true
		if len(in.ServiceAccounts) > 1 {
			return fmt.Errorf("instances[%d] (%s).service_accounts: an instance runs as at most one service account", i, in.Name)
		}
	}
	return nil
}

// zoneLink is the URL of a zone, as instances name theirs.
func zoneLink(p *Project, zone string) string { return computeBase + p.ID + "/zones/" + zone }

// regionOf is the region of a zone: "europe-west1" for "europe-west1-b".
func regionOf(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}

// instanceProto answers an instance as Compute does: one network interface per network
// (nic0 first, on the region's subnetwork of that name, as auto-mode networks have),
// its tags with their fingerprint, and the service account it runs as.
func instanceProto(p *Project, in *Instance) *computepb.Instance {
	out := &computepb.Instance{
		Kind: proto.String("compute#instance"), Id: idOf(in.ID), Name: proto.String(in.Name),
		Zone:        proto.String(zoneLink(p, in.Zone)),
		MachineType: proto.String(zoneLink(p, in.Zone) + "/machineTypes/e2-medium"),
		Status:      proto.String(in.Status),
		Tags: &computepb.Tags{Items: slices.Clone(in.Tags),
			Fingerprint: proto.String(numericID(p.ID+"/tags/"+strings.Join(in.Tags, ","), 12))},
		SelfLink: proto.String(zoneLink(p, in.Zone) + "/instances/" + in.Name),
	}
	for i, n := range in.Networks {
		out.NetworkInterfaces = append(out.NetworkInterfaces, &computepb.NetworkInterface{
			Kind: proto.String("compute#networkInterface"), Name: proto.String(fmt.Sprintf("nic%d", i)),
			Network:    proto.String(selfLink(p, "networks", n)),
			Subnetwork: proto.String(computeBase + p.ID + "/regions/" + regionOf(in.Zone) + "/subnetworks/" + n),
			NetworkIP:  proto.String(fmt.Sprintf("10.%d.0.%d", 128+i, 2+len(in.Name)%250)),
		})
	}
	for _, sa := range in.ServiceAccounts {
		out.ServiceAccounts = append(out.ServiceAccounts, &computepb.ServiceAccount{Email: proto.String(sa),
			Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	}
	return out
}

// sortedInstances are the project's instances in the order lists give them: by zone, then
// by name, so that pages do not depend on the order the world declares them in.
func sortedInstances(p *Project) []*computepb.Instance {
	ins := slices.Clone(p.Instances)
	slices.SortFunc(ins, func(a, b *Instance) int { return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.Name, b.Name)) })
	out := make([]*computepb.Instance, 0, len(ins))
	for _, in := range ins {
		out = append(out, instanceProto(p, in))
	}
	return out
}

// aggregatedListInstances answers instances.aggregatedList: the page's instances grouped
// by "zones/Z" keys. maxResults counts instances, so a zone's instances may span pages;
// only zones with instances on the page are keyed (Compute also keys empty zones, with a
// NO_RESULTS_ON_PAGE warning, which clients skip).
func (s *Sim) aggregatedListInstances(w http.ResponseWriter, r *http.Request) {
	s.serveCompute(w, r, "AggregatedListInstances", "compute.instances.list", func(p *Project) (any, error) {
		page, next, err := listPage(sortedInstances(p), r.URL.Query())
		if err != nil {
			return nil, err
		}
		items := map[string]*computepb.InstancesScopedList{}
		for _, in := range page {
			key := "zones/" + lastSegment(in.GetZone())
			if items[key] == nil {
				items[key] = &computepb.InstancesScopedList{}
			}
			items[key].Instances = append(items[key].Instances, in)
		}
		out := &computepb.InstanceAggregatedList{Kind: proto.String("compute#instanceAggregatedList"),
			Id: proto.String("projects/" + p.ID + "/aggregated/instances"), Items: items,
			SelfLink: proto.String(computeBase + p.ID + "/aggregated/instances")}
		if next != "" {
			out.NextPageToken = proto.String(next)
		}
		return out, nil
	})
}

// listZoneInstances answers instances.list for one zone; a zone without instances lists
// none.
func (s *Sim) listZoneInstances(w http.ResponseWriter, r *http.Request) {
	zone := r.PathValue("zone")
	s.serveCompute(w, r, "ListInstances", "compute.instances.list", func(p *Project) (any, error) {
		all := sortedInstances(p)
		all = slices.DeleteFunc(all, func(in *computepb.Instance) bool { return lastSegment(in.GetZone()) != zone })
		page, next, err := listPage(all, r.URL.Query())
		if err != nil {
			return nil, err
		}
		out := &computepb.InstanceList{Kind: proto.String("compute#instanceList"), Items: page,
			Id: proto.String("projects/" + p.ID + "/zones/" + zone + "/instances"), SelfLink: proto.String(zoneLink(p, zone) + "/instances")}
		if next != "" {
			out.NextPageToken = proto.String(next)
		}
		return out, nil
	})
}
