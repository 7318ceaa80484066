package collect_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/warden-sec/warden/collect"
)

// Collect a simulated world: resolve the targets into collectors, then run them into a
// snapshot (here discarded; a file or a scan in practice).
func ExampleRun() {
	sim, err := collect.StartSimulator("testdata/world.yaml", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sim.Close()
	cs, err := collect.Resolve(sim.Target(collect.Targets{}), nil)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := collect.Run(context.Background(), io.Discard, cs, collect.Options{Source: "example"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d resources in %d scopes, %d incomplete\n", sum.Resources, sum.Scopes, sum.Incomplete)
	// Output: 5 resources in 5 scopes, 0 incomplete
}
