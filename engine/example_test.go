package engine_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// Scan a snapshot with the built-in pack.
func ExampleEngine_Scan() {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		panic(err)
	}
	snap := `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [
	{"uid": "arn:aws:iam::111111111111:root", "type": "aws.iam.root_user", "name": "root", "account": "111111111111",
	 "region": "global", "attributes": {"mfa_active": false, "access_keys_active": 0}}]}`
	res, err := e.Scan(ctx, snapshot.NewReader(strings.NewReader(snap), "example.json"), engine.Options{})
	if err != nil {
		panic(err)
	}
	for _, f := range res.Findings {
		fmt.Println(f.Severity, f.Policy, f.Resource)
	}
	// Output: critical WARDEN-AWS-IAM-012 arn:aws:iam::111111111111:root
}

// Re-evaluate only the resources that changed, as the daemon does.
func ExampleEngine_Evaluate() {
	ctx := context.Background()
	e, _ := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	changed := []snapshot.Resource{{
		UID: "arn:aws:iam::111111111111:user/alice/accesskey/AKIAEXAMPLE", Type: "aws.iam.access_key", Account: "111111111111", Region: "global",
		Attributes: map[string]any{"access_key_id": "AKIAEXAMPLE", "user_name": "alice", "status": "Active",
			"created": "2026-01-05T09:00:00Z", "last_used": "2026-11-29T08:00:00Z"},
	}}
	res, _ := e.Evaluate(ctx, snapshot.Header{}, now, changed)
	for _, f := range res.Findings {
		fmt.Println(f.Policy, f.Remediation.Action)
	}
	// Output: WARDEN-AWS-IAM-008 aws.iam.rotate_access_key
}
