package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/store"
)

// DiffJSON writes how findings moved from one recorded scan to the next as one JSON
// object: the two scans, then the new, resolved, still open and unknown findings.
func DiffJSON(w io.Writer, from, to store.ScanRecord, d findings.Diff) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		From     store.ScanRecord   `json:"from"`
		To       store.ScanRecord   `json:"to"`
		New      []findings.Finding `json:"new"`
		Resolved []findings.Finding `json:"resolved"`
		Open     []findings.Finding `json:"open"`
		Unknown  []findings.Finding `json:"unknown"`
	}{from, to, nonNil(d.New), nonNil(d.Resolved), nonNil(d.Open), nonNil(d.Unknown)}); err != nil {
		return err
	}
	_, err := w.Write(termesc.EscapeJSON(buf.Bytes()))
	return err
}

// DiffTable writes how findings moved from one recorded scan to the next: the new,
// resolved and unknown findings, one section each, then the counts.
func DiffTable(w io.Writer, from, to store.ScanRecord, d findings.Diff) {
	// Uids, messages and snapshot names come from resources: escaped, so that none can
	// drive the terminal.
	fmt.Fprintf(w, "scan %d (%s) → scan %d (%s)\n", from.ID, termesc.Escape(from.Snapshot), to.ID, termesc.Escape(to.Snapshot))
	section := func(name string, fs []findings.Finding) {
		fmt.Fprintf(w, "\n%s (%d)\n", name, len(fs))
		for _, f := range fs {
			fmt.Fprintf(w, "  %-8s %-20s %s\n    %s\n", f.Severity, termesc.Escape(f.Policy), termesc.Escape(f.Resource), termesc.Escape(f.Message))
		}
	}
	section("NEW", d.New)
	section("RESOLVED", d.Resolved)
	section("UNKNOWN", d.Unknown)
	fmt.Fprintf(w, "\n%d new, %d resolved, %d still open, %d unknown\n", len(d.New), len(d.Resolved), len(d.Open), len(d.Unknown))
}
