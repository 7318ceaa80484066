package daemon

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// A scheduled sweep does not read the whole organisation at the cron minute: its
// collections start over a share of the schedule's period, each scope at an offset of
// its own. The offset is a hash of the scope's id, so a scope is read at the same point
// of every period (its reads evenly apart) and the scopes spread evenly whatever their
// number; no replica needs to agree with another on it.

// sweepSpread is the share of sched's period, as it stands at now, over which a sweep
// spreads its collections; 0 when share is not above 0 or the schedule has no next run.
func sweepSpread(sched river.PeriodicSchedule, now time.Time, share float64) time.Duration {
	if share <= 0 {
		return 0
	}
	next := sched.Next(now)
	after := sched.Next(next)
	if next.IsZero() || !after.After(next) {
		return 0
	}
	return time.Duration(float64(after.Sub(next)) * min(share, 1))
}

// spreadOffset is scope's offset within a spread of d: in [0, d), the same for the same
// scope and spread.
func spreadOffset(scope string, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(scope))
	return time.Duration(h.Sum64() % uint64(d))
}

// bringForward makes a sweep that reads at once (spread 0: asked for by POST
// /v1/reconcile, or a replica's first) really read at once: a scope's collection already
// scheduled later by a spread sweep keeps the scope's unique key, so the insert was
// skipped as a duplicate; that job is made available now instead. It returns how many.
func (d *Daemon) bringForward(ctx context.Context, res []*rivertype.JobInsertResult, spread time.Duration) (int, error) {
	if spread > 0 {
		return 0, nil
	}
	now, n := time.Now(), 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate || r.Job == nil || r.Job.State != rivertype.JobStateScheduled || !r.Job.ScheduledAt.After(now) {
			continue
		}
		if _, err := d.q.JobRetry(ctx, r.Job.ID); err != nil {
			return n, fmt.Errorf("bring the collection job %d forward: %w", r.Job.ID, err)
		}
		n++
	}
	return n, nil
}

// tickClock tells a schedule's regular ticks from the ones River fires when a replica
// starts leading (RunOnStart): at start, and again whenever the replica takes the lead
// back (its database connection cut and restored). Those read at once, as a new term's
// first look at the organisation; a regular tick, due by the schedule since the last
// one, may be spread.
type tickClock struct {
	mu   sync.Mutex
	last time.Time
}

// regular records a tick at now and reports whether it is one the schedule made due:
// not the first, and not earlier than the schedule's next run after the last tick (less
// a tenth of the period, at most a minute, for the enqueuer's own lateness).
func (c *tickClock) regular(sched river.PeriodicSchedule, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := c.last
	c.last = now
	if last.IsZero() {
		return false
	}
	next := sched.Next(last)
	slack := min(next.Sub(last)/10, time.Minute)
	return !now.Before(next.Add(-slack))
}
