package engine

import (
	"github.com/warden-sec/warden/engine/internal/irvm"

	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Defaults of the evaluation guard.
const (
	// DefaultEvalTimeout bounds one evaluation of one resource; the whole pack takes
	// about 150 µs per resource, so only a runaway policy comes near it.
	DefaultEvalTimeout = 10 * time.Second
	// DefaultMemoryLimit is the Go heap size at which the longest-running evaluation is
	// aborted; a scan of a million resources peaks near 1.2 GB.
	DefaultMemoryLimit = 4 << 30
	// DefaultMaxAborts is how many resources a policy may be aborted on (deadline or
	// memory) in one scan before it is no longer run; every later resource records an
	// eval error for it without running it, so a runaway policy cannot hang a scan of
	// many resources either.
	DefaultMaxAborts = 3
)

// Why an evaluation was aborted.
const (
	abortNone int32 = iota
	abortDeadline
	abortMemory
	abortCancelled
)

// evalRun is one evaluation in flight. It is OPA's cancellation signal for that
// evaluation (rego.EvalExternalCancel): the guard sets it, OPA polls it at every step.
type evalRun struct {
	start  time.Time
	reason atomic.Int32
}

func (r *evalRun) abort(reason int32) { r.reason.CompareAndSwap(abortNone, reason) }

// Cancel implements topdown.Cancel.
func (r *evalRun) Cancel() { r.abort(abortCancelled) }

// Cancelled implements topdown.Cancel.
func (r *evalRun) Cancelled() bool { return r.reason.Load() != abortNone }

// guard watches the evaluations of one scan: it aborts an evaluation past its deadline,
// the oldest one when the heap passes the memory limit, and all of them when the scan's
// context is done. One goroutine samples a slot per worker, so an evaluation costs an
// atomic store, not a timer or a goroutine of its own.
type guard struct {
	timeout  time.Duration // <= 0: none
	memLimit uint64        // 0: none
	slots    []atomic.Pointer[evalRun]
	stop     chan struct{}
	done     sync.WaitGroup
}

func newGuard(ctx context.Context, workers int, timeout time.Duration, memLimit int64) *guard {
	g := &guard{timeout: timeout, slots: make([]atomic.Pointer[evalRun], workers), stop: make(chan struct{})}
	if memLimit > 0 {
		g.memLimit = uint64(memLimit)
	}
	period := 50 * time.Millisecond
	if timeout > 0 && timeout/10 < period {
		period = max(timeout/10, time.Millisecond)
	}
	g.done.Add(1)
	go g.watch(ctx, period)
	return g
}

// close stops the watching goroutine and waits for it.
func (g *guard) close() {
	close(g.stop)
	g.done.Wait()
}

func (g *guard) watch(ctx context.Context, period time.Duration) {
	defer g.done.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var pending *evalRun // aborted for memory, not yet finished
	for {
		select {
		case <-g.stop:
			return
		case <-ctx.Done():
		case <-t.C:
		}
		if ctx.Err() != nil {
			// Keep sweeping until stopped: an evaluation may start after the first sweep.
			for i := range g.slots {
				if r := g.slots[i].Load(); r != nil {
					r.abort(abortCancelled)
				}
			}
			select {
			case <-g.stop:
				return
			case <-t.C:
			}
			continue
		}
		now := time.Now()
		var oldest *evalRun
		for i := range g.slots {
			r := g.slots[i].Load()
			if r == nil {
				continue
			}
			if g.timeout > 0 && now.Sub(r.start) > g.timeout {
				r.abort(abortDeadline)
			}
			if r == pending {
				continue
			}
			if oldest == nil || r.start.Before(oldest.start) {
				oldest = r
			}
		}
		if g.memLimit == 0 {
			continue
		}
		if pending != nil {
			if g.running(pending) {
				continue
			}
			// The aborted evaluation's memory is garbage now: collect it before judging
			// the heap again, so that the next evaluation is not blamed for it.
			pending = nil
			runtime.GC()
			continue
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > g.memLimit && oldest != nil {
			oldest.abort(abortMemory)
			pending = oldest
		}
	}
}

func (g *guard) running(r *evalRun) bool {
	for i := range g.slots {
		if g.slots[i].Load() == r {
			return true
		}
	}
	return false
}

// abortError is an evaluation the guard stopped.
type abortError struct {
	reason int32
	g      *guard
}

func (e *abortError) Error() string {
	switch e.reason {
	case abortDeadline:
		return fmt.Sprintf("evaluation exceeded its %s deadline", e.g.timeout)
	case abortMemory:
		return fmt.Sprintf("evaluation aborted: the heap passed the %d MiB memory limit while it ran", e.g.memLimit>>20)
	default:
		return "evaluation cancelled"
	}
}

// limits says what the guard enforces, for messages.
func (g *guard) limits() string {
	var parts []string
	if g.timeout > 0 {
		parts = append(parts, fmt.Sprintf("%s deadline", g.timeout))
	}
	if g.memLimit > 0 {
		parts = append(parts, fmt.Sprintf("%d MiB memory limit", g.memLimit>>20))
	}
	return strings.Join(parts, ", ")
}

// evalIR runs a planned query in worker slot's name, under the guard, and returns the
// values of its result set as rego would.
func (g *guard) evalIR(ctx context.Context, slot int, p *irvm.Program, input ast.Value, now time.Time, data ast.Value, caps *ast.Capabilities) ([]any, error) {
	r := &evalRun{start: time.Now()}
	g.slots[slot].Store(r)
	rs, err := p.Eval(ctx, input, irvm.Options{Data: data, Time: nowTerm(now), Cancel: r, Capabilities: caps})
	g.slots[slot].Store(nil)
	if reason := r.reason.Load(); reason != abortNone && err != nil {
		return nil, &abortError{reason: reason, g: g}
	}
	if err != nil {
		return nil, err
	}
	return irResults(rs)
}

// eval runs one prepared query in worker slot's name, under the guard.
func (g *guard) eval(ctx context.Context, slot int, q rego.PreparedEvalQuery, input ast.Value, now time.Time) (rego.ResultSet, error) {
	r := &evalRun{start: time.Now()}
	g.slots[slot].Store(r)
	rs, err := q.Eval(ctx, rego.EvalParsedInput(input), rego.EvalTime(now), rego.EvalExternalCancel(r))
	g.slots[slot].Store(nil)
	if reason := r.reason.Load(); reason != abortNone && err != nil {
		return nil, &abortError{reason: reason, g: g}
	}
	return rs, err
}
