package gates_test

import (
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// CountPending counts the requests still pending, past their expiry or not, and none
// that a decision or an expiry ended.
func TestCountPending(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig
			cfg.Expiry = time.Hour
			e := newEnv(t, mk, cfg)
			count := func() int {
				t.Helper()
				var n int
				if err := e.st.Read(ctx, func(q *store.Reader) error {
					var err error
					n, err = gates.CountPending(ctx, q)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := count(); n != 0 {
				t.Fatalf("no request: %d pending", n)
			}
			early := e.request("act-1", findings.RiskMedium, "h1")
			e.clock.Advance(30 * time.Minute)
			e.request("act-2", findings.RiskMedium, "h1")
			decided := e.request("act-3", findings.RiskMedium, "h1")
			decide(e, decided.ID, "bob", true, "")
			e.clock.Advance(30 * time.Minute)
			if n := count(); n != 2 {
				t.Errorf("two pending (one past its expiry), one approved: %d pending, want 2", n)
			}
			if err := e.st.InTx(ctx, func(tx *store.Tx) error {
				if _, err := e.gate.ExpireDue(ctx, tx); err != nil {
					return err
				}
				n, err := gates.CountPending(ctx, tx)
				if err == nil && n != 1 {
					t.Errorf("after %s expired, in the same transaction: %d pending, want 1", early.ID, n)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Touched names the actions whose request was decided or marked expired since a time, or
// given a decision that did not end it, and those still pending past their expiry;
// PendingOf reads the pending requests of the actions named, as Pending reads them all.
func TestTouched(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig
			cfg.Expiry = time.Hour
			e := newEnv(t, mk, cfg)
			stopped := func(since time.Time) []string {
				t.Helper()
				var ids []string
				if err := e.st.Read(ctx, func(q *store.Reader) error {
					var err error
					ids, err = gates.Touched(ctx, q, since, e.clock.Now())
					return err
				}); err != nil {
					t.Fatal(err)
				}
				slices.Sort(ids)
				return ids
			}
			start := e.clock.Now()
			e.request("act-early", findings.RiskMedium, "h1")
			e.clock.Advance(30 * time.Minute)
			e.request("act-waits", findings.RiskMedium, "h1")
			old := e.request("act-old", findings.RiskMedium, "h1")
			decide(e, old.ID, "bob", true, "")
			e.clock.Advance(20 * time.Minute)
			mid := e.clock.Now()
			denied := e.request("act-denied", findings.RiskMedium, "h1")
			decide(e, denied.ID, "bob", false, "no")
			half := e.request("act-half", findings.RiskCritical, "h1")
			decide(e, half.ID, "bob", true, "")
			if half, err := e.gate.Get(ctx, half.ID); err != nil || half.State != gates.StatePending {
				t.Fatalf("one approval of a critical fix: %+v %v, want it pending", half, err)
			}
			if got, want := stopped(start), []string{"act-denied", "act-half", "act-old"}; !slices.Equal(got, want) {
				t.Errorf("since the start: %v, want %v", got, want)
			}
			if got, want := stopped(mid), []string{"act-denied", "act-half"}; !slices.Equal(got, want) {
				t.Errorf("since the first decision: %v, want %v", got, want)
			}
			// Past act-early's expiry, before anything marks it.
			e.clock.Advance(15 * time.Minute)
			now := e.clock.Now()
			if got, want := stopped(now), []string{"act-early"}; !slices.Equal(got, want) {
				t.Errorf("nothing decided since now, one request due: %v, want %v", got, want)
			}
			if err := e.st.InTx(ctx, func(tx *store.Tx) error {
				_, err := e.gate.ExpireDue(ctx, tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if got, want := stopped(now), []string{"act-early"}; !slices.Equal(got, want) {
				t.Errorf("once marked expired: %v, want %v", got, want)
			}
			if got := stopped(e.clock.Now().Add(time.Second)); len(got) != 0 {
				t.Errorf("since after everything: %v, want none", got)
			}

			var all, some map[string]gates.Waiting
			if err := e.st.Read(ctx, func(q *store.Reader) error {
				var err error
				if all, err = gates.Pending(ctx, q); err != nil {
					return err
				}
				some, err = gates.PendingOf(ctx, q, []string{"act-waits", "act-denied", "act-none"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || len(some) != 1 || some["act-waits"] != all["act-waits"] || some["act-waits"].ContentHash != "h1" {
				t.Errorf("PendingOf = %+v, want act-waits alone, as Pending reads it (%+v)", some, all)
			}
		})
	}
}

// Looks reads everything at its first look and at every FullLooks-th, and otherwise
// what was touched since the previous look began, less StampMargin; a look not recorded
// done is made again as it was.
func TestLooks(t *testing.T) {
	var l gates.Looks
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	if s := l.Next(); !s.IsZero() {
		t.Fatalf("first look: since %v, want everything", s)
	}
	l.Done(t0, time.Time{})
	for i := 1; i < gates.FullLooks; i++ {
		began := t0.Add(time.Duration(i) * 5 * time.Second)
		s := l.Next()
		if want := began.Add(-5 * time.Second).Add(-gates.StampMargin); !s.Equal(want) {
			t.Fatalf("look %d: since %v, want %v", i, s, want)
		}
		if i == 3 && !l.Next().Equal(s) {
			t.Fatalf("look %d, not done, made again: since %v, want %v", i, l.Next(), s)
		}
		l.Done(began, s)
	}
	if s := l.Next(); !s.IsZero() {
		t.Fatalf("look %d: since %v, want everything", gates.FullLooks, s)
	}
}
