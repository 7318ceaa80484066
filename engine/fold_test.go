package engine_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/snapshot"
)

// A rule that reads no input is folded into its value; one that fails when folded stays a
// rule, and fails on each resource as it did, with the same error either way.
func TestFold_sameResultsAsEvaluation(t *testing.T) {
	tests := []struct {
		name, rules string
		want        string // finding messages, or "error"
	}{
		{"constant set", `ports := {p | some p in [22, 3389]; p > 0}

deny contains sprintf("%s: %d ports", [input.resource.name, count(ports)]) if count(ports) > 1`, "g: 2 ports"},
		{"setting with a default", `limit := n if {
	n := data.warden.config.fold_limit
} else := 7

deny contains sprintf("%s: limit %d", [input.resource.name, limit]) if limit > 5`, "g: limit 7"},
		{"undefined constant", `missing := data.warden.config.nothing.here

deny contains "found" if missing`, ""},
		{"failing constant", `bad := to_number("not a number")

deny contains "found" if bad > 1`, "error"},
	}
	res := []snapshot.Resource{{UID: "sg-1", Type: "aws.ec2.security_group", Name: "g", Account: "1", Region: "r", Scope: "aws/1/ec2/r", Attributes: map[string]any{"description": "x"}}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"p.rego": {Data: []byte(`# METADATA
# title: Fold probe
# custom:
#   id: ACME-FOLD-1
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   remediation: {action: notify, risk: none}
package acme.fold_probe

` + tc.rules + "\n")}}
			for _, baseline := range []bool{true, false} {
				e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: fsys}}, Baseline: baseline})
				if err != nil {
					t.Fatal(err)
				}
				r, err := e.Evaluate(context.Background(), snapshot.Header{CollectedAt: benchNow}, benchNow, res)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range r.Findings {
					got = append(got, f.Message)
				}
				for range r.EvalErrors {
					got = append(got, "error")
				}
				if strings.Join(got, "|") != tc.want {
					t.Errorf("baseline=%v: got %q, want %q", baseline, got, tc.want)
				}
			}
		})
	}
}
