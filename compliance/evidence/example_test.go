package evidence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

func ExampleGather() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "warden-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()

	// One scan in the history, as warden scan records it: the root user has an access
	// key; the EC2 scope of eu-west-1 could not be read.
	finished := time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC)
	sum, _ := json.Marshal(scan.Summary{ResourcesByType: map[string]int{"aws.iam.root_user": 1, "aws.ec2.security_group": 3}})
	root := findings.Finding{Policy: "WARDEN-AWS-IAM-011", Severity: findings.Critical, Resource: "arn:aws:iam::111111111111:root",
		ResourceType: "aws.iam.root_user", Account: "111111111111", Scope: "aws/111111111111/iam", Fingerprint: "f1",
		Message: "the root user has an active access key", Status: findings.StatusOpen}
	scopes := map[string]string{"aws/111111111111/iam": "ok", "aws/111111111111/ec2/us-east-1": "ok", "aws/111111111111/ec2/eu-west-1": "failed"}
	if _, _, err := st.SaveScan(ctx, &store.ScanRecord{StartedAt: finished.Add(-time.Minute), FinishedAt: finished, Snapshot: "snap.json",
		CollectedAt: finished.Add(-5 * time.Minute), Resources: 4, Policies: 4, Scopes: scopes, Summary: sum},
		[]findings.Finding{root}, func(s string) bool { return scopes[s] == "ok" }, nil); err != nil {
		panic(err)
	}

	fw, err := compliance.Lookup("cis-aws-3.0")
	if err != nil {
		panic(err)
	}
	// The policies the history was scanned with: usually engine.Engine.Policies().
	pack := []*engine.Policy{
		{ID: "WARDEN-AWS-IAM-011", ResourceTypes: []string{"aws.iam.root_user"}},
		{ID: "WARDEN-AWS-NET-001", ResourceTypes: []string{"aws.ec2.security_group"}},
		{ID: "WARDEN-AWS-NET-002", ResourceTypes: []string{"aws.ec2.security_group"}},
		{ID: "WARDEN-AWS-NET-003", ResourceTypes: []string{"aws.ec2.security_group"}},
	}
	doc, err := evidence.Gather(ctx, st, audit.New(st, audit.Options{}), fw, evidence.Options{
		At: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Policies: pack, Tool: "warden example"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("scan %d of %s, collected %s\n", doc.Source.ScanID, doc.Source.Snapshot, doc.Source.CollectedAt.Format(time.RFC3339))
	for _, c := range doc.Report.Controls {
		if c.ID == "1.4" || c.ID == "5.2" {
			fmt.Printf("%s %s: %s\n", c.ID, c.Status, c.Reason)
		}
	}
	fmt.Printf("first scope: %s (%s); checkpoint: %v; trend: %d point(s)\n", doc.Scopes[0].ID, doc.Scopes[0].Status, doc.Checkpoint, len(doc.Trend))
	// Output:
	// scan 1 of snap.json, collected 2026-11-30T12:00:00Z
	// 1.4 fail: 1 open finding of WARDEN-AWS-IAM-011 on 1 resource
	// 5.2 unknown: WARDEN-AWS-NET-001 could not judge everything (scopes not read: aws/111111111111/ec2/eu-west-1); WARDEN-AWS-NET-002 could not judge everything (scopes not read: aws/111111111111/ec2/eu-west-1); WARDEN-AWS-NET-003 could not judge everything (scopes not read: aws/111111111111/ec2/eu-west-1)
	// first scope: aws/111111111111/ec2/eu-west-1 (failed); checkpoint: <nil>; trend: 1 point(s)
}
