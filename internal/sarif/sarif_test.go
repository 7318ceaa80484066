package sarif_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/sarif"
	"github.com/warden-sec/warden/internal/termesc"
)

// document is a log of one run as encoding/json would write it whole: what Write streams
// must be the same bytes.
type document struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []run  `json:"runs"`
}

type run struct {
	Tool              sarif.Tool               `json:"tool"`
	AutomationDetails *sarif.AutomationDetails `json:"automationDetails,omitempty"`
	Results           []sarif.Result           `json:"results"`
	Invocations       []sarif.Invocation       `json:"invocations"`
	Properties        map[string]any           `json:"properties,omitempty"`
}

func TestWrite_isEncodingJSONIndentedByteForByte(t *testing.T) {
	rule := sarif.PolicyRule("P-1", "Title", findings.High, []string{"security"})
	results := []sarif.Result{
		{RuleID: "P-1", Level: sarif.Level(findings.High), Message: sarif.Text{Text: "bad \u009b2J <b>"},
			Locations: sarif.ResourceLocation("arn:1"), PartialFingerprints: sarif.Fingerprints("ff"),
			Suppressions: []sarif.Suppression{{Justification: "ok", Kind: "external", Status: "accepted"}},
			Properties:   map[string]any{"region": "eu-west-1"}},
		{RuleID: "P-1", Kind: "open", Level: "none", Message: sarif.Text{Text: "unknown"},
			Locations: sarif.ResourceLocation("arn:2"), PartialFingerprints: sarif.Fingerprints("ee"), Properties: map[string]any{}},
	}
	index := 0
	inv := []sarif.Invocation{{ExecutionSuccessful: false, EndTimeUTC: "2026-12-01T00:00:00Z", ToolExecutionNotifications: []sarif.Notification{
		{Level: "error", Message: sarif.Text{Text: "failed"}, AssociatedRule: &sarif.RuleRef{ID: "P-1", Index: &index}, Locations: sarif.ResourceLocation("arn:1")},
		{Level: "warning", Message: sarif.Text{Text: "scope unread"}},
	}}}
	for _, tc := range []struct {
		name string
		run  sarif.Run
	}{
		{"no results", sarif.Run{Tool: sarif.Warden("v1", nil), Invocations: inv}},
		{"results", sarif.Run{Tool: sarif.Warden("v1", []sarif.Rule{rule}), Results: slices.Values(results), Invocations: inv}},
		{"automation and properties", sarif.Run{Tool: sarif.Warden("", []sarif.Rule{rule}), AutomationDetails: &sarif.AutomationDetails{ID: "a/b"},
			Results: slices.Values(results[:1]), Invocations: inv, Properties: map[string]any{"score": 0.5, "framework": map[string]string{"id": "x"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := sarif.Write(&got, &tc.run); err != nil {
				t.Fatal(err)
			}
			r := run{Tool: tc.run.Tool, AutomationDetails: tc.run.AutomationDetails, Results: []sarif.Result{},
				Invocations: tc.run.Invocations, Properties: tc.run.Properties}
			if tc.run.Results != nil {
				r.Results = slices.Collect(tc.run.Results)
			}
			doc := document{Schema: sarif.Schema, Version: "2.1.0", Runs: []run{r}}
			b, err := json.MarshalIndent(&doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			want := append(termesc.EscapeJSON(b), '\n')
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("Write:\n%s\nencoding/json:\n%s", got.Bytes(), want)
			}
			if bytes.Contains(got.Bytes(), []byte("\u009b")) {
				t.Error("a C1 control reaches the output raw")
			}
		})
	}
}

func TestLevelAndSecuritySeverity(t *testing.T) {
	for _, tc := range []struct {
		sev          findings.Severity
		level, score string
	}{
		{findings.Critical, "error", "9.5"}, {findings.High, "error", "8.0"}, {findings.Medium, "warning", "5.5"},
		{findings.Low, "note", "3.0"}, {findings.Info, "note", "0.0"},
	} {
		if got := sarif.Level(tc.sev); got != tc.level {
			t.Errorf("Level(%s) = %q, want %q", tc.sev, got, tc.level)
		}
		if got := sarif.SecuritySeverity(tc.sev); got != tc.score {
			t.Errorf("SecuritySeverity(%s) = %q, want %q", tc.sev, got, tc.score)
		}
	}
}
