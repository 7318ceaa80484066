// Package atomicfile writes files whole or not at all, as warden's --out flags, its demo
// and its benchmarks write them.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteOr writes the file path as Write does, or to w when path is empty: an --out flag
// left unset means standard output.
func WriteOr(path string, w io.Writer, write func(io.Writer) error) error {
	if path == "" {
		return write(w)
	}
	return Write(path, write)
}

// Write writes a file through a temporary one renamed into place, so that a failure
// never leaves half a file behind. A path that is not a regular file (/dev/null,
// /dev/stdout, a pipe) is written in place: renaming over it would replace the device
// with a file. A symbolic link is followed, so that its target is what gets replaced.
func Write(path string, write func(io.Writer) error) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warden-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
