package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/store"
)

func TestDiff_sectionsCountsAndEscaping(t *testing.T) {
	from, to := store.ScanRecord{ID: 1, Snapshot: "monday.json"}, store.ScanRecord{ID: 2, Snapshot: "tue\x1b[2Jsday.json"}
	d := findings.Diff{New: []findings.Finding{{Policy: "P-1", Resource: "r1", Severity: findings.High, Message: "bad\x07"}},
		Open: []findings.Finding{{Policy: "P-2", Resource: "r2"}}}
	var table bytes.Buffer
	report.DiffTable(&table, from, to, d)
	got := table.String()
	for _, want := range []string{"scan 1 (monday.json) → scan 2 (", "NEW (1)", "RESOLVED (0)", "UNKNOWN (0)", "1 new, 0 resolved, 1 still open, 0 unknown"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("a control character reached the table: %q", got)
	}
	var js bytes.Buffer
	if err := report.DiffJSON(&js, from, to, d); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	if string(doc["resolved"]) != "[]" || string(doc["unknown"]) != "[]" {
		t.Errorf("empty sections are not empty arrays: %s", js.String())
	}
}
