package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/demo"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

// runDemo runs the demo in dir as alice, answering from stdin when interactive.
func runDemo(t *testing.T, dir, stdin string, interactive bool) (string, error) {
	t.Helper()
	fw, err := compliance.Lookup("cis-aws-3.0")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = demo.Run(context.Background(), demo.Options{Dir: dir, Framework: fw, Interactive: interactive, You: "alice",
		Stdout: &out, Stdin: strings.NewReader(stdin), Version: "test"})
	return out.String(), err
}

// readPlan reads the plan a demo wrote.
func readPlan(t *testing.T, dir string) *remediate.Plan {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p remediate.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// openFindings reads the clouds the demo left behind afresh, through the simulator and
// the SDK clients, and returns the fingerprints of the findings still open there.
func openFindings(t *testing.T, world string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	sim, err := collect.StartSimulator(world, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	cs, err := collect.Resolve(sim.Target(collect.Targets{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := (&config.Config{}).Engine(ctx, config.PolicyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(ctx, scan.Request{Source: scan.Live(cs, collect.Options{}), Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, f := range res.Findings {
		open[f.Fingerprint] = true
	}
	return open
}

// actionStates are the states of the actions the demo recorded, by id.
func actionStates(t *testing.T, dir string) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenExisting(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := remediate.New(remediate.Options{Store: st, Log: audit.New(st, audit.Options{})}).Actions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, r := range rs {
		state[r.ID] = string(r.State)
	}
	return state
}

func TestRun_asksOnTheTerminal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	// Approve the first fix, deny the second with a reason, skip the rest.
	out, err := runDemo(t, dir, "a\nd\nbreaks the VPN\nS\n", true)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	var waiting []remediate.PlannedAction
	for _, act := range readPlan(t, dir).Actions {
		if act.Approvals.Verdict != "auto" {
			waiting = append(waiting, act)
		}
	}
	if len(waiting) < 3 {
		t.Fatalf("%d fixes wait for approval", len(waiting))
	}
	// acme's certificates age with the clock: how many fixes wait depends on the day.
	for _, want := range []string{fmt.Sprintf("[1/%d]", len(waiting)), "part", "after", "approve, deny or skip?", "why deny?",
		fmt.Sprintf("1 approved, 1 denied, %d left pending", len(waiting)-2), "6/8 apply"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	// The order asked is the apply run's order; find the first two through the store.
	state := actionStates(t, dir)
	open := openFindings(t, filepath.Join(dir, "world-now.yaml"))
	var verified, denied int
	for _, act := range waiting {
		switch state[act.ID] {
		case "verified":
			verified++
			if open[act.Finding] {
				t.Errorf("%s was approved and verified, but its finding is still open in the simulated cloud", act.ID)
			}
		case "denied":
			denied++
			if !open[act.Finding] {
				t.Errorf("%s was denied, but its finding is gone from the simulated cloud", act.ID)
			}
		case "pending_approval":
			if !open[act.Finding] {
				t.Errorf("%s was skipped, but its finding is gone from the simulated cloud", act.ID)
			}
		}
	}
	if verified != 1 || denied != 1 {
		t.Fatalf("after approving one and denying one: %d verified, %d denied (states %v)", verified, denied, state)
	}
}

func TestRun_refusesAFolderItDidNotMake(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runDemo(t, dir, "", false); err == nil || !strings.Contains(err.Error(), "an earlier demo did not write") {
		t.Fatalf("demo in a folder of other files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("the folder's file was touched: %q, %v", b, err)
	}
}

func TestRun_refusesToActAsTheRequester(t *testing.T) {
	fw, err := compliance.Lookup("cis-aws-3.0")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "demo")
	err = demo.Run(context.Background(), demo.Options{Dir: dir, Framework: fw, You: demo.Requester, Stdout: os.Stdout, Stdin: strings.NewReader("")})
	if err == nil || !strings.Contains(err.Error(), "a name the demo gives to someone else") {
		t.Fatalf("acting as the requester: %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the demo made its folder before refusing")
	}
}

// The demo says at once that it made you an approver, in its own config only; and under
// 'go test' (a go-build binary, as under 'go run') its commands come with the hint to
// install warden, in the summary and in approve.sh.
func TestRun_saysWhoApprovesAndHowToRunWarden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	out, err := runDemo(t, dir, "", false)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	head := strings.Join(strings.SplitN(out, "\n", 5)[:4], "\n")
	for _, want := range []string{"you (alice) are an approver in the demo's own config", "warden.yaml", "no other config is touched", "decisions here are unchecked names (gates.unchecked_names"} {
		if !strings.Contains(head, want) {
			t.Errorf("the demo's first lines lack %q:\n%s", want, head)
		}
	}
	next := out[strings.Index(out, "\nnext\n"):]
	if !strings.Contains(next, "warden is not on your PATH: install it first: go install ./cmd/warden") {
		t.Errorf("the next commands do not say how to install warden:\n%s", next)
	}
	script, err := os.ReadFile(filepath.Join(dir, "approve.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "go install ./cmd/warden") {
		t.Errorf("approve.sh does not say how to install warden:\n%s", script)
	}
}
