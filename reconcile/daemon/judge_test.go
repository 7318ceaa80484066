package daemon

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/urgency"
)

// TestJudgeTurn_asManyAsTheCoresAndTheEventsApart checks the judging turns of a replica:
// as many as its Workers but never more than its cores, for the sweep's collections and,
// apart, for the events': an event's collection does not wait for the sweep's judges,
// and a burst of events judges no more scopes at once than the sweep may.
func TestJudgeTurn_asManyAsTheCoresAndTheEventsApart(t *testing.T) {
	d := unstartedOnSQLite(t)
	want := min(d.o.Workers, runtime.GOMAXPROCS(0))
	sweep := urgency.WithGate(context.Background(), d.urgent)
	event := urgency.Urgent(sweep)
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"a sweep's", sweep}, {"an event's", event}} {
		t.Run(c.name, func(t *testing.T) {
			var releases []func()
			for i := range want {
				release, err := d.judgeTurn(c.ctx)
				if err != nil {
					t.Fatalf("turn %d of %d: %v", i+1, want, err)
				}
				releases = append(releases, release)
			}
			// One more waits, for these only.
			short, cancel := context.WithTimeout(c.ctx, 50*time.Millisecond)
			defer cancel()
			if _, err := d.judgeTurn(short); err == nil {
				t.Fatalf("a turn beyond the %d: taken, want a wait", want)
			}
			other := event
			if c.ctx == event {
				other = sweep
			}
			release, err := d.judgeTurn(other)
			if err != nil {
				t.Fatalf("the other kind's turn, while this kind's are all taken: %v", err)
			}
			release()
			// A turn given back is taken again at once.
			releases[0]()
			release, err = d.judgeTurn(c.ctx)
			if err != nil {
				t.Fatalf("a turn given back: %v", err)
			}
			release()
			for _, r := range releases[1:] {
				r()
			}
		})
	}
}
