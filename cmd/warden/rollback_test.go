package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/findings"
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
