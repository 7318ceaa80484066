package compliance

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/yamlerr"
)

func TestParse_errorsNameLineAndField(t *testing.T) {
	tests := []struct {
		file  string
		line  int
		field string
		msg   string
	}{
		{"bad-unknown-field.yaml", 12, "controls[0].asessment", `unknown field (did you mean "assessment"?)`},
		{"bad-assessment.yaml", 13, "controls[1].assessment", `"automatic" is not automated or manual (did you mean "automated"?)`},
		{"bad-duplicate-control.yaml", 11, "controls[2].id", `control "1.1" is listed twice (first at line 9)`},
		{"bad-unknown-family.yaml", 11, "controls[1].family", `unknown family "3"`},
		{"bad-unknown-parent.yaml", 7, "families[0].parent", `unknown family "2" (a parent is declared before its parts)`},
		{"bad-duplicate-key.yaml", 13, "controls[0].title", `duplicate key "title" (first set at line 10)`},
		{"bad-regexp.yaml", 15, "controls[0].key_match.WARDEN-AWS-NET-001", "not a regular expression"},
		{"bad-key-match-policy.yaml", 9, "controls[0].key_match.WARDEN-AWS-NET-002", "is not one of the control's policies"},
		{"bad-requires-config.yaml", 15, "controls[0].requires_config.access_key_unused_days.max", `"forty-five" is not a number`},
		{"bad-syntax.yaml", 7, "", "did not find expected ',' or '}'"},
		{"bad-second-document.yaml", 10, "", "a second YAML document"},
		{"bad-alias.yaml", 7, "", "anchors and aliases"},
		{"bad-missing-title.yaml", 10, "controls[1].title", "is required"},
		{"bad-framework-id.yaml", 1, "id", `"CIS AWS" is not a framework id`},
		{"bad-policy-twice.yaml", 16, "controls[0].policies[2]", `"WARDEN-AWS-NET-001" is listed twice`},
		{"bad-baseline.yaml", 9, "controls[0].baselines[1]", `"medium" is not low, moderate, high or privacy`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(tt.file, data)
			if err == nil {
				t.Fatalf("Parse accepted %s: %d controls", tt.file, len(f.Controls))
			}
			var ye *yamlerr.Error
			if !errors.As(err, &ye) {
				t.Fatalf("error %q (%T) does not carry a *yamlerr.Error", err, err)
			}
			if ye.Line != tt.line || ye.Field != tt.field || !strings.Contains(ye.Msg, tt.msg) {
				t.Errorf("got line %d, field %q, msg %q; want line %d, field %q, msg containing %q", ye.Line, ye.Field, ye.Msg, tt.line, tt.field, tt.msg)
			}
			// The message a user sees names the file, the line and the field.
			want := "parse framework " + tt.file + ": line "
			if !strings.HasPrefix(err.Error(), want) || (tt.field != "" && !strings.Contains(err.Error(), tt.field+": ")) {
				t.Errorf("error %q does not start with %q and name the field %q", err, want, tt.field)
			}
		})
	}
}

// TestParse_keepsLiteralIDs: unquoted ids 1.10 and 1.1 stay two controls, where a YAML
// reader that types values would read both as the number 1.1.
func TestParse_keepsLiteralIDs(t *testing.T) {
	f, err := Parse("ids.yaml", []byte(`id: t
name: T
version: 1
publisher: p
source: s
families: [{id: 1, title: One}]
controls:
  - {id: 1.1, title: A, family: 1, assessment: manual}
  - {id: 1.10, title: B, family: 1, assessment: manual, level: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{f.Controls[0].ID, f.Controls[1].ID}; got[0] != "1.1" || got[1] != "1.10" {
		t.Errorf("ids = %q, want [1.1 1.10]", got)
	}
	if f.Controls[1].Level != 2 || f.Control("1.10").Title != "B" {
		t.Errorf("control 1.10 = %+v", f.Controls[1])
	}
}

func TestParse_readsEveryField(t *testing.T) {
	f, err := Parse("full.yaml", []byte(`id: full-1
name: Full
version: "1"
publisher: p
source: s
families:
  - {id: A, title: Aa}
  - {id: A.1, title: Part, parent: A}
controls:
  - id: A.1.1
    title: Everything
    family: A.1
    level: 1
    baselines: [low, high]
    assessment: automated
    policies: [P-1, P-2]
    key_match:
      P-1: '^k$'
    requires_config:
      days: {max: 45}
      length: {min: 14, max: 128}
    note: why
`))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Controls[0]
	if c.Family != "A.1" || c.Level != 1 || strings.Join(c.Baselines, ",") != "low,high" || c.Assessment != Automated ||
		strings.Join(c.Policies, ",") != "P-1,P-2" || c.KeyMatch["P-1"] != "^k$" || c.Note != "why" {
		t.Errorf("control = %+v", c)
	}
	if len(c.RequiresConfig) != 2 || c.RequiresConfig[0].Setting != "days" || *c.RequiresConfig[0].AtMost != 45 ||
		c.RequiresConfig[0].AtLeast != nil || *c.RequiresConfig[1].AtLeast != 14 || *c.RequiresConfig[1].AtMost != 128 {
		t.Errorf("requires_config = %+v", c.RequiresConfig)
	}
	if !c.matches("P-1", "k") || c.matches("P-1", "kk") || !c.matches("P-2", "anything") {
		t.Error("key_match narrows P-1 only, to keys matching ^k$")
	}
	if f.Families[1].Parent != "A" {
		t.Errorf("families = %+v", f.Families)
	}
}

func TestValidate_reportsEveryProblemWithItsLine(t *testing.T) {
	f, err := Parse("v.yaml", []byte(`id: v
name: V
version: "1"
publisher: p
source: s
families: [{id: "1", title: One}]
controls:
  - {id: "1.1", title: A, family: "1", assessment: automated, policies: [WARDEN-AWS-NET-001, WARDEN-AWS-NETT-002]}
  - {id: "1.2", title: B, family: "1", assessment: automated, policies: [WARDEN-NOPE]}
`))
	if err != nil {
		t.Fatal(err)
	}
	known := func(id string) bool { return id == "WARDEN-AWS-NET-001" }
	err = f.Validate(known)
	if err == nil {
		t.Fatal("Validate accepted unknown policy ids")
	}
	for _, want := range []string{
		`line 8: controls[0].policies[1]: unknown policy "WARDEN-AWS-NETT-002"`,
		`line 9: controls[1].policies[0]: unknown policy "WARDEN-NOPE"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if err := f.Validate(nil); err != nil {
		t.Errorf("Validate(nil) checks no policy id, got %v", err)
	}
}
