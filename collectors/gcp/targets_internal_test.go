package gcp

import (
	"testing"

	computepb "cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/protobuf/proto"
)

// A rule and an instance meet on the same network of the same project, whichever host or
// API version their links name; a Shared VPC host's network of the same name is another.
func TestFleetTargets_networkOfTheSameProjectOnly(t *testing.T) {
	vm := func(name, network string) *computepb.Instance {
		return &computepb.Instance{Name: proto.String(name), NetworkInterfaces: []*computepb.NetworkInterface{{Network: proto.String(network)}}}
	}
	fl := fleet{instances: []*computepb.Instance{
		vm("a", "https://www.googleapis.com/compute/v1/projects/p/global/networks/prod"),
		vm("b", "https://compute.googleapis.com/compute/beta/projects/p/global/networks/prod"),
		vm("c", "https://www.googleapis.com/compute/v1/projects/host/global/networks/prod"),
	}}
	rule := &computepb.Firewall{Network: proto.String("https://www.googleapis.com/compute/v1/projects/p/global/networks/prod")}
	got := fl.targets(rule)
	if got["instances"] != 2 || len(got["sample"].([]any)) != 2 {
		t.Errorf("targets %v, want a and b", got)
	}
	if got := (fleet{err: "denied"}).targets(rule); got["known"] != false || got["error"] != "denied" || got["instances"] != nil {
		t.Errorf("unread fleet: targets %v, want unknown", got)
	}
}
