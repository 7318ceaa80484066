//go:build unix

package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWrite: a file (--out, -o) is replaced a regular file whole, write through a link to
// its target, and write a device or pipe in place instead of renaming a file over it (as
// root, `-o /dev/null` once replaced /dev/null with a regular file).
func TestWrite(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (path string, read func() string)
		fail  bool   // the writer fails
		want  string // what the path then reads
		mode  os.FileMode
	}{
		{"new file", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "out.json")
			return p, func() string { return readFile(t, p) }
		}, false, "new", 0},
		{"existing file", func(t *testing.T, dir string) (string, func() string) {
			p := writeFile(t, dir, "out.json", "old content")
			return p, func() string { return readFile(t, p) }
		}, false, "new", 0},
		{"failed write keeps the old file", func(t *testing.T, dir string) (string, func() string) {
			p := writeFile(t, dir, "out.json", "old")
			return p, func() string { return readFile(t, p) }
		}, true, "old", 0},
		{"symbolic link", func(t *testing.T, dir string) (string, func() string) {
			target := writeFile(t, dir, "data/snap.json", "old")
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link, func() string { return readFile(t, target) }
		}, false, "new", os.ModeSymlink},
		{"named pipe", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "pipe")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no named pipes here:", err)
			}
			got := make(chan string, 1)
			go func() {
				b, _ := os.ReadFile(p)
				got <- string(b)
			}()
			return p, func() string {
				select {
				case s := <-got:
					return s
				case <-time.After(5 * time.Second):
					return "(nothing reached the pipe's reader)"
				}
			}
		}, false, "new", os.ModeNamedPipe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, read := tc.setup(t, dir)
			err := Write(path, func(w io.Writer) error {
				if _, err := io.WriteString(w, "new"); err != nil {
					return err
				}
				if tc.fail {
					return errors.New("collector failed")
				}
				return nil
			})
			if (err != nil) != tc.fail {
				t.Fatalf("Write = %v, want failure %v", err, tc.fail)
			}
			st, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Type() != tc.mode {
				t.Errorf("%s is now %v, want %v", path, st.Mode().Type(), tc.mode)
			}
			if got := read(); got != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "**", ".warden-*"))
			top, _ := filepath.Glob(filepath.Join(dir, ".warden-*"))
			if len(left)+len(top) > 0 {
				t.Errorf("temporary files left behind: %v %v", left, top)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// An --out left empty writes to the stream given, and makes no file.
func TestWriteOr_emptyPathWritesTheStream(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteOr("", &buf, func(w io.Writer) error { _, err := io.WriteString(w, "report"); return err }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out")
	if err := WriteOr(path, &buf, func(w io.Writer) error { _, err := io.WriteString(w, "file"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "file" || buf.String() != "report" {
		t.Errorf("file %q (%v), stream %q", b, err, buf.String())
	}
}
