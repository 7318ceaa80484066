package reconcile_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// A scope read four times: the first read opens the finding of a security group that
// lets the world in on SSH, a read that fails makes it unknown (a failed read resolves
// nothing), a read after the rule was narrowed resolves it, and the same read again
// evaluates nothing, since nothing changed.
func ExampleReconciler_Observe() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "warden-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		log.Fatal(err)
	}
	r := reconcile.New(reconcile.Options{Store: st, Log: audit.New(st, audit.Options{}), Engine: eng})

	const account = "111111111111"
	scope := snapshot.Scope{ID: "aws/" + account + "/ec2/eu-west-1", Provider: "aws", Account: account,
		Service: "ec2", Region: "eu-west-1", Status: snapshot.ScopeOK}
	group := func(cidr string) snapshot.Resource {
		arn := "arn:aws:ec2:eu-west-1:" + account + ":security-group/sg-1"
		return snapshot.Resource{UID: arn, Type: "aws.ec2.security_group", Name: "bastion", Account: account, Region: "eu-west-1",
			Attributes: map[string]any{"group_id": "sg-1", "group_name": "bastion", "vpc_id": "vpc-1", "is_default": false,
				"ingress": []any{map[string]any{"id": arn + "#ingress/tcp/22-22/" + cidr, "direction": "ingress",
					"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr": cidr}},
				"egress": []any{}}}
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	observe := func(sc snapshot.Scope, rs ...snapshot.Resource) {
		out, err := r.Observe(ctx, reconcile.Observation{Scope: sc, Resources: rs, Accounts: []string{account}, At: at})
		if err != nil {
			log.Fatal(err)
		}
		at = at.Add(time.Hour)
		fmt.Printf("%s read: %d resources, %d evaluated, %d opened, %d unknown, %d resolved\n",
			out.Status, out.Resources, out.Evaluated, len(out.Opened), out.Unknown, len(out.Resolved))
		for _, f := range out.Opened {
			fmt.Println("  opened", f.Policy)
		}
		for _, fs := range out.Resolved {
			fmt.Println("  resolved", fs.Finding.Policy)
		}
	}

	observe(scope, group("0.0.0.0/0"))
	failed := scope
	failed.Status, failed.Error = snapshot.ScopeFailed, "throttled"
	observe(failed)
	observe(scope, group("203.0.113.0/24"))
	observe(scope, group("203.0.113.0/24"))
	// Output:
	// ok read: 1 resources, 1 evaluated, 1 opened, 0 unknown, 0 resolved
	//   opened WARDEN-AWS-NET-001
	// failed read: 0 resources, 0 evaluated, 0 opened, 1 unknown, 0 resolved
	// ok read: 1 resources, 1 evaluated, 0 opened, 0 unknown, 1 resolved
	//   resolved WARDEN-AWS-NET-001
	// ok read: 1 resources, 0 evaluated, 0 opened, 0 unknown, 0 resolved
}
