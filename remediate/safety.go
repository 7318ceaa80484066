package remediate

import (
	"context"
	"fmt"
	"math"
)

// Limits bound what one apply run may change.
type Limits struct {
	// MaxActions is the most actions one run applies (default 25); the rest wait for the
	// next run.
	MaxActions int
	// MaxPerAccount is the most actions one run applies in one account (default 10).
	MaxPerAccount int
	// BreakerConsecutive failures in a row stop the run (default 5).
	BreakerConsecutive int
	// BreakerRatio is the failure ratio past which the run stops once BreakerMin actions
	// have run (defaults 0.2 and 5).
	BreakerRatio float64
	BreakerMin   int
	// CanaryThreshold: a remediator with more actions than this in a run goes in waves,
	// a canary first (default 10).
	CanaryThreshold int
	// CanaryFraction of a remediator's actions make its canary when its first account has
	// more (default 0.05; at least one).
	CanaryFraction float64

	// PerHour is the most actions begun in any hour across every run sharing the store
	// (0: no bound): the daemon applies one action per job, so the caps per run above do
	// not bound what it does in an hour. PerAccountPerHour bounds one account likewise.
	// Replicas checking at the same moment may each take the last unit of the budget:
	// it holds to within the number of workers.
	PerHour, PerAccountPerHour int
	// PauseAfterFailures pauses remediation (as warden pause does, lifted by warden
	// resume) once that many fixes in a row have failed across runs (0: never): a fix
	// that fails everywhere is a broken remediator or lost permissions, not bad luck.
	PauseAfterFailures int
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxActions, 25)
	def(&l.MaxPerAccount, 10)
	def(&l.BreakerConsecutive, 5)
	def(&l.BreakerMin, 5)
	def(&l.CanaryThreshold, 10)
	if l.BreakerRatio <= 0 {
		l.BreakerRatio = 0.2
	}
	if l.CanaryFraction <= 0 {
		l.CanaryFraction = 0.05
	}
	return l
}

// cap keeps the runnable actions within the blast-radius caps; the rest wait.
func (m *Machine) cap(ctx context.Context, rs []*Record, res *Result) []*Record {
	perAccount := map[string]int{}
	var keep []*Record
	skipped := 0
	for _, r := range rs {
		if len(keep) >= m.limits.MaxActions || perAccount[r.Account] >= m.limits.MaxPerAccount {
			res.Items = append(res.Items, item(r, fmt.Sprintf("deferred: over the blast-radius cap (%d per run, %d per account)", m.limits.MaxActions, m.limits.MaxPerAccount)))
			skipped++
			continue
		}
		perAccount[r.Account]++
		keep = append(keep, r)
	}
	if skipped > 0 {
		reason := fmt.Sprintf("blast-radius cap: %d actions deferred (at most %d per run, %d per account)", skipped, m.limits.MaxActions, m.limits.MaxPerAccount)
		if err := m.stop(ctx, reason, skipped); err != nil {
			m.logger.Error("audit the blast-radius stop", "err", err)
		}
		res.Deferred = reason
	}
	return keep
}

// breaker stops a run after too many failures.
type breaker struct {
	l                   Limits
	ran, failed, inARow int
	tripped             string
}

func (b *breaker) record(ok bool) {
	b.ran++
	if ok {
		b.inARow = 0
	} else {
		b.failed++
		b.inARow++
	}
	switch {
	case b.inARow >= b.l.BreakerConsecutive:
		b.tripped = fmt.Sprintf("circuit breaker: %d consecutive failures", b.inARow)
	case b.ran >= b.l.BreakerMin && float64(b.failed)/float64(b.ran) > b.l.BreakerRatio:
		b.tripped = fmt.Sprintf("circuit breaker: %d of %d actions failed (over %.0f%%)", b.failed, b.ran, b.l.BreakerRatio*100)
	}
}

// waves splits one remediator's runnable actions (ordered by account) into a canary and
// then waves doubling in size. Up to CanaryThreshold actions run as one wave.
func waves(l Limits, rs []*Record) [][]*Record {
	if len(rs) <= l.CanaryThreshold {
		return [][]*Record{rs}
	}
	canary := 0
	for canary < len(rs) && rs[canary].Account == rs[0].Account {
		canary++
	}
	byFraction := max(1, int(math.Ceil(float64(len(rs))*l.CanaryFraction)))
	canary = min(canary, byFraction)
	out := [][]*Record{rs[:canary]}
	size := canary
	for i := canary; i < len(rs); {
		size *= 2
		end := min(len(rs), i+size)
		out = append(out, rs[i:end])
		i = end
	}
	return out
}
