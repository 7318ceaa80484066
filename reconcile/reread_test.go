package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

// readerOf reads resources back from a fixed set, as a collector's Reader would.
type readerOf map[string]snapshot.Resource

func (r readerOf) Read(_ context.Context, uid string) (snapshot.Resource, error) {
	return r[uid], nil
}

// TestObserveUnchanged: the tape of a complete read is kept and handed to the next read
// while the scope is judged with the same version and not due in full; a replay that
// found the scope unchanged records the read's time and nothing else; anything that
// changed the scope's state since (a refresh, another read) voids the tape, and a
// replay of a void tape records nothing.
func TestObserveUnchanged(t *testing.T) {
	const scope = "aws/111111111111/iam"
	ctx := context.Background()
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, dsn(t), reconcile.Options{FullEvery: 24 * time.Hour})
			tapeNow := func() []byte {
				t.Helper()
				st, known, err := e.r.Scope(ctx, scope)
				if err != nil {
					t.Fatal(err)
				}
				tape, err := e.r.Tape(ctx, st, known, e.clock())
				if err != nil {
					t.Fatal(err)
				}
				return tape
			}
			if tape := tapeNow(); tape != nil {
				t.Fatalf("a scope never read has a tape: %q", tape)
			}
			ob := e.read(scope)
			ob.Tape = []byte("tape one")
			first := e.observe(ob)
			if string(tapeNow()) != "tape one" {
				t.Fatalf("after a complete read, the tape is %q", tapeNow())
			}
			statuses, opened := e.statuses(scope), e.audited("finding.opened")

			e.advance(time.Hour)
			out, err := e.r.ObserveUnchanged(ctx, scope, []byte("tape one"), 17, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if !out.Replayed || out.Status != snapshot.ScopeOK || out.Resources != first.Resources || out.Evaluated != 0 || len(out.Opened)+len(out.Resolved) != 0 {
				t.Fatalf("replayed unchanged: %+v; want the scope's %d resources, nothing evaluated", out, first.Resources)
			}
			st, _, err := e.r.Scope(ctx, scope)
			if err != nil {
				t.Fatal(err)
			}
			if !st.ReadAt.Equal(e.clock()) || !st.OKAt.Equal(e.clock()) || st.Scope.Calls != 17 {
				t.Fatalf("after the replay the scope reads %+v; want read and ok now (%v), 17 calls", st, e.clock())
			}
			if got := e.statuses(scope); len(got) != len(statuses) || got["open"] != statuses["open"] || e.audited("finding.opened") != opened {
				t.Fatalf("the replay changed findings: %v (was %v)", got, statuses)
			}
			if string(tapeNow()) != "tape one" {
				t.Fatal("the replay lost the tape")
			}

			// A tape that is not the scope's: nothing recorded.
			if _, err := e.r.ObserveUnchanged(ctx, scope, []byte("another"), 1, time.Time{}); !reconcile.ErrConcurrent(err) {
				t.Fatalf("a replay of another tape: %v, want ErrConcurrent", err)
			}

			// Due in full: no tape handed out, and a replay made before is refused.
			e.advance(24 * time.Hour)
			if tape := tapeNow(); tape != nil {
				t.Fatalf("a scope due in full hands out its tape %q", tape)
			}
			if _, err := e.r.ObserveUnchanged(ctx, scope, []byte("tape one"), 1, time.Time{}); !reconcile.ErrConcurrent(err) {
				t.Fatalf("a replay of a scope due in full: %v, want ErrConcurrent", err)
			}
			ob.Tape = []byte("tape two")
			if out := e.observe(ob); !out.Full {
				t.Fatalf("the read after the day: %+v, want a full evaluation", out)
			}
			if string(tapeNow()) != "tape two" {
				t.Fatalf("after the full read, the tape is %q", tapeNow())
			}

			// Judged with another version: no tape.
			other := reconcile.New(reconcile.Options{Store: e.st, Log: e.log, Engine: mustPack(t), EvalVersion: "another pack", Now: e.clock})
			st, known, err := other.Scope(ctx, scope)
			if err != nil {
				t.Fatal(err)
			}
			if tape, err := other.Tape(ctx, st, known, e.clock()); err != nil || tape != nil {
				t.Fatalf("another version gets the tape %q (%v)", tape, err)
			}

			// A refresh of one resource: the store no longer holds what the tape read.
			res := ob.Resources[0]
			if _, err := e.r.Refresh(ctx, readerOf{res.UID: res}, res.UID, scope, ob.Accounts); err != nil {
				t.Fatal(err)
			}
			if tape := tapeNow(); tape != nil {
				t.Fatalf("after a refresh the tape is %q, want none", tape)
			}

			// A partial read keeps no tape; nor does a failed one.
			ob.Tape = []byte("tape three")
			e.observe(ob)
			if string(tapeNow()) != "tape three" {
				t.Fatalf("tape %q, want tape three", tapeNow())
			}
			partial := ob
			partial.Scope.Status = snapshot.ScopePartial
			e.observe(partial)
			if tape := tapeNow(); tape != nil {
				t.Fatalf("after a partial read the tape is %q, want none", tape)
			}
			e.observe(ob)
			failed := reconcile.Observation{Scope: ob.Scope, Accounts: ob.Accounts, Tape: []byte("tape four")}
			failed.Scope.Status = snapshot.ScopeFailed
			e.observe(failed)
			if tape := tapeNow(); tape != nil {
				t.Fatalf("after a failed read the tape is %q, want none", tape)
			}
		})
	}
}

func mustPack(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := pack()
	if err != nil {
		t.Fatal(err)
	}
	return eng
}
