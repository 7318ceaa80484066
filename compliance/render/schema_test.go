package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
)

// schema compiles one of the published schemas under testdata/schemas (see its README
// for where each comes from), with format assertions on.
func schema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	doc := decodeJSON(t, filepath.Join("testdata", "schemas", file))
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "file:///schemas/" + file
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s: %v", file, err)
	}
	return s
}

func decodeJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return unmarshal(t, b)
}

func unmarshal(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSARIF_validatesAgainstTheSchema: the SARIF report of every framework over acme is
// a valid SARIF 2.1.0 log (OASIS's schema), with one result per failing or unknown
// finding and the checkpoint and source in the run's properties.
func TestSARIF_validatesAgainstTheSchema(t *testing.T) {
	s := schema(t, "sarif-schema-2.1.0.json")
	for _, id := range frameworkIDs {
		t.Run(id, func(t *testing.T) {
			d := acmeDocument(t, id)
			b := write(t, "sarif", d)
			if err := s.Validate(unmarshal(t, b)); err != nil {
				t.Fatalf("invalid SARIF: %v", err)
			}
			var log struct {
				Runs []struct {
					Tool struct {
						Driver struct {
							Rules []struct{ ID string } `json:"rules"`
						} `json:"driver"`
					} `json:"tool"`
					Results []struct {
						RuleID     string `json:"ruleId"`
						Kind       string `json:"kind"`
						Level      string `json:"level"`
						Properties struct {
							Controls []string `json:"controls"`
						} `json:"properties"`
					} `json:"results"`
					Invocations []struct {
						Notifications []struct {
							Message struct{ Text string } `json:"message"`
						} `json:"toolExecutionNotifications"`
					} `json:"invocations"`
					Properties struct {
						Checkpoint *compliance.Checkpoint `json:"checkpoint"`
						Source     *compliance.Source     `json:"source"`
					} `json:"properties"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(b, &log); err != nil {
				t.Fatal(err)
			}
			if len(log.Runs) != 1 {
				t.Fatalf("%d runs, want 1", len(log.Runs))
			}
			run := log.Runs[0]
			open := d.OpenFindings()
			if len(run.Results) != len(open) || len(open) == 0 {
				t.Fatalf("%d results, want one per failing or unknown finding: %d", len(run.Results), len(open))
			}
			rules := map[string]bool{}
			for _, r := range run.Tool.Driver.Rules {
				rules[r.ID] = true
			}
			for i, r := range run.Results {
				f := open[i]
				wantKind := "fail"
				if f.Status == findings.StatusUnknown {
					wantKind = "open"
				}
				if r.RuleID != f.Policy || !rules[r.RuleID] || r.Kind != wantKind || len(r.Properties.Controls) == 0 {
					t.Errorf("result %d = %+v, want rule %s (described), kind %s, with controls", i, r, f.Policy, wantKind)
				}
				if r.Kind == "open" && r.Level != "none" {
					t.Errorf("result %d of kind open has level %s: SARIF wants none", i, r.Level)
				}
			}
			if p := run.Properties; p.Checkpoint == nil || p.Checkpoint.Note != d.Checkpoint.Note || p.Source == nil || p.Source.ScanID != d.Source.ScanID {
				t.Errorf("run properties = %+v, want the checkpoint and the source", p)
			}
			var notes []string
			for _, n := range run.Invocations[0].Notifications {
				notes = append(notes, n.Message.Text)
			}
			if all := strings.Join(notes, "\n"); !strings.Contains(all, "tls/intranet.acme.example:443") || !strings.Contains(all, "aws/333333333333/ec2/eu-central-1") {
				t.Errorf("notifications %q do not name the failed scopes", notes)
			}
		})
	}
}

// TestOCSF_validatesAgainstTheSchema: the OCSF report of every framework over acme is an
// array of events that each validate against the generated OCSF 1.8.0 Compliance
// Finding schema, one per control, with the control's status.
func TestOCSF_validatesAgainstTheSchema(t *testing.T) {
	s := schema(t, "compliance_finding-1.8.0.schema.json")
	for _, id := range frameworkIDs {
		t.Run(id, func(t *testing.T) {
			d := acmeDocument(t, id)
			b := write(t, "ocsf", d)
			events, ok := unmarshal(t, b).([]any)
			if !ok || len(events) != len(d.Report.Controls) {
				t.Fatalf("want a JSON array of %d events, one per control", len(d.Report.Controls))
			}
			for i, ev := range events {
				if err := s.Validate(ev); err != nil {
					t.Fatalf("event %d (control %s) invalid: %v", i, d.Report.Controls[i].ID, err)
				}
			}
			var typed []struct {
				ClassUID   int `json:"class_uid"`
				Compliance struct {
					Control    string `json:"control"`
					StatusID   int    `json:"status_id"`
					Status     string `json:"status"`
					StatusCode string `json:"status_code"`
				} `json:"compliance"`
				Resources []struct{ UID string } `json:"resources"`
			}
			if err := json.Unmarshal(b, &typed); err != nil {
				t.Fatal(err)
			}
			wantID := map[compliance.Status]int{compliance.StatusPass: 1, compliance.StatusFail: 3, compliance.StatusUnknown: 0,
				compliance.StatusManual: 99, compliance.StatusNotCovered: 99}
			seen := map[compliance.Status]bool{}
			for i, e := range typed {
				c := d.Report.Controls[i]
				seen[c.Status] = true
				if e.ClassUID != 2003 || e.Compliance.Control != c.ID || e.Compliance.StatusID != wantID[c.Status] || e.Compliance.StatusCode != string(c.Status) {
					t.Errorf("event %d = %+v, want control %s with status %s (%d)", i, e, c.ID, c.Status, wantID[c.Status])
				}
				if n := len(c.Failing) + len(c.Unknown) + len(c.Waived); n > 0 && len(e.Resources) == 0 {
					t.Errorf("control %s has %d findings and its event no resource", c.ID, n)
				}
			}
			if !seen[compliance.StatusFail] || !seen[compliance.StatusNotCovered] && !seen[compliance.StatusManual] {
				t.Errorf("statuses %v: acme should fail some control and leave some to people or undecided", seen)
			}
		})
	}
}

// TestSchemas_refuseWhatTheyShould: the schemas are not vacuous: a wrong class, a
// missing required member, an invalid SARIF version are refused.
func TestSchemas_refuseWhatTheyShould(t *testing.T) {
	d := acmeDocument(t, "cis-aws-3.0")
	ocsf := schema(t, "compliance_finding-1.8.0.schema.json")
	for name, mutate := range map[string]func(map[string]any){
		"class 2004":         func(e map[string]any) { e["class_uid"] = 2004 },
		"no compliance":      func(e map[string]any) { delete(e, "compliance") },
		"status 7":           func(e map[string]any) { e["compliance"].(map[string]any)["status_id"] = 7 },
		"time as a string":   func(e map[string]any) { e["time"] = "2026-11-30T12:00:00Z" },
		"the cloud profile":  func(e map[string]any) { e["cloud"] = map[string]any{"provider": "AWS"} },
		"an unknown member":  func(e map[string]any) { e["warden"] = true },
		"a product unnamed":  func(e map[string]any) { e["metadata"].(map[string]any)["product"] = map[string]any{"vendor_name": "x"} },
		"a resource unnamed": func(e map[string]any) { e["resources"] = []any{map[string]any{"type": "aws.iam.user"}} },
	} {
		var events []map[string]any
		if err := json.Unmarshal(write(t, "ocsf", d), &events); err != nil {
			t.Fatal(err)
		}
		mutate(events[0])
		b, _ := json.Marshal(events[0])
		if err := ocsf.Validate(unmarshal(t, b)); err == nil {
			t.Errorf("OCSF schema accepts an event with %s", name)
		}
	}
	sarif := schema(t, "sarif-schema-2.1.0.json")
	var log map[string]any
	if err := json.Unmarshal(write(t, "sarif", d), &log); err != nil {
		t.Fatal(err)
	}
	log["version"] = "2.0.0"
	b, _ := json.Marshal(log)
	if err := sarif.Validate(unmarshal(t, b)); err == nil {
		t.Error("SARIF schema accepts version 2.0.0")
	}
}
