package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
)

// DefaultDueInterval is how often the loop looks for due work when nothing wakes it.
const DefaultDueInterval = 5 * time.Second

// DefaultGrace is how long the daemon's running jobs may finish once the loop stops.
const DefaultGrace = 30 * time.Second

// Syncer keeps a channel's view in step with the store (Slack messages posted and
// updated); it runs after every pass of the loop and must be idempotent.
type Syncer interface {
	Sync(ctx context.Context) error
}

// LoopOptions configure a Loop.
type LoopOptions struct {
	// Machine applies what is due.
	Machine *remediate.Machine
	// DryRun never applies: each pass only syncs the channels (warden serve --dry-run).
	DryRun bool
	// Syncers run after each pass.
	Syncers []Syncer
	// Interval between passes when nothing wakes the loop (default DefaultDueInterval).
	Interval time.Duration
	// Daemon, when set (there are live targets), runs beside the passes: its jobs sweep,
	// collect, remediate, checkpoint and run its own Options.Tasks once across replicas.
	Daemon *Daemon
	// Grace is how long the daemon's running jobs get to finish when the loop stops
	// (default DefaultGrace).
	Grace time.Duration
	// Tasks are run by the loop itself, at once and then every Every, when there is no
	// Daemon (the scheduled reports of warden serve without live targets). With a Daemon
	// they are ignored: the daemon runs its own.
	Tasks  []Task
	Logger *slog.Logger
}

// Loop is warden serve's one long-running loop. Its passes apply what became ready (an
// approval request that reached its quorum, a multi-step fix whose next step is due, an
// action an interrupted run left applying) with the same code as warden apply
// (remediate.Machine.ApplyDue), then keep the channels' messages in step with the store.
// Beside them it runs the River daemon when there are live targets, else the scheduled
// tasks.
//
// Stopping it (its context ends) drains: the action in flight finishes and is recorded,
// the channels are synced once more, the daemon's jobs get their grace, nothing new
// starts.
type Loop struct {
	o    LoopOptions
	log  *slog.Logger
	wake chan struct{}
	// passes and failures count the passes, for the logs and tests.
	passes, failures atomic.Int64
	mu               sync.Mutex
	last             *remediate.Result
	// due is where the passes' reading of the approval requests stands: each reads
	// what changed since the previous one (gates.Looks). dueMu keeps Pass's
	// callers in turn.
	dueMu sync.Mutex
	due   gates.Looks
	// said is what the previous pass said of each action it reported, so that an
	// action that waits pass after pass is logged once, not every few seconds.
	said map[string]string
}

// NewLoop returns a Loop; Run starts it.
func NewLoop(o LoopOptions) *Loop {
	if o.Interval <= 0 {
		o.Interval = DefaultDueInterval
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Daemon != nil {
		// Each pass looks for decided approval requests after it applied what was due
		// (wakeDecided): the daemon's own poll would race the pass for the same actions.
		o.Daemon.loopDriven = true
	}
	return &Loop{o: o, log: o.Logger, wake: make(chan struct{}, 1)}
}

// Wake asks for a pass now (an approval was just recorded); it never blocks.
func (l *Loop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Passes reports how many passes completed, and how many of them failed.
func (l *Loop) Passes() (done, failed int64) { return l.passes.Load(), l.failures.Load() }

// Last is the result of the latest pass that applied anything or tried to.
func (l *Loop) Last() *remediate.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Run runs the passes, and the daemon or the tasks, until ctx ends, then drains. It
// returns the daemon's error, if any; nil after a clean stop.
func (l *Loop) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var derr error
	if l.o.Daemon != nil {
		wg.Go(func() { derr = l.o.Daemon.Run(ctx, l.o.Grace) })
	} else {
		for _, t := range l.o.Tasks {
			wg.Go(func() { l.runTask(ctx, t) })
		}
	}
	l.passUntil(ctx)
	wg.Wait()
	return derr
}

// passUntil runs passes until ctx ends. A pass runs on a context that outlives ctx, so
// that the action in flight when the stop comes completes and is recorded; the machine
// stops between actions once ctx has ended.
func (l *Loop) passUntil(ctx context.Context) {
	t := time.NewTicker(l.o.Interval)
	defer t.Stop()
	for {
		l.Pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.wake:
		}
	}
}

// Pass applies what is due, then syncs the channels. Errors are logged and counted,
// never fatal: the next pass tries again.
func (l *Loop) Pass(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	failed := false
	var res *remediate.Result
	var err error
	if !l.o.DryRun {
		l.dueMu.Lock()
		res, err = l.o.Machine.ApplyDueFrom(ctx, &l.due)
		l.dueMu.Unlock()
	}
	switch {
	case errors.Is(err, remediate.ErrPaused):
		l.log.Info("remediation is paused: nothing applied", "err", err)
	case err != nil && ctx.Err() == nil:
		failed = true
		l.log.Error("apply what is due", "err", err)
	case res != nil:
		l.mu.Lock()
		l.last = res
		l.mu.Unlock()
		l.report(res)
	}
	if d := l.o.Daemon; d != nil && ctx.Err() == nil {
		// What the pass did not take up (a dry run's approvals; a decision recorded while
		// it ran) gets its action's job, as the daemon's own poll would enqueue it.
		if n, err := d.wakeDecided(ctx); err != nil && ctx.Err() == nil {
			failed = true
			l.log.Error("look for decided approval requests", "err", err)
		} else if n > 0 {
			l.log.Info("approval decisions arrived: their fixes enqueued", "jobs", n)
		}
	}
	// The channels are synced even while draining: the outcome just recorded is shown.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, sy := range l.o.Syncers {
		if err := sy.Sync(sctx); err != nil {
			failed = true
			l.log.Error("sync a channel", "err", err)
		}
	}
	l.passes.Add(1)
	if failed {
		l.failures.Add(1)
	}
}

// report logs a pass's result: the machine has logged each fix it took up and how it
// ended; this warns, once each until it changes, of a ready action left alone here (its
// cloud has no target in this serve, naming the missing flag) and of what held the pass
// back, and says at debug what the others wait for.
func (l *Loop) report(res *remediate.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	said := make(map[string]string, len(res.Items))
	for _, it := range res.Items {
		what := string(it.State) + "\x00" + it.Outcome
		said[it.Action] = what
		if l.said[it.Action] == what {
			continue
		}
		args := []any{"action", it.Action, "remediator", it.Remediator, "target", it.Target, "state", it.State}
		if it.Unreachable != "" {
			l.log.Warn("ready, but not applied here: "+it.Unreachable, args...)
			continue
		}
		l.log.Debug("action", append(args, "outcome", it.Outcome)...)
	}
	held := strings.Trim(res.Stopped+"; "+res.Deferred, "; ")
	if held != "" && l.said[heldKey] != held {
		l.log.Warn("the pass held fixes back", "reason", held)
	}
	said[heldKey] = held
	l.said = said
}

// heldKey is where report keeps what held the last pass back.
const heldKey = "\x00held"

// runTask runs t at once and then every t.Every until ctx ends: warden serve without a
// daemon (no live targets) still writes its scheduled reports. A failed run is logged;
// the next tries again. A run that asks for Later waits that long instead.
func (l *Loop) runTask(ctx context.Context, t Task) {
	tick := time.NewTicker(t.Every)
	defer tick.Stop()
	for {
		wait := tick.C
		if err := t.Run(ctx, time.Now().UTC()); err != nil && ctx.Err() == nil {
			if d, later := IsLater(err); later {
				wait = time.After(d)
			} else {
				l.log.Error("task failed: it runs again at its next time", "task", t.Name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wait:
		}
	}
}
