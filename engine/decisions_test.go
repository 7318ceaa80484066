package engine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/snapshot"
)

var update = flag.Bool("update", false, "rewrite the decisions under testdata/")

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

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./engine -run TestDecisions -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := at(gl, i), at(wl, i)
			if g != w {
				t.Fatalf("%s: decisions changed at line %d:\n got: %s\nwant: %s\n(an intended change of the pack: go test ./engine -run TestDecisions -update)", path, i+1, g, w)
			}
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
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
	golden(t, "testdata/acme.decisions", decisions(t, res))
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
	golden(t, "testdata/synth-20000-seed1.decisions", fmt.Appendf(nil, "%d findings sha256:%s\n", len(res.Findings), hex.EncodeToString(sum[:])))
}
