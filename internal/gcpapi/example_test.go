package gcpapi_test

import (
	"context"
	"fmt"
	"log"

	computepb "cloud.google.com/go/compute/apiv1/computepb"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/gcpapi"
)

// Example reads a firewall rule that does not exist through Call, against the
// simulator: the answer is "not found", and the call was counted in its project's scope.
func Example() {
	sim, err := cloudsim.New(&cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{{ID: "acme-prod", Number: "111111111111"}}}}, cloudsim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	clients, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: srv.URL})
	if err != nil {
		log.Fatal(err)
	}
	defer clients.Close()
	var calls gcpapi.Counter
	ctx = gcpapi.WithScope(ctx, gcpapi.Scope{Project: "acme-prod", Counter: &calls})
	err = clients.Call(ctx, "compute.GetFirewall", func(ctx context.Context) error {
		_, err := clients.Firewalls.Get(ctx, &computepb.GetFirewallRequest{Project: "acme-prod", Firewall: "allow-ssh"}, gcpapi.NoRetry())
		return err
	})
	fmt.Println(gcpapi.IsNotFound(err), gcpapi.IsDenied(err), calls.Calls())
	// Output: true false 1
}
