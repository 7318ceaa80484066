package snapshot

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Writer streams a snapshot: the header first, then one resource per line, then the
// scopes, which collectors only know in full at the end.
type Writer struct {
	w      *bufio.Writer
	n      int
	scopes []Scope
	closed bool
}

// NewWriter writes the header fields of h (all but Scopes) and opens the resources array.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	if h.CollectedAt.IsZero() {
		h.CollectedAt = time.Now().UTC()
	}
	head := struct {
		Version     int       `json:"version"`
		CollectedAt time.Time `json:"collected_at"`
		Source      string    `json:"source,omitempty"`
		Accounts    []string  `json:"accounts,omitempty"`
	}{Version, h.CollectedAt.UTC(), h.Source, h.Accounts}
	b, err := json.Marshal(head)
	if err != nil {
		return nil, fmt.Errorf("write snapshot header: %w", err)
	}
	bw.Write(b[:len(b)-1])
	bw.WriteString(",\n\"resources\": [")
	return &Writer{w: bw, scopes: h.Scopes}, nil
}

// Write appends one resource.
func (w *Writer) Write(r Resource) error {
	if w.closed {
		return errors.New("write snapshot: writer is closed")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("write resource %s: %w", r.UID, err)
	}
	if w.n > 0 {
		w.w.WriteByte(',')
	}
	w.w.WriteByte('\n')
	w.n++
	_, err = w.w.Write(b)
	return err
}

// AddScope records a scope, written when the writer is closed.
func (w *Writer) AddScope(s Scope) { w.scopes = append(w.scopes, s) }

// Count is the number of resources written so far.
func (w *Writer) Count() int { return w.n }

// Close writes the scopes and ends the snapshot. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.w.WriteString("\n],\n\"scopes\": [")
	for i, s := range w.scopes {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("write scope %s: %w", s.ID, err)
		}
		if i > 0 {
			w.w.WriteByte(',')
		}
		w.w.WriteString("\n")
		w.w.Write(b)
	}
	w.w.WriteString("\n]}\n")
	return w.w.Flush()
}

// ReadAll reads a whole snapshot into memory: for tests and small snapshots; the engine
// streams instead.
func ReadAll(r io.Reader, name string) (Header, []Resource, error) {
	rd := NewReader(r, name)
	p := NewParser(name)
	var out []Resource
	for {
		el, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Header{}, nil, err
		}
		if len(out) == 0 {
			p.SetCollectedAt(rd.Header().CollectedAt)
		}
		res, err := p.Decode(el)
		if err != nil {
			return Header{}, nil, err
		}
		out = append(out, res)
	}
	return rd.Header(), out, nil
}

// ReadFile reads a whole snapshot file; see ReadAll.
func ReadFile(path string) (Header, []Resource, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, fmt.Errorf("read snapshot: %w", err)
	}
	defer f.Close()
	return ReadAll(f, path)
}

// WriteFile writes a whole snapshot to path atomically (a temporary file renamed into place),
// so that a crash never leaves half a snapshot behind.
func WriteFile(path string, h Header, resources []Resource) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".snapshot-*")
	if err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	w, err := NewWriter(tmp, h)
	if err != nil {
		tmp.Close()
		return err
	}
	for _, r := range resources {
		if err := w.Write(r); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		tmp.Close()
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
