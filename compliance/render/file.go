package render

import (
	"fmt"
	"io"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/termesc"
)

// WriteFile writes doc with w, in format, to the file path (atomically, mode 0600), or to
// stdout when path is empty; a file written is announced on notes with the report's
// score, since its content is not on the terminal (warden report).
func WriteFile(w Writer, format string, doc *compliance.Document, path string, stdout, notes io.Writer) error {
	if err := atomicfile.WriteOr(path, stdout, func(out io.Writer) error { return w.Write(out, doc) }); err != nil || path == "" {
		return err
	}
	s := doc.Report.Score
	fmt.Fprintf(notes, "warden: %s report of %s (scan %d) written to %s: %d pass, %d fail, %d unknown, %d not covered, %d manual\n",
		format, doc.Report.Framework.ID, doc.Source.ScanID, termesc.Escape(path), s.Pass, s.Fail, s.Unknown, s.NotCovered, s.Manual)
	return nil
}
