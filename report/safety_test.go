package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/snapshot"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is unchanged", "arn:aws:iam::1:user/alice opens 0.0.0.0/0", "arn:aws:iam::1:user/alice opens 0.0.0.0/0"},
		{"printable unicode is unchanged", "ünïcödé 名前 ✓", "ünïcödé 名前 ✓"},
		{"backslashes are unchanged", `C:\path\x1b`, `C:\path\x1b`},
		{"ANSI escape", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"OSC window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"C1 control (8-bit CSI)", "a\u009b2Jb", `a\u009b2Jb`},
		{"invalid UTF-8 byte", "a\x9b\xffb", `a\x9b\xffb`},
		{"newline and tab", "a\nb\tc\rd", `a\nb\tc\rd`},
		{"DEL and NUL", "a\x7fb\x00c", `a\x7fb\x00c`},
		{"bidi override", "evil\u202egpj.exe", `evil\u202egpj.exe`},
		{"line separator", "a\u2028b", `a\u2028b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := report.Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEscapeLines_keepsNewlinesAndTabs(t *testing.T) {
	in := "load policies:\n\tp.rego:3: bad \x1b[2J\xff"
	want := "load policies:\n\tp.rego:3: bad \\x1b[2J\\xff"
	if got := report.EscapeLines(in); got != want {
		t.Errorf("EscapeLines(%q) = %q, want %q", in, got, want)
	}
}

// hostile is a report whose resource-controlled strings hold terminal escapes, C1
// controls, bidi overrides and invalid UTF-8.
func hostile() *report.Report {
	r := sample()
	r.Scan.Snapshot = "snap\x1b[2J.json"
	r.Findings[0].Resource = "arn:aws:iam::1:user/\x1b]0;pwned\x07\x1b[2J"
	r.Findings[0].Message = "user \u009b2J has\xff no MFA\nFAKE LINE"
	r.Findings[0].Title = "Title\u202eevil"
	r.Findings[1].Message = "sg-1 opens SSH to 0.0.0.0/0"
	r.Findings[2].Waiver.Reason = "because\x1b[31m"
	r.IncompleteScopes = []snapshot.Scope{{ID: "aws/1/\x1bec2", Status: snapshot.ScopeFailed, Error: "denied\x07"}}
	r.EvalErrors = []findings.EvalError{{Policy: "X-1", Resource: "r\x1b[H\xfe", Error: "boom\r\x1b[K"}}
	r.Summarize(map[string]int{"aws.iam.user": 10})
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
	complete.Summarize(map[string]int{})

	t.Run("summary", func(t *testing.T) {
		if !incomplete.Summary.Incomplete || complete.Summary.Incomplete {
			t.Errorf("Incomplete = %v with eval errors, %v without", incomplete.Summary.Incomplete, complete.Summary.Incomplete)
		}
	})
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
			r      *report.Report
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
			r       *report.Report
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

func TestEscapeJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain JSON is unchanged", `{"a":"b ünï"}`, `{"a":"b ünï"}`},
		{"C1 control", "{\"a\":\"x\u009by\"}", `{"a":"x\u009by"}`},
		{"bidi override", "[\"evil\u202egpj\"]", `["evil\u202egpj"]`},
		{"DEL", "\"a\x7fb\"", `"a\u007fb"`},
		{"other E2 runes stay", `"a – b ✓"`, `"a – b ✓"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(report.EscapeJSON([]byte(tc.in)))
			if got != tc.want {
				t.Errorf("EscapeJSON(%q) = %q, want %q", tc.in, got, tc.want)
			}
			var a, b any
			if json.Unmarshal([]byte(tc.in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("EscapeJSON changed what %q means: %q", tc.in, got)
			}
		})
	}
}

// FuzzEscape: whatever a resource holds, the escaped text is valid UTF-8 without a rune
// a terminal would act on, and text that needs no escaping is left alone.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[2J", "\u009b\u202e", "\xff\xfe", "ünï\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{report.Escape(s), report.EscapeLines(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("Escape(%q) = %q: invalid UTF-8", s, out)
			}
			for _, r := range out {
				if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
				}
			}
		}
		if strings.ContainsRune(report.Escape(s), '\n') {
			t.Fatalf("Escape(%q) keeps a newline", s)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		esc := report.EscapeJSON(b)
		var back string
		if err := json.Unmarshal(esc, &back); err != nil {
			t.Fatalf("EscapeJSON(%s) = %s: %v", b, esc, err)
		}
		var want string
		_ = json.Unmarshal(b, &want)
		if back != want {
			t.Fatalf("EscapeJSON changed %q into %q", want, back)
		}
	})
}
