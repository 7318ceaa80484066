package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const acmeWorld = "../../fixtures/acme/world.yaml"

type finding struct {
	Policy, Resource, Fingerprint, Status, Message string
}

func scanFindings(t *testing.T, args ...string) []finding {
	t.Helper()
	code, out, stderr := warden(t, "", append([]string{"scan", "--no-db", "--format", "json", "--no-progress"}, args...)...)
	if code != 1 {
		t.Fatalf("warden scan %v: exit %d, stderr %s", args, code, stderr)
	}
	var rep struct {
		Findings []finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Findings
}

// TestAcmeWorldThroughSimulator collects the acme world through the simulator with the
// real AWS and Google clients and checks that it scans to the findings of the
// hand-written snapshot (TLS endpoints aside: the simulator serves none).
func TestAcmeWorldThroughSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("collects a whole organisation")
	}
	// The hand-written snapshot was collected at this time; ages are measured from it.
	const at = "2026-11-30T12:00:00Z"
	want := scanFindings(t, "--snapshot", acme)
	got := scanFindings(t, "--sim", acmeWorld, "--now", at)
	key := func(f finding) string { return f.Policy + " " + f.Resource + " " + f.Fingerprint + " " + f.Status }
	var wk, gk []string
	for _, f := range want {
		if !strings.HasPrefix(f.Resource, "tls://") {
			wk = append(wk, key(f))
		}
	}
	for _, f := range got {
		gk = append(gk, key(f))
	}
	slices.Sort(wk)
	slices.Sort(gk)
	for _, k := range wk {
		if _, ok := slices.BinarySearch(gk, k); !ok {
			t.Errorf("missing through the simulator: %s", k)
		}
	}
	for _, k := range gk {
		if _, ok := slices.BinarySearch(wk, k); !ok {
			t.Errorf("extra through the simulator: %s", k)
		}
	}
	t.Logf("%d findings both ways", len(gk))
}
