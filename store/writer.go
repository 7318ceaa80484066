package store

import (
	"context"
	"slices"
	"sync"

	"github.com/warden-sec/warden/internal/urgency"
)

// writer queues the store's SQLite transactions in the process, one at a time, urgent
// ones (urgency.Urgent: an event's refresh and fix) first, each kind in arrival order.
// SQLite has one writer, and a transaction that finds the file locked polls for it
// (busy_timeout) with growing sleeps: among dozens of writers, the one that gets it is a
// lottery, and a drift's few writes could wait behind a sweep's many. Waiting here
// instead hands the lock over the moment it is free, to the next in line. SQLite's own
// lock still guards the file against other processes and the job queue's pool.
type writer struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{}
	normal []chan struct{}
}

// lock waits for the writer's turn: ctx's error if it ends first.
func (w *writer) lock(ctx context.Context) error {
	w.mu.Lock()
	if !w.held {
		w.held = true
		w.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	queue := &w.normal
	if urgency.IsUrgent(ctx) {
		queue = &w.urgent
	}
	*queue = append(*queue, turn)
	w.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		w.mu.Lock()
		if i := slices.Index(*queue, turn); i >= 0 {
			*queue = slices.Delete(*queue, i, i+1)
			w.mu.Unlock()
			return ctx.Err()
		}
		w.mu.Unlock()
		// The turn came as ctx ended: pass it on.
		w.unlock()
		return ctx.Err()
	}
}

// unlock hands the writer to the next in line, urgent first, or frees it.
func (w *writer) unlock() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, q := range []*[]chan struct{}{&w.urgent, &w.normal} {
		if len(*q) > 0 {
			next := (*q)[0]
			*q = slices.Delete(*q, 0, 1)
			close(next)
			return
		}
	}
	w.held = false
}
