package daemon_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/store"
)

// stages is where the time of drifts went, job by job: for each kind of job an event's
// correlation led to (its refresh, then its fix), how long after the event was announced
// it was inserted, how long it waited for a worker, and how long it ran.
type stages map[string]*stage

type stage struct{ inserted, waited, ran []time.Duration }

// jobTimes is one job of the queue's table, as its timestamps say.
type jobTimes struct {
	kind                          string
	created, attempted, finalized time.Time
}

// add records the jobs whose arguments name correlation, and the first job that fixed
// target after sent (a sweep may have queued it before the event, which then only moved
// it up: its arguments name the sweep), relative to sent.
func (s stages) add(t *testing.T, st *store.Store, correlation, target string, sent time.Time, fixed time.Duration) {
	t.Helper()
	var jobs []jobTimes
	err := st.Read(context.Background(), func(q *store.Reader) error {
		var err error
		jobs, err = store.QueryAll(context.Background(), q, func(rows *sql.Rows) (jobTimes, error) {
			var j jobTimes
			var c, a, f any
			err := rows.Scan(&j.kind, &c, &a, &f)
			j.created, j.attempted, j.finalized = when(c), when(a), when(f)
			return j, err
		}, `SELECT kind, created_at, attempted_at, finalized_at FROM river_job
			WHERE CAST(args AS TEXT) LIKE ? OR (kind = ? AND CAST(args AS TEXT) LIKE ?) ORDER BY id`,
			"%"+correlation+"%", daemon.KindRemediate, "%"+target+"%")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fix := false
	for _, j := range jobs {
		if j.kind == daemon.KindRemediate {
			// The first fix job taken after the event; River records its end a moment
			// later, so it ran until the drift read back fixed.
			if fix || j.attempted.Before(sent) || j.created.IsZero() {
				continue
			}
			fix, j.finalized = true, sent.Add(fixed)
		}
		if j.created.IsZero() || j.attempted.IsZero() || j.finalized.IsZero() {
			continue
		}
		g := s[j.kind]
		if g == nil {
			g = &stage{}
			s[j.kind] = g
		}
		g.inserted = append(g.inserted, j.created.Sub(sent))
		g.waited = append(g.waited, j.attempted.Sub(j.created))
		g.ran = append(g.ran, j.finalized.Sub(j.attempted))
	}
}

// when reads a timestamp as either driver returns it.
func when(v any) time.Time {
	switch x := v.(type) {
	case time.Time:
		return x
	case []byte:
		return when(string(x))
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(layout, strings.TrimSpace(x)); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

func (s stages) String() string {
	med := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2].Round(time.Millisecond)
	}
	p95 := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[int(0.95*float64(len(d)-1))].Round(time.Millisecond)
	}
	var b strings.Builder
	kinds := make([]string, 0, len(s))
	for k := range s {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		g := s[k]
		fmt.Fprintf(&b, "\n  %s (%d jobs): inserted %v after the event (p95 %v), waited %v (p95 %v), ran %v (p95 %v)", k, len(g.ran),
			med(g.inserted), p95(g.inserted), med(g.waited), p95(g.waited), med(g.ran), p95(g.ran))
	}
	return b.String()
}
