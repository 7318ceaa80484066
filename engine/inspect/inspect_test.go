package inspect_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/engine/inspect"
)

func builtinEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{engine.Builtin()}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPolicies_selectsByFrameworkAndType(t *testing.T) {
	e := builtinEngine(t)
	all, err := inspect.Policies(e, "", "")
	if err != nil || len(all) != len(e.Policies()) {
		t.Fatalf("no filter: %d of %d policies, %v", len(all), len(e.Policies()), err)
	}
	some, err := inspect.Policies(e, engine.Frameworks[0], "aws.ec2.security_group")
	if err != nil {
		t.Fatal(err)
	}
	if len(some) == 0 || len(some) >= len(all) {
		t.Fatalf("%s on security groups: %d of %d policies", engine.Frameworks[0], len(some), len(all))
	}
	for _, p := range some {
		if len(p.Frameworks[engine.Frameworks[0]]) == 0 || !slices.Contains(p.ResourceTypes, "aws.ec2.security_group") {
			t.Errorf("%s selected, but it is not mapped to %s on security groups", p.ID, engine.Frameworks[0])
		}
	}
	if _, err := inspect.Policies(e, "cis-aws-0.1", ""); err == nil || !strings.Contains(err.Error(), `unknown framework "cis-aws-0.1"`) {
		t.Errorf("unknown framework: %v", err)
	}
}

func TestSettings_namePoliciesThatReadThemAndTheValueInEffect(t *testing.T) {
	e := builtinEngine(t)
	schema := e.SettingsSchema()
	if len(schema) == 0 {
		t.Skip("the built-in pack reads no setting")
	}
	name := schema[0].Name
	rows := inspect.Settings(e, map[string]any{name: 7})
	if len(rows) != len(schema) {
		t.Fatalf("%d rows for %d settings", len(rows), len(schema))
	}
	for _, r := range rows {
		if len(r.ReadBy) == 0 {
			t.Errorf("%s: read by nobody", r.Name)
		}
		if r.Set != (r.Name == name) {
			t.Errorf("%s: set %v", r.Name, r.Set)
		}
	}
	var buf bytes.Buffer
	if err := inspect.SettingsTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), name) || !strings.Contains(buf.String(), "(default)") {
		t.Errorf("table:\n%s", buf.String())
	}
}
