package remediate_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/remediate"
)

// A plan file is read back as written; a field this warden does not know, or an edited
// action, is refused with the file's name.
func TestReadPlan(t *testing.T) {
	p, err := remediate.ReadPlan("testdata/acme-plan.json")
	if err != nil || len(p.Actions) == 0 {
		t.Fatalf("acme's plan: %v", err)
	}
	b, err := os.ReadFile("testdata/acme-plan.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.json")
	if err := os.WriteFile(unknown, []byte(strings.Replace(string(b), "{", `{"extra": 1,`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := remediate.ReadPlan(unknown); err == nil || !strings.Contains(err.Error(), "read plan "+unknown) || !strings.Contains(err.Error(), "extra") {
		t.Errorf("unknown field: %v", err)
	}
	edited := filepath.Join(dir, "edited.json")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), p.Actions[0].Target, p.Actions[0].Target+"-other", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := remediate.ReadPlan(edited); !errors.Is(err, remediate.ErrPlanTampered) {
		t.Errorf("edited action: %v, want ErrPlanTampered", err)
	}
	if _, err := remediate.ReadPlan(filepath.Join(dir, "missing.json")); err == nil || !strings.HasPrefix(err.Error(), "read plan: ") {
		t.Errorf("missing file: %v", err)
	}
}

// A run fails the command when an action failed, or when a run that was not a dry run
// stopped; a dry run that would stop, actions left waiting, or actions deferred by a
// blast-radius cap do not.
func TestResult_Err(t *testing.T) {
	failed := remediate.Item{State: remediate.StateFailed}
	for _, tc := range []struct {
		name string
		res  remediate.Result
		want string
	}{
		{"clean", remediate.Result{Items: []remediate.Item{{State: remediate.StateVerified}}}, ""},
		{"a dry run that would stop", remediate.Result{DryRun: true, Stopped: "paused"}, ""},
		{"stopped", remediate.Result{Stopped: "breaker open"}, "0 failed; stopped: breaker open"},
		{"failed", remediate.Result{Items: []remediate.Item{failed, failed}}, "2 failed"},
		{"deferred by a cap", remediate.Result{Deferred: "blast-radius cap: 2 actions deferred"}, ""},
		{"deferred and stopped", remediate.Result{Deferred: "blast-radius cap: 2 actions deferred", Stopped: "breaker open"}, "0 failed; stopped: breaker open"},
	} {
		got := ""
		if err := tc.res.Err(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q (empty: no error)", tc.name, got, tc.want)
		}
	}
}
