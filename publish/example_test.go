package publish_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/publish"
	"github.com/warden-sec/warden/store"
)

// printSink is a place that prints what it is sent, and accepts it.
type printSink struct{}

func (printSink) Name() string                 { return "print" }
func (printSink) Wants(*findings.Finding) bool { return true }
func (printSink) BatchSize() int               { return 100 }
func (printSink) Send(_ context.Context, batch []publish.Item) (map[string]string, error) {
	for _, it := range batch {
		fmt.Printf("  %s %s: %s\n", it.Finding.Policy, it.Finding.Resource, it.Finding.Status)
	}
	return nil, nil
}

// Run sends a sink what changed since it last accepted it: everything the first time,
// nothing when nothing changed, and a finding no longer held, resolved.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "publish")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	item := func(user string) publish.Item {
		res := "arn:aws:iam::111111111111:user/" + user
		return publish.Item{Finding: findings.Finding{Policy: "WARDEN-AWS-IAM-010", Resource: res, ResourceType: "aws.iam.user",
			Fingerprint: findings.Fingerprint("WARDEN-AWS-IAM-010", "111111111111", res, ""), Status: findings.StatusOpen}}
	}
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for i, items := range [][]publish.Item{{item("alice"), item("bob")}, {item("alice"), item("bob")}, {item("alice")}} {
		fmt.Printf("run %d:\n", i+1)
		res, err := publish.Run(ctx, st, printSink{}, items, now.Add(time.Duration(i)*time.Minute))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("  %d sent, %d unchanged, %d batches\n", res.Sent, res.Unchanged, res.Batches)
	}
	// Output:
	// run 1:
	//   WARDEN-AWS-IAM-010 arn:aws:iam::111111111111:user/alice: open
	//   WARDEN-AWS-IAM-010 arn:aws:iam::111111111111:user/bob: open
	//   2 sent, 0 unchanged, 1 batches
	// run 2:
	//   0 sent, 2 unchanged, 0 batches
	// run 3:
	//   WARDEN-AWS-IAM-010 arn:aws:iam::111111111111:user/bob: resolved
	//   1 sent, 1 unchanged, 1 batches
}
