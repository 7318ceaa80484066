package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
)

// A Source is where a scan's snapshot comes from: a file (File), a stream (Reader), or
// a live collection (Live).
type Source interface {
	// open starts reading the snapshot. The set of sources is closed: each one knows
	// what its name in errors and the history is, and what to release.
	open(ctx context.Context) (*opened, error)
}

// opened is a source being read.
type opened struct {
	r          io.Reader
	name       string
	collection *collect.Summary
	close      func() error
}

// Path is a --snapshot flag's source: the file at path (File), or for "-" the snapshot
// streamed on stdin (Reader), named "-".
func Path(path string, stdin io.Reader) Source {
	if path == "-" {
		return Reader(stdin, "-")
	}
	return File(path)
}

// File is the snapshot file at path; "-" is not special here (see Reader).
func File(path string) Source { return fileSource{path} }

type fileSource struct{ path string }

func (s fileSource) open(context.Context) (*opened, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	return &opened{r: f, name: s.path, close: f.Close}, nil
}

// Reader is a snapshot streamed from r (standard input, a pipe), named name in reports,
// errors and the history. The scan does not close r.
func Reader(r io.Reader, name string) Source { return readerSource{r, name} }

type readerSource struct {
	r    io.Reader
	name string
}

func (s readerSource) open(context.Context) (*opened, error) {
	return &opened{r: s.r, name: s.name, close: func() error { return nil }}, nil
}

// LiveName is the name a live collection goes by in reports and the history.
const LiveName = "live targets"

// Live collects the world with cs (collect.Resolve) and scans what was read. The
// snapshot is spooled to a temporary file, removed when the scan ends, and evaluated
// once the collection has finished: a collection that fails is an error before anything
// is judged (never half a world scanned), and the two phases' progress lines do not
// interleave. A collection error is returned as it is: the temporary file is no concern
// of the user's.
func Live(cs []collectors.Collector, opts collect.Options) Source {
	return liveSource{cs: cs, opts: opts}
}

type liveSource struct {
	cs   []collectors.Collector
	opts collect.Options
}

func (s liveSource) open(ctx context.Context) (*opened, error) {
	if len(s.cs) == 0 {
		return nil, collect.ErrNoTargets
	}
	f, err := os.CreateTemp("", "warden-scan-*.json")
	if err != nil {
		return nil, fmt.Errorf("collect: spool the snapshot: %w", err)
	}
	release := func() error { return errors.Join(f.Close(), os.Remove(f.Name())) }
	sum, err := collect.Run(ctx, f, s.cs, s.opts)
	if err != nil {
		_ = release()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		_ = release()
		return nil, fmt.Errorf("collect: read the spooled snapshot back: %w", err)
	}
	return &opened{r: f, name: LiveName, collection: &sum, close: release}, nil
}

// ParseNow reads a --now flag: an RFC 3339 time to evaluate at instead of the
// snapshot's collected_at, or the zero time (collected_at) when the flag is empty.
func ParseNow(flag string) (time.Time, error) {
	if flag == "" {
		return time.Time{}, nil
	}
	now, err := time.Parse(time.RFC3339, flag)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now: want an RFC 3339 time such as 2026-11-30T12:00:00Z: %w", err)
	}
	return now, nil
}
