package scan_test

import (
	"context"
	"fmt"
	"log"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/scan"
)

// Scan the acme example organisation's snapshot with the built-in policies, and decide
// the exit code as `warden scan --fail-on critical` would.
func ExampleRun() {
	ctx := context.Background()
	eng, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		log.Fatal(err)
	}
	res, err := scan.Run(ctx, scan.Request{Source: scan.File("../fixtures/acme/snapshot.json"), Engine: eng})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d open findings (%d critical) on %d resources; %d scope unread\n",
		res.Summary.Findings, res.Summary.BySeverity["critical"], res.Summary.Resources, res.Summary.IncompleteScopes)
	fmt.Println("exit", res.ExitCode(findings.Critical))
	// Output:
	// 280 open findings (18 critical) on 281 resources; 1 scope unread
	// exit 1
}
