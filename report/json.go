package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/scan"
)

// JSON writes the result as the finding JSON of DESIGN.md: scan, summary, findings[],
// expired_waivers, incomplete_scopes and eval_errors, in that order. The document is
// built here field by field, not by encoding the result whole, so what else the result
// carries for later steps (its header, its collection) never leaks into the contract;
// testdata/report.json.golden pins it. Findings are encoded one at a time, so that a
// report of a hundred thousand findings is never held in memory as one document.
type JSON struct{}

// Write implements Writer.
func (JSON) Write(w io.Writer, r *scan.Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	// Empty lists are written as [], not null, so that consumers need no special case.
	fields := []struct {
		name string
		v    any
	}{
		{"scan", r.Scan},
		{"summary", r.Summary},
		{"findings", nil},
		{"expired_waivers", nonNil(r.ExpiredWaivers)},
		{"incomplete_scopes", nonNil(r.IncompleteScopes)},
		{"eval_errors", nonNil(r.EvalErrors)},
	}
	bw.WriteString("{\n")
	for i, f := range fields {
		bw.WriteString(`  "` + f.name + `": `)
		if f.name == "findings" {
			if err := writeFindings(bw, r.Findings); err != nil {
				return err
			}
		} else if err := writeIndented(bw, f.v); err != nil {
			return err
		}
		if i < len(fields)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func writeFindings(w *bufio.Writer, fs []findings.Finding) error {
	if len(fs) == 0 {
		w.WriteString("[]")
		return nil
	}
	w.WriteString("[\n")
	for i := range fs {
		w.WriteString("    ")
		b, err := json.MarshalIndent(&fs[i], "    ", "  ")
		if err != nil {
			return err
		}
		w.Write(termesc.EscapeJSON(b))
		if i < len(fs)-1 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
	}
	w.WriteString("  ]")
	return nil
}

func writeIndented(w *bufio.Writer, v any) error {
	b, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(termesc.EscapeJSON(bytes.TrimSpace(b)))
	return err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
