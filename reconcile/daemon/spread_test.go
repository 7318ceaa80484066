package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

func TestSweepSpread(t *testing.T) {
	hourly := river.PeriodicInterval(time.Hour)
	now := time.Date(2026, 12, 6, 10, 17, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		sched river.PeriodicSchedule
		share float64
		want  time.Duration
	}{
		{"half an hour of every hour", hourly, 0.5, 30 * time.Minute},
		{"all of it", hourly, 1, time.Hour},
		{"more than all is all", hourly, 3, time.Hour},
		{"none", hourly, 0, 0},
		{"a negative share is none", hourly, -1, 0},
	} {
		if got := sweepSpread(tc.sched, now, tc.share); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Offsets stay within the spread, are the same for the same scope, and spread 450
// scopes (a 50-account organisation) evenly: every tenth of the spread holds between 5%
// and 15% of them.
func TestSpreadOffset(t *testing.T) {
	const d = 30 * time.Minute
	tenths := make([]int, 10)
	for i := range 450 {
		scope := fmt.Sprintf("aws/%012d/ec2/eu-west-%d", 100000000000+i/9, i%9)
		off := spreadOffset(scope, d)
		if off < 0 || off >= d || off != spreadOffset(scope, d) {
			t.Fatalf("%s: offset %v (again %v), want the same in [0, %v)", scope, off, spreadOffset(scope, d), d)
		}
		tenths[int(off*10/d)]++
	}
	for i, n := range tenths {
		if n < 450*5/100 || n > 450*15/100 {
			t.Errorf("tenth %d of the spread holds %d of 450 scopes: %v", i, n, tenths)
		}
	}
	if spreadOffset("aws/1/iam", 0) != 0 {
		t.Error("no spread, yet an offset")
	}
}

// A sweep with a spread schedules each scope's collection at its own offset within it;
// one without starts them all at once.
func TestSweep_spreadsItsCollections(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := remediatetest.Start(t, dsn(t), remediatetest.World(2), gates.Config{Auto: []findings.Risk{findings.RiskLow}}, remediatetest.Options{})
			d := unstarted(t, e)
			const spread = time.Hour
			before := time.Now()
			if err := (&sweepWorker{d: d}).Work(ctx, job(1, SweepArgs{Target: "aws", Correlation: "t-1", Spread: spread})); err != nil {
				t.Fatal(err)
			}
			at := scheduledAt(t, e.Store, KindCollect)
			if len(at) < 3 {
				t.Fatalf("%d collections queued: want one per scope of the world", len(at))
			}
			distinct := map[time.Time]bool{}
			for _, s := range at {
				if s.Before(before.Add(-time.Second)) || !s.Before(time.Now().Add(spread)) {
					t.Errorf("a collection at %v: want within the hour from %v", s, before)
				}
				distinct[s.Truncate(time.Second)] = true
			}
			if len(distinct) < len(at)*2/3 {
				t.Errorf("%d collections at %d distinct times: not spread (%v)", len(at), len(distinct), at)
			}

			// A sweep that reads at once (POST /v1/reconcile) finds them queued for later:
			// it brings them forward rather than leaving the scopes unread for an hour.
			if err := (&sweepWorker{d: d}).Work(ctx, job(2, SweepArgs{Target: "aws", Correlation: "t-2"})); err != nil {
				t.Fatal(err)
			}
			now := scheduledAt(t, e.Store, KindCollect)
			if len(now) != len(at) {
				t.Fatalf("%d collections after the second sweep, want the same %d", len(now), len(at))
			}
			for _, s := range now {
				if s.After(time.Now().Add(time.Second)) {
					t.Errorf("a collection still scheduled at %v after a sweep that reads at once", s)
				}
			}
		})
	}
}

// scheduledAt returns when each of the kind's queued jobs is to run.
func scheduledAt(t *testing.T, st *store.Store, kind string) []time.Time {
	t.Helper()
	var out []time.Time
	err := st.Read(context.Background(), func(q *store.Reader) error {
		rows, err := q.QueryContext(context.Background(), `SELECT scheduled_at FROM river_job WHERE kind = ? ORDER BY id`, kind)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s time.Time
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The first tick and the ticks River fires on taking the lead back read at once; the
// ticks the schedule makes due may be spread.
func TestTickClock(t *testing.T) {
	hourly := river.PeriodicInterval(time.Hour)
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	var c tickClock
	for _, tc := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"the first tick (RunOnStart)", t0, false},
		{"the lead taken back 5 s later (RunOnStart again)", t0.Add(5 * time.Second), false},
		{"the schedule's tick, a second late", t0.Add(5*time.Second + time.Hour + time.Second), true},
		{"the next, a little early", t0.Add(5*time.Second + 2*time.Hour - 30*time.Second), true},
		{"the lead taken back mid-period", t0.Add(5*time.Second + 2*time.Hour + 20*time.Minute), false},
	} {
		if got := c.regular(hourly, tc.at); got != tc.want {
			t.Errorf("%s: regular %v, want %v", tc.name, got, tc.want)
		}
	}
}
