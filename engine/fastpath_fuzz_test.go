package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// FuzzFastPathMatchesTopdown evaluates one resource, any the snapshot reader accepts, with
// topdown alone and with the fast path (folded constants, memo, irvm), and wants the same
// findings and the same failing policies. The seeds are the acme organisation's resources
// and usagePrincipals.
//
//	go test ./engine -run XXX -fuzz FuzzFastPathMatchesTopdown -fuzztime 2m
func FuzzFastPathMatchesTopdown(f *testing.F) {
	b, err := os.ReadFile("../fixtures/acme/snapshot.json")
	if err != nil {
		f.Fatal(err)
	}
	var snap struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		f.Fatal(err)
	}
	for _, r := range snap.Resources {
		f.Add([]byte(r))
	}
	// Principals with IAM's last-accessed data (usage_test.go), which acme does not carry.
	var usage []json.RawMessage
	if err := json.Unmarshal([]byte(usagePrincipals), &usage); err != nil {
		f.Fatal(err)
	}
	for _, r := range usage {
		f.Add([]byte(r))
	}
	var engines [2]*engine.Engine
	for i, baseline := range []bool{true, false} {
		e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Baseline: baseline, Workers: 1})
		if err != nil {
			f.Fatal(err)
		}
		engines[i] = e
	}
	f.Fuzz(func(t *testing.T, resource []byte) {
		doc := []byte(`{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [` + string(resource) + `]}`)
		h, rs, err := snapshot.ReadAll(bytes.NewReader(doc), "fuzz")
		if err != nil || len(rs) != 1 {
			return
		}
		var got [2]string
		for i, e := range engines {
			res, err := e.Evaluate(context.Background(), h, h.CollectedAt, rs)
			if err != nil {
				t.Fatalf("evaluate: %v", err)
			}
			var lines []string
			for _, f := range res.Findings {
				lines = append(lines, line(f))
			}
			for _, ee := range res.EvalErrors {
				lines = append(lines, "error\t"+ee.Policy)
			}
			slices.Sort(lines)
			got[i] = strings.Join(lines, "\n")
		}
		if got[0] != got[1] {
			t.Errorf("topdown:\n%s\nfast path:\n%s", got[0], got[1])
		}
	})
}
