package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/internal/termesc"
)

// JSON writes the whole document, indented: the report with every control and its
// evidence, the source, the checkpoint, the scopes, the fixes, the trend and the
// convergence. Struct fields keep their declared order and encoding/json sorts map keys,
// so the same document always gives the same bytes.
type JSON struct{}

// Write implements Writer.
func (JSON) Write(w io.Writer, d *compliance.Document) error {
	if err := check(d); err != nil {
		return fmt.Errorf("write compliance JSON: %w", err)
	}
	// Empty lists are written as [], not null, as the scan report does, so that consumers
	// need no special case. A shallow copy: the caller's document is not touched.
	out := *d
	out.Scopes = nonNil(out.Scopes)
	out.Fixes = nonNil(out.Fixes)
	out.Trend = nonNil(out.Trend)
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("write compliance JSON of %s: %w", d.Report.Framework.ID, err)
	}
	bw := bufio.NewWriter(w)
	// A report piped to a terminal cannot drive it: the same escaping as the scan report.
	bw.Write(termesc.EscapeJSON(b))
	bw.WriteByte('\n')
	return bw.Flush()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
