package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress draws a one-line counter on a terminal and nothing when output is piped.
type progress struct {
	w     io.Writer
	label string
	mu    sync.Mutex
	last  time.Time
	shown bool
	start time.Time
}

func newProgress(w io.Writer, label string) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{w: w, label: label, start: time.Now()}
}

// update is safe to call often: it redraws at most ten times a second.
func (p *progress) update(n int) { p.updateWith(n, nil) }

// updateWith is update with more to say after the count ("12 scopes read"); more is
// only called when the line is redrawn.
func (p *progress) updateWith(n int, more func() string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	rate := float64(n) / max(time.Since(p.start).Seconds(), 1e-3)
	tail := ""
	if more != nil {
		tail = ", " + more()
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s %d resources (%.0f/s)%s", p.label, n, rate, tail)
	p.shown = true
}

func (p *progress) done() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}
