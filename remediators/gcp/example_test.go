package gcp_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediators"
	gcpfix "github.com/warden-sec/warden/remediators/gcp"
	"github.com/warden-sec/warden/snapshot"
)

// Removing one member of one binding leaves the rest of the policy as it was.
func ExampleRemoveBindingMember() {
	sim, _ := cloudsim.New(&cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{{ID: "acme-prod", Number: "1",
		IAMPolicy: cloudsim.IAMPolicy{Bindings: []cloudsim.Binding{{Role: "roles/editor", Members: []string{"user:bob@gmail.com", "user:carol@acme.example"}}}}}}}},
		cloudsim.Options{})
	srv, _ := sim.Listen("127.0.0.1:0")
	defer srv.Close()
	ctx := context.Background()
	clients, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: srv.URL})
	if err != nil {
		panic(err)
	}
	defer clients.Close()
	fix := gcpfix.NewRemoveBindingMember(clients)
	policy := snapshot.Resource{UID: "//cloudresourcemanager.googleapis.com/projects/acme-prod", Type: "gcp.project.iam_policy", Account: "acme-prod",
		Attributes: map[string]any{"bindings": []any{map[string]any{"role": "roles/editor", "members": []any{"user:bob@gmail.com", "user:carol@acme.example"}}}}}
	params := map[string]any{"role": "roles/editor", "member": "user:bob@gmail.com"}
	targets, _ := fix.Targets(policy, params)
	a := remediators.Action{Remediator: fix.Spec().Action, Target: policy.UID, Account: "acme-prod", Part: targets[0].Part, Params: params, Before: targets[0].Before}

	fmt.Println(targets[0].Part)
	fmt.Println("apply:", fix.Apply(ctx, a))
	fmt.Println("again converged:", errors.Is(fix.Apply(ctx, a), remediators.ErrConverged))
	sim.Do(func(w *cloudsim.World) { fmt.Println(w.GCP.Projects[0].IAMPolicy.Bindings[0].Members) })
	// Output:
	// roles/editor/user:bob@gmail.com
	// apply: <nil>
	// again converged: true
	// [user:carol@acme.example]
}
