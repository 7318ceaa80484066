package daemon_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

// barrierReads holds each collection's read until want of them are reading at once, or
// a timeout passes: a replica that read fewer at once would wait out the timeout on each.
// It reads through c, which it is given once the harness has made it (ready).
type barrierReads struct {
	ready chan struct{}
	c     collectors.ScopeCollector
	want  int

	mu       sync.Mutex
	inFlight int
	most     int
	reached  chan struct{}
}

func (b *barrierReads) Name() string { return "aws" }

func (b *barrierReads) wait(ctx context.Context) error {
	select {
	case <-b.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *barrierReads) Collect(ctx context.Context, sink collectors.Sink) error {
	if err := b.wait(ctx); err != nil {
		return err
	}
	return b.c.Collect(ctx, sink)
}

func (b *barrierReads) Scopes(ctx context.Context) ([]snapshot.Scope, error) {
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b.c.Scopes(ctx)
}

func (b *barrierReads) CollectScope(ctx context.Context, id string, sink collectors.Sink) error {
	if err := b.wait(ctx); err != nil {
		return err
	}
	b.mu.Lock()
	b.inFlight++
	b.most = max(b.most, b.inFlight)
	if b.inFlight == b.want {
		close(b.reached)
	}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.inFlight--
		b.mu.Unlock()
	}()
	select {
	case <-b.reached:
	case <-time.After(3 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	return b.c.CollectScope(ctx, id, sink)
}

// A replica reads Readers scopes at once, however few Workers it has: a paced sweep
// waits on each account's rate limits, not on the replica's turns. What it read is
// judged one Workers turn at a time, and the sweep converges as before.
func TestDaemon_readsManyScopesAtOnceAndJudgesWorkersAtATime(t *testing.T) {
	dsn := storetest.Backends(t)["sqlite"]
	// Judging's intervals, from the observe stage's end and length.
	var mu sync.Mutex
	type span struct{ from, to time.Time }
	var judged []span
	b := &barrierReads{ready: make(chan struct{}), reached: make(chan struct{})}
	opts := daemon.Options{Workers: 1, Readers: 4, ApprovalPoll: time.Hour,
		Hooks: daemon.Hooks{Stage: func(stage string, took time.Duration, _ error) {
			if stage == "observe" {
				mu.Lock()
				defer mu.Unlock()
				now := time.Now()
				judged = append(judged, span{now.Add(-took), now})
			}
		}}}
	// The harness makes the collector; the target reads through it once it is made.
	opts.Targets = []daemon.Target{{Name: "aws", Collector: b, Schedule: river.PeriodicInterval(time.Hour)}}
	h := start(t, dsn(t), 2, opts)
	scopes, err := h.e.Reader.Scopes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(scopes) < 2 {
		t.Fatalf("the world has %d scopes: too few to read at once", len(scopes))
	}
	b.c, b.want = h.e.Reader, min(4, len(scopes))
	close(b.ready)
	waitFor(t, "the first sweep", func() bool { return h.count(daemon.KindSweep+"/completed") >= 1 })
	h.idle()
	select {
	case <-b.reached:
	default:
		b.mu.Lock()
		defer b.mu.Unlock()
		t.Fatalf("at most %d collections read at once, want %d (Readers 4, Workers 1)", b.most, b.want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(judged) == 0 {
		t.Fatal("no collection was judged")
	}
	for i, a := range judged {
		for _, c := range judged[i+1:] {
			// Each interval is measured around the judging itself, within the token.
			if a.from.Before(c.to) && c.from.Before(a.to) {
				t.Errorf("two collections judged at once (%v–%v and %v–%v), with Workers 1", a.from, a.to, c.from, c.to)
			}
		}
	}
	if got := h.count(daemon.KindCollect + "/completed"); got != len(scopes) {
		t.Errorf("%d collections completed, want one per scope (%d)", got, len(scopes))
	}
}

// countedReads reads through c, each read taking a while, and counts the most reads in
// flight at once.
type countedReads struct {
	ready chan struct{}
	c     collectors.ScopeCollector

	mu             sync.Mutex
	inFlight, most int
}

func (r *countedReads) Name() string { return "aws" }

func (r *countedReads) Collect(ctx context.Context, sink collectors.Sink) error {
	<-r.ready
	return r.c.Collect(ctx, sink)
}

func (r *countedReads) Scopes(ctx context.Context) ([]snapshot.Scope, error) {
	<-r.ready
	return r.c.Scopes(ctx)
}

func (r *countedReads) CollectScope(ctx context.Context, id string, sink collectors.Sink) error {
	<-r.ready
	r.mu.Lock()
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()
	select {
	case <-time.After(200 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	return r.c.CollectScope(ctx, id, sink)
}

// Of its Readers collections, a replica reads at most FullReads scopes in full at once:
// a full read holds its whole scope until it is judged.
func TestDaemon_fullReadsBoundTheScopesReadInFull(t *testing.T) {
	dsn := storetest.Backends(t)["sqlite"]
	r := &countedReads{ready: make(chan struct{})}
	opts := daemon.Options{Workers: 2, Readers: 3, FullReads: 2, ApprovalPoll: time.Hour}
	opts.Targets = []daemon.Target{{Name: "aws", Collector: r, Schedule: river.PeriodicInterval(time.Hour)}}
	h := start(t, dsn(t), 4, opts)
	scopes, err := h.e.Reader.Scopes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(scopes) < 3 {
		t.Fatalf("the world has %d scopes: too few", len(scopes))
	}
	r.c = h.e.Reader
	close(r.ready)
	waitFor(t, "the first sweep", func() bool { return h.count(daemon.KindSweep+"/completed") >= 1 })
	h.idle()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.most != 2 {
		t.Errorf("at most %d scopes read in full at once, want FullReads (2) of the 3 readers", r.most)
	}
	if got := h.count(daemon.KindCollect + "/completed"); got != len(scopes) {
		t.Errorf("%d collections completed, want one per scope (%d)", got, len(scopes))
	}
}
