// Package progress draws a one-line counter of resources on a terminal, as warden's
// collections and scans advance, and nothing when the output is not a terminal.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Line is a counter redrawn in place. A nil *Line draws nothing: every method may be
// called on it.
type Line struct {
	w     io.Writer
	label string
	mu    sync.Mutex
	last  time.Time
	shown bool
	start time.Time
}

// New is a counter labelled label ("collected 1200 resources (400/s)") on w, or nil
// when w is not a terminal.
func New(w io.Writer, label string) *Line {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &Line{w: w, label: label, start: time.Now()}
}

// Update is safe to call often: it redraws at most ten times a second.
func (p *Line) Update(n int) { p.UpdateWith(n, nil) }

// UpdateWith is Update with more to say after the count ("12 scopes read"); more is
// only called when the line is redrawn.
func (p *Line) UpdateWith(n int, more func() string) {
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

// Done clears the line, if it was ever drawn.
func (p *Line) Done() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
}

// Writer is the terminal the line is drawn on.
func (p *Line) Writer() io.Writer { return p.w }
