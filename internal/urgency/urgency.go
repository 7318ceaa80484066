// Package urgency lets urgent work go first in a busy replica. A drift announced by an
// event and its fix are urgent; a sweep of the organisation is not. Go schedules every
// goroutine alike, so while dozens of a sweep's reads, judgements and fixes run, an
// event's few steps get a small share of the cores and of the store's writer. A Gate
// counts the urgent work in progress, and work that is not urgent waits at its yield
// points (before an AWS call, before judging a scope, before a swept fix starts) while
// there is some, for a bounded time, so that a stream of events cannot stop a sweep.
//
// Work yields only where it holds nothing urgent work could need: a fix in progress
// holds its target's lock and finishes; the next one waits.
package urgency

import (
	"context"
	"sync"
	"time"
)

// Gate counts urgent work in progress. The zero value is not usable: see NewGate.
type Gate struct {
	max time.Duration

	mu    sync.Mutex
	n     int
	clear chan struct{} // closed while no urgent work is in progress
}

// NewGate returns a gate at which work that is not urgent waits at most max at a time.
func NewGate(max time.Duration) *Gate {
	c := make(chan struct{})
	close(c)
	return &Gate{max: max, clear: c}
}

// Enter marks urgent work in progress until leave is called, once.
func (g *Gate) Enter() (leave func()) {
	g.mu.Lock()
	if g.n == 0 {
		g.clear = make(chan struct{})
	}
	g.n++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.n--
			if g.n == 0 {
				close(g.clear)
			}
			g.mu.Unlock()
		})
	}
}

// Busy reports whether urgent work is in progress.
func (g *Gate) Busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n > 0
}

// Wait returns once no urgent work is in progress, or after the gate's longest wait,
// with nil; or when ctx ends, with its error.
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	clear := g.clear
	g.mu.Unlock()
	select {
	case <-clear:
		return nil
	default:
	}
	t := time.NewTimer(g.max)
	defer t.Stop()
	select {
	case <-clear:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

type gateKey struct{}

type urgentKey struct{}

// WithGate returns ctx under which work yields to g's urgent work (Yield).
func WithGate(ctx context.Context, g *Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

// Urgent returns ctx marked as urgent work's own: under it, Yield never waits.
func Urgent(ctx context.Context) context.Context {
	return context.WithValue(ctx, urgentKey{}, true)
}

// IsUrgent reports whether ctx is urgent work's own (Urgent): a resource shared with
// other work (the store's writer) serves it first.
func IsUrgent(ctx context.Context) bool {
	u, _ := ctx.Value(urgentKey{}).(bool)
	return u
}

// Yield waits at ctx's gate (WithGate), unless ctx is urgent or has none. Its error is
// ctx's.
func Yield(ctx context.Context) error {
	g, _ := ctx.Value(gateKey{}).(*Gate)
	if g == nil {
		return nil
	}
	if IsUrgent(ctx) {
		return nil
	}
	return g.Wait(ctx)
}

// YieldEvery is Yield in a loop over items: it yields at item i when i is a positive
// multiple of every, so that a long loop on a core waits for urgent work every few
// milliseconds and a short one never.
func YieldEvery(ctx context.Context, i, every int) error {
	if i == 0 || i%every != 0 {
		return nil
	}
	return Yield(ctx)
}
