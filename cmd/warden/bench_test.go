package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// childWarden makes the bench's full passes children of the test binary
// (TestHelperProcess), which stands in for warden; swap, when set, changes the
// arguments of a pass first.
func childWarden(t *testing.T, swap func(args []string) []string) {
	t.Helper()
	old := wardenCommand
	t.Cleanup(func() { wardenCommand = old })
	wardenCommand = func(ctx context.Context, args ...string) (*exec.Cmd, error) {
		if swap != nil {
			args = swap(slices.Clone(args))
		}
		c := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
		c.Env = append(os.Environ(), "WARDEN_HELPER_PROCESS=1")
		return c, nil
	}
}

// Both synthetic snapshots, measured side by side: the naive sample, today's engine,
// the new one and the changed resources for each, and the decisions of both passes.
// The memo does not exist yet, so the two passes decide the same.
func TestBench_realisticAndNoRepetitionSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("four scans of 3,000 resources")
	}
	childWarden(t, nil)
	code, out, stderr := warden(t, "", "bench", "--resources", "3000", "--naive-sample", "200", "--changed", "50")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, label := range []string{"realistic", "none"} {
		for _, want := range []string{
			"- snapshot " + label + ": 3000 synthetic resources (seed 1, --repetition " + label,
			"| " + label + " | naive: ",
			"| " + label + " | today's engine (`warden scan --baseline`, ",
			"| " + label + " | new engine (`warden scan`, ",
			"| " + label + " | re-evaluate changed resources (new engine, in memory) | 50 |",
			"| " + label + " | ",
			"- " + label + ": decisions identical: ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if !regexp.MustCompile(`\| ` + label + ` \| today's engine [^|]*\| 3000 \|`).MatchString(out) {
			t.Errorf("%s: today's engine did not read 3000 resources:\n%s", label, out)
		}
	}
	// The none mode changes no decision, only what repeats: as many findings either way.
	counts := regexp.MustCompile(`decisions identical: (\d+) findings, sha256:[0-9a-f]{64}`).FindAllStringSubmatch(out, -1)
	if len(counts) != 2 || counts[0][1] != counts[1][1] || counts[0][1] == "0" {
		t.Errorf("decisions lines %q: want two with the same, non-zero, count", counts)
	}
	if strings.Contains(out, "WARNING") {
		t.Errorf("naive and the engine disagree:\n%s", out)
	}
}

// A difference between the two passes is loud: the first differing findings, and exit 2.
// Here today's pass is given a snapshot without acme's first resource.
func TestBench_decisionsDifferFailsTheRun(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(acme)
	if err != nil {
		t.Fatal(err)
	}
	// acme has one resource a line, the first on line 3.
	lines := strings.Split(string(data), "\n")
	var first struct{ UID string }
	if err := json.Unmarshal([]byte(strings.TrimSuffix(lines[2], ",")), &first); err != nil {
		t.Fatal(err)
	}
	other := write(t, dir, "fewer.json", strings.Join(slices.Delete(lines, 2, 3), "\n"))
	childWarden(t, func(args []string) []string {
		if slices.Contains(args, "--baseline") {
			args[slices.Index(args, "--snapshot")+1] = other
		}
		return args
	})
	code, out, stderr := warden(t, "", "bench", "--snapshot", acme, "--naive-sample", "0", "--changed", "5")
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	for _, want := range []string{"| snapshot.json | naive: not measured (--naive-sample 0) |", "| snapshot.json | new engine (`warden scan`, ", "**snapshot.json: DECISIONS DIFFER**: today's engine ", "  - only new: `"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, first.UID) {
		t.Errorf("the differing findings do not name %s:\n%s", first.UID, out)
	}
	if !strings.Contains(stderr, "the new engine decided differently from today's on snapshot.json") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestSynth_repetitionFlag(t *testing.T) {
	tests := []struct {
		name, repetition string
		code             int
		want             string // in stdout, or in stderr when code is not 0
	}{
		{"realistic", "realistic", 0, `"source":"warden synth --resources 50 --seed 1 --repetition realistic"`},
		{"none", "none", 0, `"source":"warden synth --resources 50 --seed 1 --repetition none"`},
		{"unknown", "some", 2, `--repetition: unknown repetition "some": want realistic or none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := warden(t, "", "synth", "--resources", "50", "--repetition", tt.repetition)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			got := out
			if code != 0 {
				got = stderr
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("output lacks %q: %.300s", tt.want, got)
			}
		})
	}
}
