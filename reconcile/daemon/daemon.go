package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/trace"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/urgency"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/watch"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Target is one kind of target the daemon reconciles: its collector, which names its
// scopes and reads each alone, the reader that reads one resource again (nil: a change
// event reads the whole scope), and when it is swept (nil: only on demand and on events).
type Target struct {
	Name      string
	Collector collectors.ScopeCollector
	Reader    collectors.Reader
	Schedule  river.PeriodicSchedule
}

// Defaults of Options.
const (
	DefaultWorkers = 4
	DefaultReaders = 256
	// DefaultFullReads is Options.FullReads' default: what Readers' default was
	// before a collection could replay its scope's tape (collectors.Rereader).
	DefaultFullReads = 16
	// QueueCollect is the queue of the collections (Options.Readers).
	QueueCollect = "collect"
	// QueueEvents is the queue of what a change event or a decided approval asked for:
	// the refresh of a resource and the fixes it plans, with Options.Workers of their
	// own, so that they never wait for a worker behind a sweep's fixes.
	QueueEvents         = "events"
	DefaultJobTimeout   = 10 * time.Minute
	DefaultApprovalPoll = 30 * time.Second
	// DefaultMaxAttempts bounds a failing job's retries (River's backoff is attempt⁴
	// seconds: the eighth attempt comes about 75 minutes after the first); then it is
	// discarded, audited and counted.
	DefaultMaxAttempts = 8
	// DefaultWatchEvery is how often the findings of right-sizing fixes rolled back by
	// hand are resolved (Options.WatchEvery).
	DefaultWatchEvery = 5 * time.Minute
	// DefaultCheckpointEvery is how often the audit log is checkpointed when a key is
	// at hand: the checkpoint-age alert (docs/alerts.yml) fires after 25 hours.
	DefaultCheckpointEvery = time.Hour
)

// Options configure a Daemon.
type Options struct {
	Store      *store.Store
	Log        *audit.Log
	Reconciler *reconcile.Reconciler
	Machine    *remediate.Machine
	// Plan says how each scope's fixes are planned (registry, gates).
	Plan    reconcile.PlanOptions
	Targets []Target
	// DryRun plans and says what would be done, and never applies.
	DryRun bool
	// Workers is how many jobs of the default queue (a sweep's fixes, its listing) this
	// replica works at once (default DefaultWorkers), as many again of the events'
	// queue (QueueEvents), and how many of its collections judge what they read at once,
	// though never more than the process has cores (GOMAXPROCS): judges beyond the cores
	// only lengthen the run queue an event's work waits in.
	Workers int
	// Readers is how many collections this replica runs at once (default
	// DefaultReaders), in a queue of their own: a collection spends most of a paced
	// sweep waiting on the cloud's rate limits, which are per account, so reading many
	// accounts at once is what brings a sweep to the floor of its limits. Judging what
	// they read (evaluation, the store) still takes one of the judging turns, so
	// more readers do not mean more CPU at once; and fixes and change events, in the
	// default queue, never wait behind a sweep's reads.
	Readers int
	// FullReads is how many of those collections read their scope in full at once
	// (default DefaultFullReads): a full read decodes and holds its whole scope until
	// it is judged (several MiB for an account of thousands of resources), where a
	// collection that replays its scope's tape (collectors.Rereader) waits on the
	// cloud's rate limits holding little. So Readers bounds the waiting and FullReads
	// the memory.
	FullReads int
	// UrgentYield is the longest a sweep's work waits at one point while an event's work
	// runs (default DefaultUrgentYield): a stream of events slows a sweep, never stops it.
	UrgentYield time.Duration
	// JobTimeout bounds one job (default DefaultJobTimeout). RescueAfter is how long a
	// job may stay running before the queue takes its replica for dead and runs it again
	// (default JobTimeout + 5 minutes); it must exceed JobTimeout, or a slow job would
	// run twice at once. Expect a rescue within RescueAfter + 30 s (River's rescuer runs
	// every 30 s), plus up to 20 s when the dead replica was the leader.
	JobTimeout, RescueAfter time.Duration
	// ApprovalPoll is how often a job held back looks again (default
	// DefaultApprovalPoll): by a pause, the hourly budget, or an approved action not yet
	// run. An action waiting for its approval has no job (DecisionPoll).
	ApprovalPoll time.Duration
	// DecisionPoll is how often this replica looks for approval requests that stopped
	// waiting, to enqueue the job of each one's action (default DefaultDecisionPoll): an
	// action waiting for approval has no job of its own meanwhile.
	DecisionPoll time.Duration
	// Now is the clock approval requests' expiries are compared with (default
	// time.Now): the gate's.
	Now func() time.Time
	// MaxAttempts bounds a failing job's attempts (default DefaultMaxAttempts).
	MaxAttempts int
	// Checkpoint, when set, signs an audit checkpoint; the leader runs it every
	// CheckpointEvery (default DefaultCheckpointEvery) and once when it starts leading.
	Checkpoint      func(ctx context.Context) error
	CheckpointEvery time.Duration
	// Tasks are run on a schedule by the leader, each once per its Every (the scheduled
	// compliance reports): the daemon knows them only by name.
	Tasks []Task
	// ID names this replica in the queue (default the host and start time).
	ID string
	// Actor records the daemon in the audit log (default "warden").
	Actor  string
	Logger *slog.Logger
	// Hooks, when set, hear what the daemon does (metrics).
	Hooks Hooks
	// Tracer, when set, traces each job, its stages and the endpoints' requests (see
	// trace.go); nil or a no-op tracer costs nothing.
	Tracer trace.Tracer
	// DeniedWindow is how long after a right-sizing fix an access-denied event for a
	// permission it removed is blamed on it (default watch.DefaultWindow, 30 days).
	DeniedWindow time.Duration
	// RollbackOnDenied rolls such a fix back at once (a rollback job, as `warden
	// rollback`; rollbacks need no approval) instead of only opening its finding.
	RollbackOnDenied bool
	// SweepSpread is the share of a target's schedule period (0 to 1) over which a
	// scheduled sweep starts its collections, each scope at its own offset (0: all at
	// once). A replica's first sweep reads at once.
	SweepSpread float64
	// WatchEvery is how often the leader resolves the findings of such fixes rolled
	// back since by hand (`warden rollback`, the dashboard) (default DefaultWatchEvery).
	WatchEvery time.Duration
}

// dryRunMarker ends the queue name of a replica that never applies (DryRun), so that a
// replica leading the queue is known not to apply what gets approved (Applier).
const dryRunMarker = ".dry-run"

// dryRunID is a dry-run replica's name in the queue: id, or the host and start time as
// River would name it, with dryRunMarker at its end.
func dryRunID(id string) string {
	if strings.HasSuffix(id, dryRunMarker) {
		return id
	}
	if id == "" {
		id = defaultID()
	}
	return id + dryRunMarker
}

// defaultID names a replica given no ID: its host, its start time and a random suffix.
// River's own default is the host and the start time to the second (its microseconds
// written as zeros), so two replicas started in the same second on one host had one name
// in the queue, and the jobs either attempted were told apart by nothing.
func defaultID() string {
	host, _ := os.Hostname()
	return host + "_" + time.Now().UTC().Format("2006_01_02T15_04_05") + "_" + strings.ToLower(rand.Text()[:8])
}

// Task is work the daemon runs on a schedule, once per Every across every replica (the
// leader enqueues it; any replica works it), and once when a replica starts leading. A
// failed run is retried as any job is; Run is given the time it was due.
type Task struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context, at time.Time) error
}

// Later is the error a Task returns when it cannot run yet (what it needs is not there):
// its job waits d and runs again, without using up an attempt.
func Later(d time.Duration, why string) error { return &laterError{d: d, why: why} }

type laterError struct {
	d   time.Duration
	why string
}

func (e *laterError) Error() string { return "later (" + e.d.String() + "): " + e.why }

// IsLater reports whether err is Later's, and how long it asks to wait.
func IsLater(err error) (time.Duration, bool) {
	if l, ok := errors.AsType[*laterError](err); ok {
		return l.d, true
	}
	return 0, false
}

func checkTasks(tasks []Task) error {
	seen := map[string]bool{}
	for _, t := range tasks {
		if t.Name == "" || t.Every <= 0 || t.Run == nil {
			return fmt.Errorf("daemon: task %q needs a name, a positive interval and a function", t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("daemon: task %s given twice", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// Hooks hear what the daemon does; each may be nil. They are called from the workers,
// several at once, and must not block: MetricsHooks feeds them to Prometheus.
type Hooks struct {
	// Read follows each read of a scope with the scope as its collector reported it: ok,
	// partial or failed, with the call attempts it took and those throttled or denied. A
	// read the collector reported failed is heard like any other, and so is one cut short
	// by an error (a cancelled context) if the collector reported the scope before it
	// ended: its calls were made all the same. A resource read again alone (a refresh) is
	// no scope read.
	Read func(target string, sc snapshot.Scope)
	// Stage follows each step of a job with how long it took and the error it ended with
	// (nil: it did its work). The stages are the trace's: "collect" (a scope read),
	// "refresh" (one resource read again and judged), "observe" (a scope's read judged),
	// "plan" (a scope's fixes planned) and "apply" (one action through the remediation
	// machine). A step's error is the one its code returned, not what it found: a scope
	// the cloud would not let warden read is a failed read (Read), a fix that failed is
	// an action's outcome (Applied). A run of the machine that leaves its action
	// waiting (for an approval, a budget, a pause) is no step at all: a fix held back
	// and polled every ApprovalPoll would otherwise drown the steps that did something.
	Stage func(stage string, took time.Duration, err error)
	// Observed follows each scope or resource judged.
	Observed func(target string, out *reconcile.Outcome)
	// Applied follows each remediation job's run with the action's item.
	Applied func(it remediate.Item, announcedAt time.Time)
	// ApprovalEnded follows the end of an approval request as a remediation job saw it:
	// a run that began with its action waiting for a decision (pending) and left it
	// otherwise reports the request's final state (approved, denied, expired, voided).
	// Each request is reported once, by the job its end woke (wakeDecided); a request
	// whose action another run moved on first (warden apply, warden serve's loop, a
	// changed plan voiding it) is not.
	ApprovalEnded func(outcome string)
	// JobDone follows each job's end: kind and outcome (completed, retried, snoozed,
	// discarded, cancelled).
	JobDone func(kind, outcome string)
	// RightsizeDenied follows each access-denied event newly blamed on a right-sizing
	// fix of remediator (reconcile/watch).
	RightsizeDenied func(remediator string)
}

// Daemon is warden's reconciliation loop on River: scheduled sweeps enqueue one
// collection per scope, each collection judges its scope and enqueues one remediation
// per planned action, change events enqueue a refresh of the resource they name.
type Daemon struct {
	o       Options
	q       queue
	close   func()
	targets map[string]Target
	tasks   map[string]Task
	log     *slog.Logger
	tracer  trace.Tracer
	tracing bool
	// judging holds one token per collection judging what it read: at most Workers, and
	// at most GOMAXPROCS. A judge is CPU-bound for hundreds of milliseconds; on two cores,
	// four of them kept an event's goroutines (the handler, the refresh, the fix) waiting
	// for a core at every step (BENCHMARKS.md, "No more judges than cores").
	judging chan struct{}
	// urgentJudging is the events' collections' turns, as many as judging's.
	urgentJudging chan struct{}
	// fullReads holds one token per collection reading its scope in full: at most
	// FullReads.
	fullReads chan struct{}
	// urgent counts the events' jobs running (refreshes and fixes in QueueEvents): a
	// sweep's work yields to them (Options.UrgentYield).
	urgent *urgency.Gate
	// lists are the account lists the jobs name (accountsRef).
	lists accountLists
	// listingNews wakes the collections waiting for a sweep's listing (listing.go).
	listingNews listingNews
	// gate reads the approval requests whose end Hooks.ApprovalEnded reports.
	gate *gates.Gate
	// loopDriven is set when a Loop runs beside the daemon and looks for decided
	// approval requests after each of its passes: the daemon does not poll for them.
	loopDriven bool
	// watch is where the looks for decided approval requests stand (wakeDecided).
	watch decisionWatch
}

// New opens the daemon's queue on the store's database (running its migrations) and
// registers its jobs; Run starts it.
func New(ctx context.Context, o Options) (*Daemon, error) {
	if err := checkTasks(o.Tasks); err != nil {
		return nil, err
	}
	if o.Store == nil || o.Reconciler == nil || o.Machine == nil || o.Log == nil {
		return nil, errors.New("daemon: a store, an audit log, a reconciler and a machine are required")
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Readers <= 0 {
		o.Readers = DefaultReaders
	}
	if o.UrgentYield <= 0 {
		o.UrgentYield = DefaultUrgentYield
	}
	if o.FullReads <= 0 {
		o.FullReads = DefaultFullReads
	}
	if o.ID == "" {
		o.ID = defaultID()
	}
	if o.DryRun {
		o.ID = dryRunID(o.ID)
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = DefaultJobTimeout
	}
	if o.RescueAfter <= 0 {
		o.RescueAfter = o.JobTimeout + 5*time.Minute
	}
	if o.RescueAfter <= o.JobTimeout {
		return nil, fmt.Errorf("daemon: rescue_after (%v) must exceed job_timeout (%v)", o.RescueAfter, o.JobTimeout)
	}
	if o.DeniedWindow <= 0 {
		o.DeniedWindow = watch.DefaultWindow
	}
	if o.ApprovalPoll <= 0 {
		o.ApprovalPoll = DefaultApprovalPoll
	}
	if o.DecisionPoll <= 0 {
		o.DecisionPoll = DefaultDecisionPoll
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Actor == "" {
		o.Actor = "warden"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{o: o, targets: map[string]Target{}, log: o.Logger, gate: gates.New(o.Store, o.Log, o.Plan.Gates, nil),
		fullReads: make(chan struct{}, o.FullReads), urgent: urgency.NewGate(o.UrgentYield)}
	judges := min(o.Workers, runtime.GOMAXPROCS(0))
	d.judging, d.urgentJudging = make(chan struct{}, judges), make(chan struct{}, judges)
	d.tracer, d.tracing = tracerOf(o.Tracer)
	var periodic []*river.PeriodicJob
	for _, t := range o.Targets {
		if t.Name == "" || t.Collector == nil {
			return nil, errors.New("daemon: a target needs a name and a collector")
		}
		if _, dup := d.targets[t.Name]; dup {
			return nil, fmt.Errorf("daemon: target %s given twice", t.Name)
		}
		d.targets[t.Name] = t
		if t.Schedule != nil {
			name, sched := t.Name, t.Schedule
			ticks := &tickClock{}
			periodic = append(periodic, river.NewPeriodicJob(sched, func() (river.JobArgs, *river.InsertOpts) {
				args := SweepArgs{Target: name, Correlation: "tick-" + name + "-" + newID()}
				if now := time.Now(); ticks.regular(sched, now) {
					args.Spread = sweepSpread(sched, now, o.SweepSpread)
				}
				return args, nil
			}, &river.PeriodicJobOpts{ID: "sweep-" + name, RunOnStart: true}))
		}
	}
	if o.Checkpoint != nil {
		every := o.CheckpointEvery
		if every <= 0 {
			every = DefaultCheckpointEvery
		}
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
			return CheckpointArgs{}, nil
		}, &river.PeriodicJobOpts{ID: "checkpoint", RunOnStart: true}))
	}
	watchEvery := o.WatchEvery
	if watchEvery <= 0 {
		watchEvery = DefaultWatchEvery
	}
	periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(watchEvery), func() (river.JobArgs, *river.InsertOpts) {
		return WatchArgs{}, nil
	}, &river.PeriodicJobOpts{ID: "watch", RunOnStart: true}))
	d.tasks = map[string]Task{}
	for _, t := range o.Tasks {
		d.tasks[t.Name] = t
		name := t.Name
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(t.Every), func() (river.JobArgs, *river.InsertOpts) {
			return TaskArgs{Name: name, DueAt: time.Now().UTC()}, nil
		}, &river.PeriodicJobOpts{ID: "task-" + name, RunOnStart: true}))
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &checkpointWorker{d: d})
	river.AddWorker(workers, &taskWorker{d: d})
	river.AddWorker(workers, &sweepWorker{d: d})
	river.AddWorker(workers, &collectWorker{d: d})
	river.AddWorker(workers, &refreshWorker{d: d})
	river.AddWorker(workers, &remediateWorker{d: d})
	river.AddWorker(workers, &rollbackWorker{d: d})
	river.AddWorker(workers, &watchWorker{d: d})
	cfg := &river.Config{
		ID:      o.ID,
		Logger:  o.Logger.With("component", "river"),
		Workers: workers,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.Workers},
			QueueCollect: {MaxWorkers: o.Readers, FetchCooldown: collectFetchCooldown}, QueueEvents: {MaxWorkers: o.Workers}},
		PeriodicJobs:         periodic,
		JobTimeout:           o.JobTimeout,
		RescueStuckJobsAfter: o.RescueAfter,
		MaxAttempts:          o.MaxAttempts,
		ErrorHandler:         &errorHandler{d: d},
		Middleware:           []rivertype.Middleware{&jobTracer{d: d}},
		// A change event's refresh should start within a fraction of a second: SQLite
		// has no notifications, so the queue is polled.
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 250 * time.Millisecond,
	}
	q, closeFn, err := openQueue(ctx, o.Store, cfg)
	if err != nil {
		return nil, err
	}
	d.q, d.close = q, closeFn
	return d, nil
}

// collectFetchCooldown is the least time between two fetches of the sweeps' collection
// queue. A sweep's collections end hundreds a second, and the queue fetched after each
// one, 20 ms apart at least (the events' pace): a fetch of River's on SQLite is a
// statement prepared anew each time (its LIMIT is bound), most of a millisecond. Their
// reads take seconds; 50 ms more before one starts costs a sweep nothing.
const collectFetchCooldown = 50 * time.Millisecond

// ID is this replica's name in the queue.
func (d *Daemon) ID() string { return d.q.ID() }

// Run works jobs (and, on the replica elected leader, enqueues the scheduled sweeps)
// until ctx ends, then stops taking jobs and lets the running ones finish within grace;
// those still running after it are cancelled and handed back to the queue unfinished (a
// job is idempotent: the next run completes it). It closes the queue's pool.
func (d *Daemon) Run(ctx context.Context, grace time.Duration) error {
	defer d.close()
	if err := d.q.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start the job queue: %w", err)
	}
	d.log.Info("daemon started", "replica", d.q.ID(), "targets", len(d.targets), "dry_run", d.o.DryRun)
	var watching sync.WaitGroup
	if !d.loopDriven {
		watching.Go(func() { d.watchDecisions(ctx) })
	}
	<-ctx.Done()
	watching.Wait()
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := d.q.Stop(stop)
	if err != nil {
		d.log.Warn("jobs still running after the grace period: cancelled, they run again later", "grace", grace)
		hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := d.q.StopAndCancel(hard); err != nil {
			return fmt.Errorf("stop the job queue: %w", err)
		}
	}
	d.log.Info("daemon stopped", "replica", d.q.ID())
	return nil
}

// Sweep enqueues a sweep of the named target now (warden's POST /v1/reconcile).
func (d *Daemon) Sweep(ctx context.Context, target, correlation string) (bool, error) {
	if _, ok := d.targets[target]; !ok {
		return false, fmt.Errorf("%w: %q (known: %v)", ErrUnknownTarget, target, d.targetNames())
	}
	queued, err := d.insertOne(ctx, SweepArgs{Target: target, Correlation: correlation})
	if err != nil {
		return false, fmt.Errorf("enqueue a sweep of %s: %w", target, err)
	}
	return queued, nil
}

// ErrUnknownTarget is the error of a request naming a target the daemon does not have.
var ErrUnknownTarget = errors.New("unknown target")

func (d *Daemon) targetNames() []string {
	var out []string
	for n := range d.targets {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// errorHandler audits the jobs given up: the last failure of a job that used all its
// attempts.
type errorHandler struct{ d *Daemon }

func (h *errorHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	h.d.jobFailed(ctx, job, err.Error())
	return nil
}

func (h *errorHandler) HandlePanic(ctx context.Context, job *rivertype.JobRow, panicVal any, trace string) *river.ErrorHandlerResult {
	h.d.failedLog(job).Error("job panicked", "kind", job.Kind, "job", job.ID, "panic", fmt.Sprint(panicVal), "trace", trace)
	h.d.jobFailed(ctx, job, fmt.Sprintf("panic: %v", panicVal))
	return nil
}

func (d *Daemon) jobFailed(ctx context.Context, job *rivertype.JobRow, msg string) {
	log := d.failedLog(job)
	if job.Attempt < job.MaxAttempts {
		log.Warn("job failed: it runs again", "kind", job.Kind, "job", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts, "err", msg)
		d.done(job.Kind, "retried")
		return
	}
	log.Error("job failed for the last time: given up", "kind", job.Kind, "job", job.ID, "attempts", job.Attempt, "err", msg)
	d.done(job.Kind, "discarded")
	ev := audit.Event{Actor: d.o.Actor, Kind: audit.KindJobDiscarded, Subject: fmt.Sprintf("%s/%d", job.Kind, job.ID),
		Data: map[string]any{"attempts": job.Attempt, "error": msg, "args": string(job.EncodedArgs)}}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := d.o.Store.InTx(actx, func(tx *store.Tx) error {
		_, err := d.o.Log.Append(actx, tx, ev)
		return err
	}); err != nil {
		log.Error("audit a discarded job", "kind", job.Kind, "job", job.ID, "err", err)
	}
}

func (d *Daemon) done(kind, outcome string) {
	if d.o.Hooks.JobDone != nil {
		d.o.Hooks.JobDone(kind, outcome)
	}
}

// staged reports a step that began at began and ended with err to Hooks.Stage.
func (d *Daemon) staged(stage string, began time.Time, err error) {
	if d.o.Hooks.Stage != nil {
		d.o.Hooks.Stage(stage, time.Since(began), err)
	}
}

// read reports a scope's read to Hooks.Read.
func (d *Daemon) read(target string, sc snapshot.Scope) {
	if d.o.Hooks.Read != nil {
		d.o.Hooks.Read(target, sc)
	}
}

// newID is a short random id for correlating logs.
func newID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
