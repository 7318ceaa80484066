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

// Print writes the documents to files in dir (WriteDir), or prints them on w (Write)
// when dir is "".
func Print(w io.Writer, dir string, docs []Document) error {
	if dir == "" {
		return Write(w, docs)
	}
	return WriteDir(dir, docs, w)
}

// WriteDir writes each document to dir/NAME, atomically, creating dir (and NAME's own
// directory: a Terraform module's files are DIR/FILE) if needed, and names each file
// written on w.
func WriteDir(dir string, docs []Document, w io.Writer) error {
	for _, d := range docs {
		path := filepath.Join(dir, filepath.FromSlash(d.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
		}
		if err := atomicfile.Write(path, func(out io.Writer) error { _, err := out.Write(d.Body); return err }); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		fmt.Fprintf(w, "wrote %s: %s\n", path, d.About)
	}
	return nil
}
