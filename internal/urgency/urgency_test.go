package urgency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/urgency"
)

// returnsWithin runs f and reports how long it took, failing if it took longer than d.
func returnsWithin(t *testing.T, d time.Duration, f func() error) (time.Duration, error) {
	t.Helper()
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return time.Since(began), err
	case <-time.After(d):
		t.Fatalf("still waiting after %v", d)
		return 0, nil
	}
}

func TestYield(t *testing.T) {
	g := urgency.NewGate(10 * time.Second)
	gated := urgency.WithGate(context.Background(), g)

	// Nothing urgent: no wait.
	if took, err := returnsWithin(t, time.Second, func() error { return urgency.Yield(gated) }); err != nil || took > 100*time.Millisecond {
		t.Fatalf("idle gate: waited %v (%v)", took, err)
	}

	leave := g.Enter()
	leave2 := g.Enter()
	if !g.Busy() {
		t.Fatal("not busy with urgent work in progress")
	}
	// Urgent work itself, and work under no gate, never wait.
	for name, ctx := range map[string]context.Context{"urgent": urgency.Urgent(gated), "no gate": context.Background()} {
		if took, err := returnsWithin(t, time.Second, func() error { return urgency.Yield(ctx) }); err != nil || took > 100*time.Millisecond {
			t.Fatalf("%s: waited %v (%v)", name, took, err)
		}
	}
	// Work that is not urgent waits until every urgent work has left.
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		leave()
		leave() // twice: counted once
		time.Sleep(50 * time.Millisecond)
		released <- time.Now()
		leave2()
	}()
	if _, err := returnsWithin(t, 5*time.Second, func() error { return urgency.Yield(gated) }); err != nil {
		t.Fatal(err)
	}
	if at := <-released; time.Now().Before(at) {
		t.Fatal("returned before the last urgent work left")
	}
	if g.Busy() {
		t.Fatal("busy after every urgent work left")
	}

	// A cancelled wait returns its context's error.
	leave = g.Enter()
	defer leave()
	ctx, cancel := context.WithCancel(gated)
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := returnsWithin(t, 5*time.Second, func() error { return urgency.Yield(ctx) }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestYield_waitsAtMostTheGatesLongest(t *testing.T) {
	g := urgency.NewGate(50 * time.Millisecond)
	leave := g.Enter()
	defer leave()
	took, err := returnsWithin(t, 5*time.Second, func() error { return urgency.Yield(urgency.WithGate(context.Background(), g)) })
	if err != nil || took < 50*time.Millisecond {
		t.Fatalf("waited %v (%v), want the gate's 50ms", took, err)
	}
}

// YieldEvery waits, as Yield does, only at the positive multiples of its step.
func TestYieldEvery(t *testing.T) {
	g := urgency.NewGate(50 * time.Millisecond)
	leave := g.Enter()
	defer leave()
	gated := urgency.WithGate(context.Background(), g)
	for _, c := range []struct {
		i     int
		waits bool
	}{{0, false}, {1, false}, {63, false}, {64, true}, {65, false}, {128, true}} {
		took, err := returnsWithin(t, 5*time.Second, func() error { return urgency.YieldEvery(gated, c.i, 64) })
		if err != nil {
			t.Fatal(err)
		}
		if waited := took >= 50*time.Millisecond; waited != c.waits {
			t.Errorf("item %d: waited %v, want a wait: %v", c.i, took, c.waits)
		}
	}
}
