package gcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
)

// ExampleCollector_Read reads one firewall rule again by its uid, then one that is gone.
func ExampleCollector_Read() {
	w := &cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{{ID: "acme-prod", Number: "111111111111",
		Networks: []*cloudsim.Network{{Name: "default"}},
		Firewalls: []*cloudsim.Firewall{{Name: "allow-ssh", Network: "default", SourceRanges: []string{"0.0.0.0/0"},
			Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}}}}}}}
	sim, err := cloudsim.New(w, cloudsim.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	c := gcp.New(gcp.Config{Projects: []string{"acme-prod"}, Endpoint: srv.URL})
	defer c.Close() // the clients Read made
	ctx := context.Background()
	fw, err := c.Read(ctx, "//compute.googleapis.com/projects/acme-prod/global/firewalls/allow-ssh")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fw.Type, fw.Scope, fw.Attributes["source_ranges"])
	_, err = c.Read(ctx, "//compute.googleapis.com/projects/acme-prod/global/firewalls/allow-rdp")
	fmt.Println(errors.Is(err, collectors.ErrNotFound))
	// Output:
	// gcp.compute.firewall gcp/acme-prod/compute [0.0.0.0/0]
	// true
}
