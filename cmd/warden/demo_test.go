package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
)

// demoNow is when the demo's tests judge acme: its keys and certificates age with the
// calendar, so counted findings hold only at a fixed time.
const demoNow = "2026-12-01T12:00:00Z"

// demoPlan reads the plan a demo wrote.
func demoPlan(t *testing.T, dir string) *remediate.Plan {
	t.Helper()
	p, err := remediate.ReadPlan(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openFindings reads the clouds the demo left behind afresh, through the simulator and
// the SDK clients, and returns the fingerprints of the findings still open there.
func openFindings(t *testing.T, world string) map[string]bool {
	t.Helper()
	code, out, stderr := warden(t, "", "scan", "--sim", world, "--no-db", "--format", "json", "--now", demoNow)
	if code != 1 {
		t.Fatalf("scan of the demo's world: exit %d, want 1 (findings)\n%s", code, stderr)
	}
	var rep struct {
		Findings []struct {
			Fingerprint string `json:"fingerprint"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, f := range rep.Findings {
		open[f.Fingerprint] = true
	}
	return open
}

func TestDemo_withoutTerminal(t *testing.T) {
	t.Setenv("WARDEN_ACTOR", "alice")
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, stderr := warden(t, "", "demo", "--dir", dir, "--now", demoNow)
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"1/8 collect", "295 resources", "278 findings", "4/8 apply", "no terminal: 108 fixes left pending",
		"8/8 report", "cis-aws-3.0", "found ", "fixed ", "waiting ", "warden serve --config", "warden audit verify"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	if stderr != "" {
		t.Errorf("the demo wrote to stderr: %s", stderr)
	}
	for _, f := range []string{"warden.yaml", "warden.db", "snapshot.json", "snapshot-after.json", "plan.json", "approve.sh",
		"cis-aws-3.0.html", "checkpoint.txt", "audit.key", "world.yaml", "world-now.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the demo's folder lacks %s: %v", f, err)
		}
	}

	// The fixes of low risk ran; judge them on the clouds the demo left, not on its words.
	plan := demoPlan(t, dir)
	open := openFindings(t, filepath.Join(dir, "world-now.yaml"))
	var auto, waiting int
	for _, act := range plan.Actions {
		switch {
		case act.Approvals.Verdict == "auto":
			auto++
			if open[act.Finding] {
				t.Errorf("%s (%s, low risk) ran, but its finding is still open in the simulated cloud", act.ID, act.Remediator)
			}
		case !open[act.Finding]:
			t.Errorf("%s (%s) waits for approval, but its finding is gone: something wrote without approval", act.ID, act.Remediator)
		default:
			waiting++
		}
	}
	if auto == 0 || waiting == 0 {
		t.Fatalf("plan: %d automatic, %d waiting; the demo needs both", auto, waiting)
	}

	// Every waiting fix has its command, which really decides it.
	script, err := os.ReadFile(filepath.Join(dir, "approve.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// Among them, the right-sizing of the build user's inline "*" to what it used.
	if !strings.Contains(string(script), "# aws.iam.rightsize_inline_policy inline/jenkins-everything") {
		t.Errorf("approve.sh does not list the right-sizing of jenkins-legacy's inline policy:\n%s", script)
	}
	var cmds []string
	for _, l := range strings.Split(string(script), "\n") {
		if strings.HasPrefix(l, "WARDEN_ACTOR=") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) != waiting {
		t.Fatalf("approve.sh has %d commands for %d waiting fixes", len(cmds), waiting)
	}
	fields := strings.Fields(cmds[0])
	if fields[0] != "WARDEN_ACTOR=alice" || fields[1] != "warden" || fields[2] != "approve" {
		t.Fatalf("approve.sh's first command: %q", cmds[0])
	}
	code, out, stderr = warden(t, "", "approve", fields[3], "--config", filepath.Join(dir, "warden.yaml"))
	if code != 0 || !strings.Contains(out, "approv") {
		t.Fatalf("the script's first command: exit %d\n%s%s", code, out, stderr)
	}

	// The world the demo left loads again: 'warden serve --sim' continues from it.
	b, err := os.ReadFile(filepath.Join(dir, "world-now.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cloudsim.ParseWorld(b); err != nil {
		t.Fatalf("world-now.yaml does not load: %v", err)
	}

	// The audit log verifies against the demo's checkpoint, with the demo's key.
	code, out, stderr = warden(t, "", "audit", "verify", "--config", filepath.Join(dir, "warden.yaml"),
		"--audit-key", filepath.Join(dir, "audit.key"), "--checkpoint", filepath.Join(dir, "checkpoint.txt"))
	if code != 0 {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, stderr)
	}

	// A second run starts fresh: its scan is the first of a new history.
	code, out, stderr = warden(t, "", "demo", "--dir", dir, "--now", demoNow)
	if code != 0 || !strings.Contains(out, "scan 1 recorded") {
		t.Fatalf("second demo: exit %d\n%s\n%s", code, out, stderr)
	}
}

func TestDemo_refusesAFolderItDidNotMake(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "notes.txt", "mine")
	code, _, stderr := warden(t, "", "demo", "--dir", dir, "--now", demoNow)
	if code != 2 || !strings.Contains(stderr, "an earlier demo did not write") {
		t.Fatalf("demo in a folder of other files: exit %d, %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("the folder's file was touched: %q, %v", b, err)
	}
}
