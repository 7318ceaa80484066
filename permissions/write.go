package permissions

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/warden-sec/warden/internal/atomicfile"
)

// Write prints the documents on w: one as it is, several one after the other, each under
// a "# file: NAME (ABOUT)" line.
func Write(w io.Writer, docs []Document) error {
	for i, d := range docs {
		if len(docs) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "# file: %s (%s)\n", d.Name, d.About)
		}
		if _, err := w.Write(d.Body); err != nil {
			return err
		}
	}
	return nil
}

// WriteDir writes each document to dir/NAME, atomically, creating dir if needed, and
// names each file written on w.
func WriteDir(dir string, docs []Document, w io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, d := range docs {
		path := filepath.Join(dir, d.Name)
		if err := atomicfile.Write(path, func(out io.Writer) error { _, err := out.Write(d.Body); return err }); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		fmt.Fprintf(w, "wrote %s: %s\n", path, d.About)
	}
	return nil
}
