package gcp

import (
	"context"
	"slices"
	"strings"

	compute "cloud.google.com/go/compute/apiv1"
	computepb "cloud.google.com/go/compute/apiv1/computepb"

	"github.com/warden-sec/warden/internal/gcpapi"
)

// Instances are read only to say what each firewall rule applies to (attributes.targets);
// they are not resources of the snapshot: no policy judges an instance itself, and a
// project's fleet would outgrow its firewall rules many times over in every snapshot,
// plan and audit record for nothing a finding uses.

// targetSample is how many instance names a rule's targets name.
const targetSample = 5

// fleet is what the instances of a project are, for firewall rules to select from: the
// instances, or the reason they could not be read (then no rule's targets are known).
type fleet struct {
	instances []*computepb.Instance
	err       string
}

// sharedVPCHost is why a Shared VPC host project's rules have no known targets.
const sharedVPCHost = "the project is a Shared VPC host: its rules also apply to the instances of its service projects, which are not read"

// readFleet lists every instance of a project, in every zone, with the aggregated list (one
// paged read, whatever the number of zones). A Shared VPC host's rules also apply to other
// projects' instances, so its own do not say what they target: the fleet is unknown then,
// and its instances are not read.
func readFleet(ctx context.Context, cl *clients, project string, size uint32) (fleet, error) {
	var proj *computepb.Project
	err := cl.api.Call(ctx, "compute.GetProject", func(ctx context.Context) (err error) {
		proj, err = cl.api.ComputeProjects.Get(ctx, &computepb.GetProjectRequest{Project: project}, gcpapi.NoRetry())
		return err
	})
	if err != nil {
		return fleet{err: err.Error()}, err
	}
	if proj.GetXpnProjectStatus() == "HOST" {
		return fleet{err: sharedVPCHost}, nil
	}
	pairs, err := gcpapi.Pages(ctx, cl.api, "compute.AggregatedListInstances", func(ctx context.Context, token string, items *[]compute.InstancesScopedListPair) (string, error) {
		it := cl.api.Instances.AggregatedList(ctx, &computepb.AggregatedListInstancesRequest{Project: project, MaxResults: &size}, gcpapi.NoRetry())
		return gcpapi.NextPage(it, int(size), token, items)
	})
	if err != nil {
		return fleet{err: err.Error()}, err
	}
	var f fleet
	for _, p := range pairs {
		f.instances = append(f.instances, p.Value.GetInstances()...)
	}
	return f, nil
}

// networkKey is a network's URL from "projects/" on, so that a rule and an instance agree
// on it whichever host or API version their links name, and networks of the same name in
// other projects (a Shared VPC host's) stay apart.
func networkKey(link string) string {
	if i := strings.Index(link, "projects/"); i >= 0 {
		return link[i:]
	}
	return link
}

// targets is a firewall rule's attributes.targets: the instances it applies to, as Compute
// selects them: every instance with an interface on the rule's network, narrowed to those
// carrying one of its target tags, or to those running as one of its target service
// accounts. Stopped instances count: the rule applies again when they start. When the
// instances could not be read, known is false and nothing is claimed.
func (fl fleet) targets(f *computepb.Firewall) map[string]any {
	if fl.err != "" {
		return map[string]any{"known": false, "error": fl.err}
	}
	network := networkKey(f.GetNetwork())
	var names []string
	for _, in := range fl.instances {
		if !slices.ContainsFunc(in.GetNetworkInterfaces(), func(n *computepb.NetworkInterface) bool { return networkKey(n.GetNetwork()) == network }) {
			continue
		}
		if tags := f.GetTargetTags(); len(tags) > 0 && !slices.ContainsFunc(in.GetTags().GetItems(), func(t string) bool { return slices.Contains(tags, t) }) {
			continue
		}
		if sas := f.GetTargetServiceAccounts(); len(sas) > 0 && !slices.ContainsFunc(in.GetServiceAccounts(), func(sa *computepb.ServiceAccount) bool { return slices.Contains(sas, sa.GetEmail()) }) {
			continue
		}
		names = append(names, in.GetName())
	}
	n := len(names)
	slices.Sort(names)
	names = slices.Compact(names) // the same name in two zones is named once
	sample := []any{}
	for _, name := range names[:min(targetSample, len(names))] {
		sample = append(sample, name)
	}
	return map[string]any{"known": true, "instances": n, "sample": sample}
}
