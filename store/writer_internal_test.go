package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/urgency"
)

// TestWriter_urgentFirstThenArrivalOrder queues transactions behind a held writer and
// checks the order they get it: urgent ones first, each kind in arrival order; a wait
// whose context ends leaves the line.
func TestWriter_urgentFirstThenArrivalOrder(t *testing.T) {
	var w writer
	queued := 0
	bg := context.Background()
	if err := w.lock(bg); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	cancelled, cancel := context.WithCancel(bg)
	queue := func(name string, ctx context.Context) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.lock(ctx); err != nil {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%s: %v", name, err)
				}
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			w.unlock()
		}()
		// Each in line before the next arrives.
		deadline := time.Now().Add(5 * time.Second)
		for {
			w.mu.Lock()
			n := len(w.urgent) + len(w.normal)
			w.mu.Unlock()
			if n == queued+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never queued", name)
			}
			time.Sleep(time.Millisecond)
		}
		queued++
	}
	queue("sweep-1", bg)
	queue("gone", cancelled)
	queue("event-1", urgency.Urgent(bg))
	queue("sweep-2", bg)
	queue("event-2", urgency.Urgent(bg))
	cancel()
	// The cancelled wait leaves the line before the writer is free.
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		n := len(w.urgent) + len(w.normal)
		w.mu.Unlock()
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled wait is still in line")
		}
		time.Sleep(time.Millisecond)
	}
	w.unlock()
	wg.Wait()
	want := []string{"event-1", "event-2", "sweep-1", "sweep-2"}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	if w.held {
		t.Error("the writer is still held after everyone left")
	}
}
