package engine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/golden"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/snapshot"
)

// accept rewrites the decisions after an intended change of the pack.
const accept = "go test ./engine -run TestDecisions -update"

// decisions are a result's findings as sorted lines "policy resource fingerprint
// message": what an evaluation decided, whatever the engine's inside. A change that
// makes evaluation faster must leave them as they are.
func decisions(t *testing.T, res *engine.Result) []byte {
	t.Helper()
	if len(res.EvalErrors) > 0 {
		t.Fatalf("eval errors: %+v", res.EvalErrors)
	}
	lines := make([]string, 0, len(res.Findings))
	for _, f := range res.Findings {
		lines = append(lines, line(f))
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, "\n") + "\n")
}

func line(f findings.Finding) string {
	return strings.Join([]string{f.Policy, f.Resource, f.Fingerprint, f.Message}, "\t")
}

// The acme organisation's findings, every fingerprint and message, as committed.
func TestDecisions_acme(t *testing.T) {
	f, err := os.Open("../fixtures/acme/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := builtin(t, 2).Scan(context.Background(), snapshot.NewReader(f, "acme"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/acme.decisions", decisions(t, res), accept)
}

// A synthetic snapshot's findings, as a count and a digest (the lines themselves would
// be megabytes): 20,000 resources of the generator's mix, seed 1.
func TestDecisions_synthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates 20,000 resources")
	}
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Resources: 20000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := builtin(t, 2).Scan(context.Background(), snapshot.NewReader(&buf, "synth"), engine.Options{Now: benchNow})
	if err != nil {
		t.Fatal(err)
	}
	d := decisions(t, res)
	sum := sha256.Sum256(d)
	golden.Check(t, "testdata/synth-20000-seed1.decisions", fmt.Appendf(nil, "%d findings sha256:%s\n", len(res.Findings), hex.EncodeToString(sum[:])), accept)
}
