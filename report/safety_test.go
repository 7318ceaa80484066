package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
)

// hostile is a result whose resource-controlled strings hold terminal escapes, C1
// controls, bidi overrides and invalid UTF-8.
func hostile() *scan.Result {
	r := sample()
	r.Scan.Snapshot = "snap\x1b[2J.json"
	r.Findings[0].Resource = "arn:aws:iam::1:user/\x1b]0;pwned\x07\x1b[2J"
	r.Findings[0].Message = "user \u009b2J has\xff no MFA\nFAKE LINE"
	r.Findings[0].Title = "Title\u202eevil"
	r.Findings[1].Message = "sg-1 opens SSH to 0.0.0.0/0"
	r.Findings[2].Waiver.Reason = "because\x1b[31m"
	r.IncompleteScopes = []snapshot.Scope{{ID: "aws/1/\x1bec2", Status: snapshot.ScopeFailed, Error: "denied\x07"}}
	r.EvalErrors = []findings.EvalError{{Policy: "X-1", Resource: "r\x1b[H\xfe", Error: "boom\r\x1b[K"}}
	r.Summary.ResourcesByType = map[string]int{"aws.iam.user": 10}
	return r
}

func TestTable_escapesControlCharactersAndInvalidUTF8(t *testing.T) {
	var buf bytes.Buffer
	if err := (&report.Table{}).Write(&buf, hostile()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !utf8.ValidString(out) {
		t.Error("table output is not valid UTF-8")
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e' {
			t.Fatalf("raw control character %U at byte %d reaches the terminal:\n%q", r, i, out)
		}
	}
	for _, want := range []string{
		`arn:aws:iam::1:user/\x1b]0;pwned\a\x1b[2J`,
		`user \u009b2J has\xff no MFA\nFAKE LINE`,
		`Title\u202eevil`,
		"sg-1 opens SSH to 0.0.0.0/0",
		`because\x1b[31m`,
		`aws/1/\x1bec2 failed: denied\a`,
		`X-1 on r\x1b[H\xfe: boom\r\x1b[K`,
		`snapshot snap\x1b[2J.json`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestTable_coloredStillEscapesResourceStrings(t *testing.T) {
	var buf bytes.Buffer
	if err := (&report.Table{Color: true}).Write(&buf, hostile()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "\x1b]0;") || strings.Contains(buf.String(), "\x1b[2J") {
		t.Errorf("a resource's escape sequence reaches the terminal raw:\n%q", buf.String())
	}
}

func TestJSONAndSARIF_stayValidWithHostileStrings(t *testing.T) {
	for _, format := range []string{"json", "sarif"} {
		t.Run(format, func(t *testing.T) {
			w, err := report.New(format, false)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := w.Write(&buf, hostile()); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				t.Errorf("%s output is not valid JSON:\n%s", format, buf.String())
			}
			if !utf8.Valid(buf.Bytes()) {
				t.Errorf("%s output is not valid UTF-8", format)
			}
			// Valid JSON may hold C1 controls and bidi overrides raw; piped to a terminal
			// they would act on it, so they are escaped too.
			if strings.ContainsAny(buf.String(), "\x1b\x07\x00\x7f\u009b\u202e") {
				t.Errorf("%s output holds raw control characters:\n%q", format, buf.String())
			}
			if !strings.Contains(buf.String(), `\u009b2J`) {
				t.Errorf("%s output lost the escaped C1 control", format)
			}
		})
	}
}

func TestWriters_sayWhenEvalErrorsMadeTheScanIncomplete(t *testing.T) {
	incomplete := sample() // one eval error
	complete := sample()
	complete.EvalErrors = nil
	complete.Summary.EvalErrors, complete.Summary.Incomplete = 0, false

	t.Run("table", func(t *testing.T) {
		var buf bytes.Buffer
		if err := (&report.Table{}).Write(&buf, incomplete); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "INCOMPLETE: 1 policy evaluation failed") {
			t.Errorf("table does not say the scan is incomplete:\n%s", buf.String())
		}
		buf.Reset()
		if err := (&report.Table{}).Write(&buf, complete); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "INCOMPLETE") {
			t.Errorf("complete scan reported as incomplete:\n%s", buf.String())
		}
	})
	t.Run("json", func(t *testing.T) {
		for _, tc := range []struct {
			r      *scan.Result
			want   bool
			errors int
		}{{incomplete, true, 1}, {complete, false, 0}} {
			var buf bytes.Buffer
			if err := (report.JSON{}).Write(&buf, tc.r); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Summary struct {
					Incomplete *bool `json:"incomplete"`
					EvalErrors int   `json:"eval_errors"`
				} `json:"summary"`
				EvalErrors []findings.EvalError `json:"eval_errors"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Summary.Incomplete == nil || *doc.Summary.Incomplete != tc.want {
				t.Errorf("summary.incomplete = %v, want %v", doc.Summary.Incomplete, tc.want)
			}
			if len(doc.EvalErrors) != tc.errors || doc.Summary.EvalErrors != tc.errors {
				t.Errorf("eval_errors = %+v (summary %d), want %d", doc.EvalErrors, doc.Summary.EvalErrors, tc.errors)
			}
		}
	})
	t.Run("sarif", func(t *testing.T) {
		for _, tc := range []struct {
			r       *scan.Result
			success bool
			errors  int
		}{{incomplete, false, 1}, {complete, true, 0}} {
			var buf bytes.Buffer
			if err := (report.SARIF{}).Write(&buf, tc.r); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Runs []struct {
					Invocations []struct {
						ExecutionSuccessful *bool `json:"executionSuccessful"`
						Notifications       []struct {
							Level          string `json:"level"`
							AssociatedRule struct {
								ID string `json:"id"`
							} `json:"associatedRule"`
						} `json:"toolExecutionNotifications"`
					} `json:"invocations"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Runs) != 1 || len(doc.Runs[0].Invocations) != 1 || doc.Runs[0].Invocations[0].ExecutionSuccessful == nil {
				t.Fatalf("SARIF has no invocation with executionSuccessful:\n%s", buf.String())
			}
			inv := doc.Runs[0].Invocations[0]
			if *inv.ExecutionSuccessful != tc.success {
				t.Errorf("executionSuccessful = %v, want %v", *inv.ExecutionSuccessful, tc.success)
			}
			n := 0
			for _, nt := range inv.Notifications {
				if nt.Level == "error" {
					n++
					if nt.AssociatedRule.ID != "X-1" {
						t.Errorf("error notification names rule %q, want X-1", nt.AssociatedRule.ID)
					}
				}
			}
			if n != tc.errors {
				t.Errorf("%d error notifications, want %d", n, tc.errors)
			}
		}
	})
}
