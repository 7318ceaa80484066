package bench_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/bench"
)

func report(findings ...string) string {
	return `{"scan": {"id": "x"}, "summary": {"findings": ` + fmt.Sprint(len(findings)) + `, "resources": 7},
  "findings": [` + strings.Join(findings, ",") + `], "expired_waivers": [], "incomplete_scopes": [], "eval_errors": []}`
}

func finding(policy, resource, fp, msg string) string {
	return fmt.Sprintf(`{"policy": %q, "title": "t", "resource": %q, "fingerprint": %q, "message": %q, "details": {"rule": [1, {"a": "]"}]}}`, policy, resource, fp, msg)
}

func TestBench_readReport(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		lines   []string
		wantErr string
	}{
		{"sorted whatever the report's order", report(finding("P-2", "r1", "f1", "m"), finding("P-1", "r2", "f2", "tab\there")),
			[]string{"P-1\tr2\tf2\ttab\there", "P-2\tr1\tf1\tm"}, ""},
		{"no findings", report(), nil, ""},
		{"not a report", `{"findings": []}`, nil, "no summary"},
		{"broken", `{"summary": {"resources": 1}, "findings": [{"policy": 1}]}`, nil, "findings[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := bench.ReadReport(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Resources != 7 || !slices.Equal(d.Lines, tt.lines) {
				t.Errorf("got %d resources, lines %q; want 7, %q", d.Resources, d.Lines, tt.lines)
			}
		})
	}
}

// The report writer's golden file reads back: the format ReadReport expects is the one
// warden writes.
func TestBench_readReportOfTheGoldenReport(t *testing.T) {
	f, err := os.Open("../../report/testdata/report.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := bench.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.Resources != 10 || len(d.Lines) != 3 {
		t.Errorf("%d resources, %d findings; want 10 and 3", d.Resources, len(d.Lines))
	}
}

// The digest is the engine's decision tests' (engine/decisions_test.go): sorted lines,
// each ended by a newline.
func TestBench_decisionsDigestAndDiff(t *testing.T) {
	a := bench.Decisions{Lines: []string{"a", "b", "d"}}
	b := bench.Decisions{Lines: []string{"a", "c", "d", "e"}}
	if got := (bench.Decisions{}).Digest(); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("empty digest %s", got)
	}
	if got := (bench.Decisions{Lines: []string{"x"}}).Digest(); got != "sha256:73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac" {
		t.Errorf(`digest of "x\n" %s`, got)
	}
	if a.Equal(b) || !a.Equal(bench.Decisions{Lines: []string{"a", "b", "d"}}) {
		t.Error("Equal")
	}
	onlyA, onlyB := a.Diff(b, 5)
	if !slices.Equal(onlyA, []string{"b"}) || !slices.Equal(onlyB, []string{"c", "e"}) {
		t.Errorf("Diff = %q, %q", onlyA, onlyB)
	}
	if _, onlyB := a.Diff(b, 1); len(onlyB) != 1 {
		t.Errorf("Diff with n 1 gave %q", onlyB)
	}
}

func ExampleReadReport() {
	f, err := os.Open("../../report/testdata/report.json.golden") // warden scan --format json
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	d, err := bench.ReadReport(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(d.Lines), "findings of", d.Resources, "resources")
	// Output: 3 findings of 10 resources
}
