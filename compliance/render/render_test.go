package render_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/golden"
)

// write renders d in format.
func write(t testing.TB, format string, d *compliance.Document) []byte {
	t.Helper()
	w, err := render.New(format)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := w.Write(&buf, d); err != nil {
		t.Fatalf("write %s: %v", format, err)
	}
	return buf.Bytes()
}

// TestWriters_golden: the report of CIS AWS 3.0 over acme, in every format, is byte for
// byte the file under testdata (go test ./compliance/render -update rewrites them).
func TestWriters_golden(t *testing.T) {
	d := acmeDocument(t, "cis-aws-3.0")
	ext := map[string]string{"html": "html", "csv": "csv", "json": "json", "sarif": "sarif", "ocsf": "ocsf.json"}
	for _, format := range render.Formats() {
		t.Run(format, func(t *testing.T) {
			got := write(t, format, d)
			path := filepath.Join("testdata", "cis-aws-3.0."+ext[format]+".golden")
			golden.Check(t, path, got, "go test ./compliance/render -update")
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestWriters_deterministic: the same document gives the same bytes, for every framework
// and format (map order must never leak into a report).
func TestWriters_deterministic(t *testing.T) {
	for _, id := range []string{"soc2", "iso-27001-2022"} {
		d := acmeDocument(t, id)
		for _, format := range render.Formats() {
			if a, b := write(t, format, d), write(t, format, d); !bytes.Equal(a, b) {
				t.Errorf("%s %s: two writes of one document differ at byte %d", id, format, firstDiff(a, b))
			}
		}
	}
}

func TestNew_formats(t *testing.T) {
	if got, want := render.Formats(), []string{"html", "csv", "json", "sarif", "ocsf"}; !slices.Equal(got, want) {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	for _, f := range append(render.Formats(), "HTML", "Sarif") {
		if _, err := render.New(f); err != nil {
			t.Errorf("New(%q): %v", f, err)
		}
	}
	_, err := render.New("sraif")
	if err == nil || !strings.Contains(err.Error(), `unknown report format "sraif" (did you mean "sarif"?)`) ||
		!strings.Contains(err.Error(), "html, csv, json, sarif, ocsf") {
		t.Errorf("New(sraif) error = %v, want one naming the formats and suggesting sarif", err)
	}
}

func TestWriters_refuseADocumentWithoutReport(t *testing.T) {
	for _, f := range render.Formats() {
		w, _ := render.New(f)
		var buf bytes.Buffer
		if err := w.Write(&buf, &compliance.Document{}); err == nil || buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes and err %v for a document without report, want an error and nothing", f, buf.Len(), err)
		}
	}
}

// TestJSON_roundTrips: for every framework, the JSON parses back into a Document equal to
// the one written — every exported field, times by instant.
func TestJSON_roundTrips(t *testing.T) {
	for _, id := range frameworkIDs {
		t.Run(id, func(t *testing.T) {
			d := acmeDocument(t, id)
			b := write(t, "json", d)
			var back compliance.Document
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&back); err != nil {
				t.Fatal(err)
			}
			if err := sameExported(reflect.ValueOf(d).Elem(), reflect.ValueOf(&back).Elem(), "Document"); err != nil {
				t.Error(err)
			}
			if len(back.Report.Controls) == 0 || back.Checkpoint == nil || len(back.Fixes) == 0 || len(back.Trend) == 0 {
				t.Errorf("round trip lost parts: %d controls, checkpoint %v, %d fixes, %d trend points",
					len(back.Report.Controls), back.Checkpoint, len(back.Fixes), len(back.Trend))
			}
		})
	}
}

// sameExported compares the exported fields of two values: the unexported ones (a
// control's compiled key_match, the lines it was parsed from) are not part of the
// document. JSON does not tell a nil list from an empty one, nor an int from a float in
// an any; times are compared as instants.
func sameExported(a, b reflect.Value, path string) error {
	if a.Type() == reflect.TypeFor[time.Time]() {
		if ta, tb := a.Interface().(time.Time), b.Interface().(time.Time); !ta.Equal(tb) {
			return fmt.Errorf("%s: %v, read back as %v", path, ta, tb)
		}
		return nil
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Errorf("%s: nil %v, read back nil %v", path, a.IsNil(), b.IsNil())
			}
			return nil
		}
		return sameExported(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				if err := sameExported(a.Field(i), b.Field(i), path+"."+f.Name); err != nil {
					return err
				}
			}
		}
		return nil
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Errorf("%s: %d elements, read back %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if err := sameExported(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Errorf("%s: %d keys, read back %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			vb := b.MapIndex(k)
			if !vb.IsValid() {
				return fmt.Errorf("%s: key %v lost", path, k)
			}
			if err := sameExported(a.MapIndex(k), vb, fmt.Sprintf("%s[%v]", path, k)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		ja, _ := json.Marshal(a.Interface())
		jb, _ := json.Marshal(b.Interface())
		if !bytes.Equal(ja, jb) {
			return fmt.Errorf("%s: %s, read back %s", path, ja, jb)
		}
		return nil
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Errorf("%s: %v, read back %v", path, a.Interface(), b.Interface())
	}
	return nil
}

// TestCSV_rowPerControlAndEvidence: for every framework, the CSV parses with
// encoding/csv into a header and one row per control × finding of its evidence (one for
// a control without), in the framework's order.
func TestCSV_rowPerControlAndEvidence(t *testing.T) {
	for _, id := range frameworkIDs {
		t.Run(id, func(t *testing.T) {
			d := acmeDocument(t, id)
			b := write(t, "csv", d)
			if !bytes.Contains(b, []byte("\r\n")) {
				t.Error("lines do not end in CRLF (RFC 4180)")
			}
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			header := rows[0]
			col := map[string]int{}
			for i, h := range header {
				col[h] = i
			}
			for _, h := range []string{"control_id", "control_title", "family", "status", "reason", "policy", "resource", "account",
				"region", "severity", "finding_message", "waiver_owner", "waiver_reason", "waiver_expires", "fingerprint"} {
				if _, ok := col[h]; !ok {
					t.Errorf("header %v lacks %s", header, h)
				}
			}
			var want []string // the control id of each row
			evidence := 0
			for _, c := range d.Report.Controls {
				n := len(c.Failing) + len(c.Unknown) + len(c.Waived)
				evidence += n
				for range max(n, 1) {
					want = append(want, c.ID)
				}
			}
			if evidence == 0 {
				t.Fatal("no control has evidence: the test would not see evidence rows")
			}
			var got []string
			waived := 0
			for _, r := range rows[1:] {
				got = append(got, r[col["control_id"]])
				if r[col["evidence"]] == "waived" {
					waived++
					if r[col["waiver_owner"]] == "" || r[col["waiver_expires"]] == "" {
						t.Errorf("waived row without owner or expiry: %v", r)
					}
				}
				if strings.HasPrefix(r[col["waiver_reason"]], "-") {
					t.Errorf("waiver reason %q is not guarded against formula injection", r[col["waiver_reason"]])
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d rows (controls %v…), want %d: one per control × evidence", len(got), got[:min(5, len(got))], len(want))
			}
			if waived == 0 && slices.ContainsFunc(d.Report.Controls, func(c compliance.ControlResult) bool { return len(c.Waived) > 0 }) {
				t.Error("no waived row, though a control has a waived finding")
			}
		})
	}
}

// TestCSV_guardsFormulaInjection: a cell a spreadsheet would evaluate gets a leading ',
// and reads back as text; other cells are unchanged, quotes and newlines included.
func TestCSV_guardsFormulaInjection(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hostile := []string{`=HYPERLINK("http://evil.example","click")`, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tSUM(1)", "\r=1"}
	var fs []findings.Finding
	for i, h := range hostile {
		fs = append(fs, findings.Finding{Policy: "P-1", Resource: h, Message: "plain, \"quoted\"\nand two lines", Fingerprint: fmt.Sprint(i),
			Status: findings.StatusWaived, Waiver: &findings.WaiverRef{Owner: h, Reason: h, Expires: at}})
	}
	d := &compliance.Document{Report: &compliance.Report{
		Framework: compliance.Info{ID: "x"},
		Controls: []compliance.ControlResult{{Control: compliance.Control{ID: "=1", Title: "@title", Family: "-f"},
			Status: compliance.StatusPass, Reason: "+reason", Waived: fs}},
	}}
	rows, err := csv.NewReader(bytes.NewReader(write(t, "csv", d))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(hostile) {
		t.Fatalf("%d rows, want %d", len(rows), 1+len(hostile))
	}
	for i, r := range rows[1:] {
		for j, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("row %d, column %s: %q starts with a formula character", i+1, rows[0][j], cell)
			}
		}
		// encoding/csv with CRLF line ends drops a carriage return that ends no line.
		if want := "'" + strings.ReplaceAll(hostile[i], "\r", ""); r[8] != want || r[13] != want || r[14] != want {
			t.Errorf("row %d: resource %q, owner %q, reason %q; want each %q", i+1, r[8], r[13], r[14], want)
		}
		if r[0] != "'=1" || r[1] != "'@title" || r[5] != "'+reason" {
			t.Errorf("row %d: control cells %q", i+1, r[:6])
		}
		if r[12] != "plain, \"quoted\"\nand two lines" {
			t.Errorf("row %d: message %q, want it unchanged", i+1, r[12])
		}
	}
}
