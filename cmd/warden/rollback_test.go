package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediate"
)

// TestRollbackCLI_opensTheActionsCloud: an AWS fix is rolled back with nothing but the
// standard chain in the environment (AWS_ENDPOINT_URL and credentials): no --aws, no
// targets: section. The action knows its cloud; the simulator has the policy back.
func TestRollbackCLI_opensTheActionsCloud(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	if code != 0 {
		t.Fatalf("apply --confirm: exit %d\n%s", code, stderr)
	}
	var fixed string
	for _, id := range byRisk(p)[findings.RiskLow] {
		// The part that carries the minimum length; the others are one setting each.
		if it := itemsByAction(res)[id]; it.Part == "password_policy" && it.State == remediate.StateVerified {
			fixed = id
		}
	}
	if fixed == "" || e.passwordMinLength(t) < 14 {
		t.Fatalf("the password policy was not fixed: %+v", res.Items)
	}
	t.Setenv("AWS_ENDPOINT_URL", e.url)
	code, out, stderr := warden(t, "", "rollback", fixed, "--db", e.db) // no --aws, no --config
	if code != 0 || !strings.Contains(out, fixed) {
		t.Fatalf("rollback %s: exit %d\n%s%s", fixed, code, out, stderr)
	}
	if n := e.passwordMinLength(t); n != 8 {
		t.Errorf("minimum password length %d after the rollback, want the 8 it was", n)
	}
	if st := e.actionStates(t)[fixed]; st != remediate.StateRolledBack {
		t.Errorf("%s is %s, want rolled_back", fixed, st)
	}
}

// TestApplyCLI_dryRunCreatesNoDatabase: a dry run against a database that does not exist
// leaves none behind, and says what that means; the dry run itself still runs.
func TestApplyCLI_dryRunCreatesNoDatabase(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	missing := filepath.Join(e.dir, "nowhere", "warden.db")
	code, out, stderr := warden(t, "", "apply", planFile, "--config", e.cfg, "--db", missing)
	if code != 0 || !strings.Contains(out, "dry run: nothing is changed") || !strings.Contains(out, p.Actions[0].ID) {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "no database at "+missing+" yet") || !strings.Contains(stderr, "apply --confirm creates it") {
		t.Errorf("the dry run does not say the database is missing:\n%s", stderr)
	}
	for _, path := range []string{missing, filepath.Dir(missing)} {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dry run made %s: %v", path, err)
		}
	}
	if n := e.sim.WriteCount(); n != 0 {
		t.Errorf("the dry run made %d writes", n)
	}
}

// TestRollbackCLI_gcpSaysWhichFlagIsMissing: a GCP fix's rollback without a GCP target
// names the flags that give one (and changes nothing); with --gcp-endpoint alone it
// rolls back, checked in the simulator.
func TestRollbackCLI_gcpSaysWhichFlagIsMissing(t *testing.T) {
	sim, url := simtest.Start(t, &cloudsim.World{GCP: cloudsim.GCP{Projects: []*cloudsim.Project{{
		ID: "acme-prod", Number: "222222222222", Networks: []*cloudsim.Network{{Name: "prod"}},
		Firewalls: []*cloudsim.Firewall{{Name: "ssh", Network: "prod", Direction: "INGRESS", Priority: 1000, SourceRanges: []string{"0.0.0.0/0"},
			Allowed: []cloudsim.FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}}},
	}}}}, cloudsim.Options{})
	dir := t.TempDir()
	t.Setenv(audit.ActorEnv, "alice")
	t.Setenv(auditKeyEnv, "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	cfg := write(t, dir, "warden.yaml", "gates: {auto: [low, medium, high], approvers: [bob, carol], unchecked_names: true}\n")
	db, planFile := filepath.Join(dir, "warden.db"), filepath.Join(dir, "plan.json")
	gcp := []string{"--gcp-project", "acme-prod", "--gcp-endpoint", url, "--config", cfg, "--db", db}
	if code, out, stderr := warden(t, "", append([]string{"plan", "--out", planFile}, gcp...)...); code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := warden(t, "", append([]string{"apply", planFile, "--confirm", "--format", "json"}, gcp...)...)
	var res remediate.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("apply: exit %d, %v\n%s%s", code, err, out, stderr)
	}
	var fixed string
	for _, it := range res.Items {
		if it.Remediator == "gcp.compute.disable_firewall" && it.State == remediate.StateVerified {
			fixed = it.Action
		}
	}
	disabled := func() (d bool) {
		sim.Do(func(w *cloudsim.World) { d = w.GCP.Projects[0].Firewalls[0].Disabled })
		return d
	}
	if fixed == "" || !disabled() {
		t.Fatalf("the SSH rule was not disabled: %+v", res.Items)
	}

	code, _, stderr = warden(t, "", "rollback", fixed, "--db", db)
	if code != exitError || !strings.Contains(stderr, "--gcp-project acme-prod") || !strings.Contains(stderr, "--gcp-endpoint") {
		t.Errorf("rollback without a GCP target: exit %d, want %d naming --gcp-project acme-prod and --gcp-endpoint:\n%s", code, exitError, stderr)
	}
	if !disabled() {
		t.Fatal("the refused rollback changed the rule")
	}
	if code, out, stderr := warden(t, "", "rollback", fixed, "--db", db, "--gcp-endpoint", url); code != 0 {
		t.Fatalf("rollback --gcp-endpoint: exit %d\n%s%s", code, out, stderr)
	}
	if disabled() {
		t.Error("the SSH rule is still disabled after the rollback")
	}
}
