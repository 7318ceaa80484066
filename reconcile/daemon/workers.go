package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/urgency"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// sweepWorker lists a target's scopes and enqueues one collection for each: the scopes
// already queued or running are left as they are (unique jobs).
type sweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	d *Daemon
}

func (w *sweepWorker) Work(ctx context.Context, job *river.Job[SweepArgs]) error {
	d := w.d
	t, err := d.target(job.Args.Target)
	if err != nil {
		return err
	}
	log := d.jobLog(ctx, "correlation", job.Args.Correlation, "target", t.Name)
	started := time.Now()
	replan, err := d.replanScopes(ctx)
	if err != nil {
		// Planning every scope is what a sweep did before it could tell: slower, not wrong.
		log.Warn("sweep: could not tell which scopes' fixes ended: every scope plans", "err", err)
	}
	ss, err := d.sweepStateOf(ctx, t)
	if err != nil {
		// Scope order is what a sweep queued in before, after listing: slower, not wrong.
		log.Warn("sweep: could not read the scopes' last reads: every scope waits for the listing, in its order", "err", err)
		ss = sweepState{}
	}
	listing := listingID(t.Name, job)
	// The scopes listed and read before start while the organisation is listed again
	// (listing.go). A retried sweep leaves them to the unique jobs of its first attempt
	// and queues every scope it lists, as a sweep did before.
	var early []river.InsertManyParams
	if job.Attempt == 1 && len(ss.early) > 0 {
		early = d.collections(t, job, ss.early, "", listing, replan, started)
		sortLongestFirst(early, ss.calls)
		if _, _, err := d.queueCollections(ctx, t, job.Args.Spread, early); err != nil {
			log.Warn("sweep: could not queue the scopes read before: they wait for the listing", "err", err)
			early = nil
		}
	}
	sctx, span := d.stage(ctx, stageScopes, attrTarget.String(t.Name))
	scopes, err := t.Collector.Scopes(sctx)
	span.SetAttributes(attribute.Int("warden.scopes", len(scopes)))
	endSpan(span, err)
	if err != nil {
		return fmt.Errorf("list the scopes of %s: %w", t.Name, err)
	}
	// The accounts are kept once and named by each collection: the list is as long as
	// the organisation, and a sweep queues a collection per scope.
	ref, err := d.accountsRef(ctx, accountsOf(scopes))
	if err != nil {
		return fmt.Errorf("keep the accounts of %s: %w", t.Name, err)
	}
	ids := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		ids = append(ids, sc.ID)
	}
	departed, err := d.keepListing(ctx, t, listing, ref, ids, ss.early)
	if err != nil {
		return err
	}
	first := map[string]bool{}
	for _, p := range early {
		first[p.Args.(CollectArgs).Scope] = true
	}
	var others []string
	for _, id := range ids {
		if !first[id] {
			others = append(others, id)
		}
	}
	rest := d.collections(t, job, others, ref, "", replan, started)
	sortLongestFirst(rest, ss.calls)
	if len(rest)+len(early) == 0 {
		log.Warn("sweep: the target has no scope to read")
		d.done(KindSweep, "completed")
		return nil
	}
	queued, forward, err := d.queueCollections(ctx, t, job.Args.Spread, rest)
	if err != nil {
		return err
	}
	log.Info("sweep", "scopes", len(ids), "started_before_listing", len(early), "departed", len(departed),
		"enqueued", queued, "already_queued", len(rest)-queued, "replan", len(replan),
		"spread", job.Args.Spread, "brought_forward", forward,
		"took", time.Since(started).Round(time.Millisecond))
	d.done(KindSweep, "completed")
	return nil
}

// collections are the sweep's collection jobs of scopes (each once), which name the
// organisation's accounts by ref, or, started before the listing, the listing to come.
func (d *Daemon) collections(t Target, job *river.Job[SweepArgs], scopes []string, ref, listing string, replan map[string]bool, started time.Time) []river.InsertManyParams {
	seen := map[string]bool{}
	var params []river.InsertManyParams
	for _, sc := range scopes {
		if seen[sc] {
			continue // one batch may not hold a unique key twice
		}
		seen[sc] = true
		p := river.InsertManyParams{Args: CollectArgs{Target: t.Name, Scope: sc, AccountsRef: ref, Listing: listing,
			Reason: "schedule", Replan: replan == nil || replan[sc], Correlation: job.Args.Correlation}}
		if off := spreadOffset(sc, job.Args.Spread); off > 0 {
			p.InsertOpts = &river.InsertOpts{ScheduledAt: started.Add(off)}
		}
		params = append(params, p)
	}
	return params
}

// queueCollections enqueues a sweep's collections, those already queued or running
// left as they are (unique jobs), and brings forward those a spread sweep had scheduled
// later when this one reads at once.
func (d *Daemon) queueCollections(ctx context.Context, t Target, spread time.Duration, params []river.InsertManyParams) (queued, forward int, err error) {
	if len(params) == 0 {
		return 0, 0, nil
	}
	ictx, span, params := d.startEnqueue(ctx, params)
	res, err := d.q.InsertMany(ictx, params)
	if err != nil {
		endEnqueue(span, 0, 0, err)
		return 0, 0, fmt.Errorf("enqueue the collections of %s: %w", t.Name, err)
	}
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			queued++
		}
	}
	endEnqueue(span, queued, len(params)-queued, nil)
	forward, err = d.bringForward(ctx, res, spread)
	return queued, forward, err
}

// sortLongestFirst orders a sweep's collections by the calls their scopes' last reads
// took (calls), most first; the scopes never read come after them all, and the order is
// otherwise kept. A sweep lasts as long as its slowest collection, and the queue starts
// them in the order they were queued: an account's IAM scope, read at IAM's pace, takes
// many times the calls of one of its regions, and queued in scope order the last
// accounts' IAM scopes started only once every region before them had been read, long
// after the sweep began (BENCHMARKS.md, "The long poles first"). A scope never read is
// read in full, which waits for a turn (Options.FullReads) in a reader's place: hundreds
// of new scopes queued first would hold every reader while the known scopes, whose reads
// cost only their calls, waited behind them.
func sortLongestFirst(params []river.InsertManyParams, calls map[string]int) {
	weight := func(p river.InsertManyParams) int {
		n, ok := calls[p.Args.(CollectArgs).Scope]
		if !ok {
			return -1
		}
		return n
	}
	slices.SortStableFunc(params, func(a, b river.InsertManyParams) int { return cmp.Compare(weight(b), weight(a)) })
}

// accountsOf lists the AWS accounts and GCP projects among the scopes: what a snapshot's
// header would call the organisation's accounts, which policies treat as known.
func accountsOf(scopes []snapshot.Scope) []string {
	var out []string
	for _, sc := range scopes {
		if (sc.Provider == "aws" || sc.Provider == "gcp") && sc.Account != "" && !slices.Contains(out, sc.Account) {
			out = append(out, sc.Account)
		}
	}
	slices.Sort(out)
	return out
}

// collectWorker reads one scope, judges it, and enqueues a remediation per planned action.
type collectWorker struct {
	river.WorkerDefaults[CollectArgs]
	d *Daemon
}

func (w *collectWorker) Work(ctx context.Context, job *river.Job[CollectArgs]) error {
	d, a := w.d, job.Args
	t, err := d.target(a.Target)
	if err != nil {
		return err
	}
	ctx = audit.WithCorrelation(ctx, a.Correlation) // into the audit entries of what it opens and resolves
	if a.Reason == "event" {
		// A collection an event asked for (a resource that cannot be read alone) is
		// urgent work, as the event's refresh is.
		var leave func()
		ctx, leave = d.urgentWork(ctx, true)
		defer leave()
	} else {
		// A sweep's yields to urgent work at each AWS call, before a full read and
		// before judging.
		ctx = urgency.WithGate(ctx, d.urgent)
	}
	log := d.jobLog(ctx, "correlation", a.Correlation, "scope", a.Scope, "job", job.ID)
	// Whether the last read was complete: a read after a partial or failed one plans even
	// if it changed no resource (that read planned notices only).
	prev, known, err := d.o.Reconciler.Scope(ctx, a.Scope)
	if err != nil {
		return fmt.Errorf("collect %s: read the scope's last read: %w", a.Scope, err)
	}
	prevComplete := known && prev.Scope.Complete()
	var sink collectors.MemorySink
	cctx, span := d.stage(ctx, stageCollect, attrScope.String(a.Scope))
	began := time.Now()
	tape, reread, releaseFull, err := d.readScope(ctx, cctx, t, a.Scope, prev, known, began, &sink)
	defer releaseFull()
	if reread.Unchanged && err == nil {
		endCollectUnchanged(span, reread.Calls)
		d.staged(stageCollect, began, nil)
		replayed := prev.Scope
		replayed.Calls, replayed.Throttled, replayed.AccessDenied = reread.Calls, reread.Throttled, 0
		d.read(a.Target, replayed)
		out, err := d.o.Reconciler.ObserveUnchanged(ctx, a.Scope, tape, reread.Calls, time.Time{})
		if err != nil {
			return err // a race with another observation, or a refresh: read again
		}
		return w.observed(ctx, job, log, prevComplete, out, reread.Calls)
	}
	endCollect(ctx, span, a.Scope, &sink, err)
	sc, reported := scopeIn(&sink, a.Scope)
	if reported {
		// Reported even when the read ended in an error: its calls were made.
		d.read(a.Target, sc)
	} else if err == nil {
		err = errNoSuchScope
	}
	d.staged(stageCollect, began, err)
	if errors.Is(err, collectors.ErrUnknownScope) {
		// The account, region or endpoint is no longer the collector's: nothing to read.
		log.Warn("collect: the scope is no longer one of the target's", "err", err)
		d.done(KindCollect, "cancelled")
		return river.JobCancel(err)
	}
	if err != nil {
		return fmt.Errorf("collect %s: %w", a.Scope, err)
	}
	// A collection started before its sweep's listing waits for it here, before it
	// takes a judging turn: what it read is judged with the organisation's accounts as
	// listed, or not at all.
	accounts, err := d.collectionAccounts(ctx, a)
	if err != nil {
		return d.unjudged(log, a.Scope, err)
	}
	if err := urgency.Yield(ctx); err != nil {
		return err
	}
	release, err := d.judgeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	ob := reconcile.Observation{Scope: sc, Accounts: accounts, Tape: reread.Tape}
	if tape != nil || reread.Why != "" {
		log.Debug("collect: read in full", "replayed", tape != nil, "why", reread.Why)
	}
	for _, r := range sink.Resources {
		if r.Scope == a.Scope {
			ob.Resources = append(ob.Resources, r)
		}
	}
	octx, span := d.stage(ctx, stageObserve, attrScope.String(a.Scope))
	began = time.Now()
	out, err := d.o.Reconciler.Observe(octx, ob)
	endObserve(span, out, err)
	d.staged(stageObserve, began, err)
	if err != nil {
		return err // a race with another observation is retried
	}
	return w.observed(ctx, job, log, prevComplete, out, ob.Scope.Calls)
}

// judgeTurn waits for a turn to judge what a collection read, and returns what gives it
// back. Reading waits on the cloud; judging takes a core: however many collections read
// at once, as many judge as there are turns (Options.Workers, at most the cores). An
// event's collection takes one of the events' turns, as many again: it does not wait for
// the sweep's judges, which yield to it, and a burst of events cannot judge more scopes
// at once than the replica has cores.
func (d *Daemon) judgeTurn(ctx context.Context) (release func(), err error) {
	turns := d.judging
	if urgency.IsUrgent(ctx) {
		turns = d.urgentJudging
	}
	select {
	case turns <- struct{}{}:
		return func() { <-turns }, nil
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
}

// observed ends a collection once its read is recorded: an unchanged scope is done, a
// changed one (or one read for another reason than the schedule) is planned.
func (w *collectWorker) observed(ctx context.Context, job *river.Job[CollectArgs], log *slog.Logger, prevComplete bool, out *reconcile.Outcome, calls int) error {
	d, a := w.d, job.Args
	if d.o.Hooks.Observed != nil {
		d.o.Hooks.Observed(a.Target, out)
	}
	log.Info("scope reconciled", "status", out.Status, "resources", out.Resources, "evaluated", out.Evaluated,
		"opened", len(out.Opened), "resolved", len(out.Resolved), "unknown", out.Unknown, "calls", calls)
	if unchanged(a, job.Attempt, prevComplete, out) {
		// Its actions stand where the last plan left them (decisions.go).
		d.done(KindCollect, "completed")
		return nil
	}
	// An unchanged scope started before its sweep's listing may wait for it here, the
	// first time it needs the accounts (collectionAccounts).
	accounts, err := d.collectionAccounts(ctx, a)
	if err != nil {
		return d.unjudged(log, a.Scope, err)
	}
	if err := d.remediate(ctx, a.Scope, accounts, a.Correlation, 0, prioritySwept); err != nil {
		return err
	}
	d.done(KindCollect, "completed")
	return nil
}

// readScope reads scope into sink at `at`: through the collector's tape of its last
// read when it keeps tapes (collectors.Rereader), which may find it unchanged, else in
// full. It returns the tape replayed (nil: none), what the read again found, and what
// gives back a full read's turn (Options.FullReads), which the caller holds until what
// was read is judged: its memory is freed then, not when the read ends. Its context
// ctx is the job's, cctx the read's.
func (d *Daemon) readScope(ctx, cctx context.Context, t Target, scope string, prev state.Scope, known bool, at time.Time,
	sink *collectors.MemorySink) (tape []byte, reread collectors.Reread, release func(), err error) {
	release = func() {}
	full := func(ctx context.Context) (func(), error) {
		r, err := d.fullRead(ctx)
		if err != nil {
			return nil, err
		}
		release = r
		return func() {}, nil
	}
	rr, ok := t.Collector.(collectors.Rereader)
	if !ok {
		if _, err = full(cctx); err == nil {
			err = t.Collector.CollectScope(cctx, scope, sink)
		}
		return nil, reread, release, err
	}
	// The last read's tape, replayed first: an unchanged scope costs its reads.
	if tape, err = d.o.Reconciler.Tape(ctx, prev, known, at); err != nil {
		return nil, reread, release, err
	}
	reread, err = rr.CollectScopeAgain(cctx, scope, collectors.Again{Tape: tape, Full: full}, sink)
	return tape, reread, release, err
}

// fullRead waits for a turn to read a scope in full (Options.FullReads), and returns
// what gives it back.
func (d *Daemon) fullRead(ctx context.Context) (func(), error) {
	if err := urgency.Yield(ctx); err != nil {
		return nil, err
	}
	select {
	case d.fullReads <- struct{}{}:
		return func() { <-d.fullReads }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errNoSuchScope is a collector's fault: it returned without reporting the scope it
// was asked to read.
var errNoSuchScope = errors.New("the collector reported no such scope")

// scopeIn is the scope id as the collector reported it to sink (the last report, if it
// made several), and whether it reported it at all.
func scopeIn(sink *collectors.MemorySink, id string) (snapshot.Scope, bool) {
	var out snapshot.Scope
	found := false
	for _, sc := range sink.Scopes {
		if sc.ID == id {
			out, found = sc, true
		}
	}
	return out, found
}

// remediate plans the scope's fixes and enqueues one remediation job per action (an
// action already queued or waiting for approval keeps its job), at priority
// (priorityEvent or prioritySwept).
func (d *Daemon) remediate(ctx context.Context, scope string, accounts []string, correlation string, announced int64, priority int) error {
	po := d.o.Plan
	po.Accounts = accounts
	pctx, span := d.stage(ctx, stagePlan, attrScope.String(scope))
	began := time.Now()
	p, err := d.o.Reconciler.Plan(pctx, scope, po)
	if err == nil {
		span.SetAttributes(attribute.Int("warden.plan.actions", len(p.Actions)))
	}
	endSpan(span, err)
	d.staged(stagePlan, began, err)
	if err != nil {
		return err
	}
	if len(p.Actions) == 0 {
		return nil
	}
	// An action waiting for its approval, as planned now, keeps waiting without a job:
	// the decision wakes it (wakeDecided).
	p, waiting, err := d.notPending(ctx, p)
	if err != nil {
		return fmt.Errorf("plan %s: %w", scope, err)
	}
	if waiting > 0 {
		d.jobLog(ctx).Debug("fixes waiting for approval: no job until it is decided", "scope", scope, "waiting", waiting)
	}
	if len(p.Actions) == 0 {
		return nil
	}
	// Each job names the accounts kept once, rather than carrying them (CollectArgs).
	ref, err := d.accountsRef(ctx, accounts)
	if err != nil {
		return fmt.Errorf("plan %s: %w", scope, err)
	}
	params := make([]river.InsertManyParams, 0, len(p.Actions))
	for _, pa := range p.Actions {
		one := p.Only(func(x remediate.PlannedAction) bool { return x.ID == pa.ID })
		// The scope's notices (findings without a fix) stay out of each action's job:
		// the job applies one action, and carrying them made every job's row as large
		// as the scope's whole plan (a third of a first sweep's CPU went to River's
		// inserts).
		one.Notices = nil
		if ref != "" {
			one.Accounts = nil
		}
		params = append(params, river.InsertManyParams{Args: RemediateArgs{Action: pa.ID, Plan: one, AccountsRef: ref, Scope: scope,
			Correlation: correlation, AnnouncedAt: announced}, InsertOpts: fixOpts(priority)})
	}
	if _, _, err := d.insert(ctx, params); err != nil {
		return fmt.Errorf("enqueue the fixes of %s: %w", scope, err)
	}
	return nil
}

// insert enqueues jobs. A job like one already waiting is not enqueued again: the
// waiting one will do. A job like one already running is enqueued to run after it, since
// the running one may have read the world before the change that asks again (and so on:
// the one after it may be running too, its end not yet recorded).
func (d *Daemon) insert(ctx context.Context, params []river.InsertManyParams) (enqueued, waiting int, err error) {
	ctx, span, params := d.startEnqueue(ctx, params)
	defer func() { endEnqueue(span, enqueued, waiting, err) }()
	var promote []int64
	for round := 0; len(params) > 0; round++ {
		res, err := d.q.InsertMany(ctx, params)
		if err != nil {
			return enqueued, waiting, err
		}
		var again []river.InsertManyParams
		for i, r := range res {
			if !r.UniqueSkippedAsDuplicate {
				enqueued++
				continue
			}
			f, ok := params[i].Args.(follower)
			if ok && round < 8 && r.Job != nil && r.Job.State == rivertype.JobStateRunning {
				again = append(again, river.InsertManyParams{Args: f.following(r.Job.ID), InsertOpts: params[i].InsertOpts})
				continue
			}
			if r.Job != nil && r.Job.State != rivertype.JobStateRunning && r.Job.Priority > priorityOf(params[i]) {
				promote = append(promote, r.Job.ID)
			}
			waiting++
		}
		params = again
	}
	if err := d.promote(ctx, promote, priorityEvent); err != nil {
		return enqueued, waiting, err
	}
	return enqueued, waiting, nil
}

// priorityOf is the River priority p is inserted at.
func priorityOf(p river.InsertManyParams) int {
	if p.InsertOpts != nil && p.InsertOpts.Priority != 0 {
		return p.InsertOpts.Priority
	}
	return priorityEvent
}

// promote moves the queued jobs ids up to priority, and into the queue of that
// priority's fixes (fixQueue). An event's fix whose action a sweep had already queued is
// that job (one job per action): the event must not wait behind the sweep's other fixes.
// River has no call for it; its table is the daemon's to write (queue.go), and only jobs
// not yet taken are changed.
//
// River writes its table without the store's locks, and each UPDATE is its own
// compare-and-set (a job not yet taken, moved only up): the store's exclusive lock
// would guard nothing, and would make the event wait for every fix and observation
// under way. Promotions take a partition of their own instead, so that two of them (two
// replicas') never lock River's rows in opposite orders.
func (d *Daemon) promote(ctx context.Context, ids []int64, priority int) error {
	if len(ids) == 0 {
		return nil
	}
	queue := fixQueue(priority)
	err := d.o.Store.InTxOn(ctx, "river/promote", func(tx *store.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE river_job SET priority = ?, queue = ?
				WHERE id = ? AND priority > ? AND state IN ('available', 'retryable', 'scheduled')`, priority, queue, id, priority); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("move %d queued fix jobs up to priority %d: %w", len(ids), priority, err)
	}
	return nil
}

// refreshWorker reads one resource again alone and judges it; a resource its collector
// cannot read alone makes a collection of its scope.
type refreshWorker struct {
	river.WorkerDefaults[RefreshArgs]
	d *Daemon
}

func (w *refreshWorker) Work(ctx context.Context, job *river.Job[RefreshArgs]) error {
	d, a := w.d, job.Args
	t, err := d.target(a.Target)
	if err != nil {
		return err
	}
	ctx = audit.WithCorrelation(ctx, a.Correlation)
	ctx, leave := d.urgentWork(ctx, job.Queue == QueueEvents)
	defer leave()
	log := d.jobLog(ctx, "correlation", a.Correlation, "resource", a.UID, "event", a.Event, "job", job.ID)
	var out *reconcile.Outcome
	err = collectors.ErrUnsupported
	if t.Reader != nil {
		rctx, span := d.stage(ctx, stageRefresh, attrUID.String(a.UID))
		began := time.Now()
		out, err = d.o.Reconciler.Refresh(rctx, t.Reader, a.UID, a.Scope, a.Accounts)
		endRefresh(span, out, err)
		if !errors.Is(err, collectors.ErrUnsupported) {
			// A resource its reader cannot read alone was not read: its scope is.
			d.staged(stageRefresh, began, err)
		}
	}
	if errors.Is(err, collectors.ErrUnsupported) {
		if a.Scope == "" {
			return river.JobCancel(fmt.Errorf("refresh %s: it cannot be read alone and names no scope", a.UID))
		}
		log.Info("refresh: the resource is read with its scope")
		if _, _, err := d.insert(ctx, []river.InsertManyParams{{Args: CollectArgs{Target: a.Target, Scope: a.Scope, Accounts: a.Accounts, Reason: "event", Correlation: a.Correlation}}}); err != nil {
			return fmt.Errorf("enqueue a collection of %s: %w", a.Scope, err)
		}
		d.done(KindRefresh, "completed")
		return nil
	}
	if err != nil {
		return err
	}
	if d.o.Hooks.Observed != nil {
		d.o.Hooks.Observed(a.Target, out)
	}
	log.Info("resource reconciled", "scope", out.Scope, "deleted", out.Deleted, "opened", len(out.Opened), "resolved", len(out.Resolved))
	if err := d.remediate(ctx, out.Scope, a.Accounts, a.Correlation, a.AnnouncedAt, priorityEvent); err != nil {
		return err
	}
	d.done(KindRefresh, "completed")
	return nil
}

// remediateWorker applies one action through the remediation machine. An action waiting
// for approval snoozes its job (attempts are not used up) until it is decided; one that
// reached an end (verified, refused, denied, voided, failed, rolled back) ends its job.
type remediateWorker struct {
	river.WorkerDefaults[RemediateArgs]
	d *Daemon
}

func (w *remediateWorker) Work(ctx context.Context, job *river.Job[RemediateArgs]) error {
	d, a := w.d, job.Args
	if a.Plan == nil || len(a.Plan.Actions) != 1 {
		return river.JobCancel(fmt.Errorf("remediate %s: the job carries no one-action plan", a.Action))
	}
	if job.Queue == QueueEvents {
		var leave func()
		ctx, leave = d.urgentWork(ctx, true)
		defer leave()
	} else if err := d.urgent.Wait(ctx); err != nil {
		// A swept fix starts when no event's work runs; once started, it holds its
		// target and finishes.
		return err
	}
	log := d.jobLog(ctx, "correlation", a.Correlation, "action", a.Action, "job", job.ID)
	ctx = audit.WithCorrelation(ctx, a.Correlation)
	if a.AccountsRef != "" {
		accounts, err := d.accountsOf(ctx, nil, a.AccountsRef)
		if err != nil {
			return fmt.Errorf("remediate %s: %w", a.Action, err)
		}
		a.Plan.Accounts = accounts
	}
	before := d.pendingApproval(ctx, log, a.Action)
	actx, span := d.stage(ctx, stageApply, attrAction.String(a.Action))
	began := time.Now()
	var res *remediate.Result
	var err error
	if d.o.DryRun {
		// Plan and ask: approval requests are made, nothing is applied.
		res, err = d.o.Machine.Ask(actx, a.Plan)
	} else {
		res, err = d.o.Machine.Apply(actx, a.Plan, true)
	}
	endApply(span, a.Action, res, err)
	if errors.Is(err, remediate.ErrPaused) {
		log.Info("remediation is paused: the fix waits", "err", err)
		d.done(KindRemediate, "snoozed")
		return river.JobSnooze(d.o.ApprovalPoll)
	}
	if errors.Is(err, remediate.ErrStateChanged) && time.Since(job.CreatedAt) < d.o.JobTimeout {
		// Another job of the action (a sweep's beside an event's) moved it first: this
		// run lost a race, it did not fail. It runs again shortly, not after River's
		// backoff (16 s at a second attempt), so that the drift it answers waits on the
		// other run only. A snooze uses no attempt, so it is bounded in time: no other
		// run holds an action longer than a job may run; past that, it is an error.
		log.Info("another run of the action moved it meanwhile: this one runs again shortly", "err", err)
		d.done(KindRemediate, "snoozed")
		return river.JobSnooze(raceRetry)
	}
	if err != nil {
		d.staged(stageApply, began, err)
		return fmt.Errorf("remediate %s: %w", a.Action, err)
	}
	var it remediate.Item
	for _, x := range res.Items {
		if x.Action == a.Action {
			it = x
		}
	}
	if it.Action == "" {
		err := fmt.Errorf("remediate %s: the machine reported nothing of it (%s)", a.Action, res.Stopped+res.Deferred)
		d.staged(stageApply, began, err)
		return err
	}
	var announced time.Time
	if a.AnnouncedAt > 0 {
		announced = time.Unix(0, a.AnnouncedAt)
	}
	if d.o.Hooks.Applied != nil {
		d.o.Hooks.Applied(it, announced)
	}
	d.approvalEnded(ctx, log, before, it)
	log.Info("remediation", "remediator", it.Remediator, "state", it.State, "outcome", it.Outcome, "dry_run", d.o.DryRun)
	if d.o.DryRun {
		d.staged(stageApply, began, nil)
		d.done(KindRemediate, "completed")
		return nil
	}
	switch it.State {
	case remediate.StatePending:
		// It waits for a decision without a job: the decision (or the request's expiry)
		// enqueues the next one (wakeDecided), and a sweep does not. As when it was
		// snoozed, the run is no step of its own (Hooks.Stage).
		d.done(KindRemediate, "completed")
		return nil
	case remediate.StateApproved:
		d.done(KindRemediate, "snoozed")
		return river.JobSnooze(d.o.ApprovalPoll)
	case remediate.StatePlanned, remediate.StateApplying:
		if why := res.Stopped + res.Deferred; it.State == remediate.StatePlanned && why != "" {
			// Held back by a budget or a breaker shared by every run (an hour's budget
			// spent, failures in a row): it waits like an approval, without using up
			// attempts.
			log.Warn("remediation held back", "reason", why)
			d.done(KindRemediate, "snoozed")
			return river.JobSnooze(d.o.ApprovalPoll)
		}
		err := fmt.Errorf("remediate %s: left %s: %s", a.Action, it.State, it.Outcome)
		d.staged(stageApply, began, err)
		return err
	}
	d.staged(stageApply, began, nil)
	if it.State == remediate.StateFailed && it.Transient {
		if err := d.retryLater(ctx, job.ID, a, it); err != nil {
			return err
		}
		log.Warn("remediation failed on an error that may pass: its target is read again", "after", transientRetry, "outcome", it.Outcome)
	}
	// Verified, refused, denied, voided, failed (recorded and audited by the machine),
	// rolled back, or in progress (a multi-step fix warden serve moves on when due).
	d.done(KindRemediate, "completed")
	return nil
}

// pendingApproval is the action as it stands before a run, when it waits for an
// approval decision and Hooks.ApprovalEnded wants to hear how that ends; nil otherwise.
func (d *Daemon) pendingApproval(ctx context.Context, log *slog.Logger, action string) *remediate.Record {
	if d.o.Hooks.ApprovalEnded == nil {
		return nil
	}
	r, err := d.o.Machine.Action(ctx, action)
	if err != nil {
		// Only a metric is at stake: the run goes on.
		log.Warn("read the action before its run: its approval's end goes uncounted", "err", err)
		return nil
	}
	if r == nil || r.State != remediate.StatePending {
		return nil
	}
	return r
}

// approvalEnded reports to Hooks.ApprovalEnded how the request of before (the action
// waiting for a decision when the run began) ended, if the run moved the action on: the
// request's state now, for the generation that waited (approved, denied, expired or
// voided; approved and then voided because the target drifted is voided).
func (d *Daemon) approvalEnded(ctx context.Context, log *slog.Logger, before *remediate.Record, it remediate.Item) {
	if before == nil || it.State == remediate.StatePending {
		return
	}
	req, err := d.gate.Get(ctx, gates.RequestID(before.ID, before.Binding()))
	if err != nil {
		log.Warn("read the approval request the action waited for: its end goes uncounted", "err", err)
		return
	}
	if req.State == gates.StatePending {
		return // still undecided: the action moved on some other way
	}
	d.o.Hooks.ApprovalEnded(string(req.State))
}

// transientRetry is how long after a fix failed on throttling or a server error its
// target is read again: long enough for a rate limit's bucket to refill.
const transientRetry = 5 * time.Second

// retryLater schedules a refresh of the failed fix's target: read again, judged, and, if
// the finding stands, planned anew (a new generation of the action) — sooner than the
// next sweep, and for a target no schedule sweeps at all. A fix that keeps failing is
// bounded by the breaker (remediate.Limits.PauseAfterFailures) and the hourly budget.
func (d *Daemon) retryLater(ctx context.Context, jobID int64, a RemediateArgs, it remediate.Item) error {
	target, _, _ := strings.Cut(a.Scope, "/")
	if _, ok := d.targets[target]; !ok {
		return nil // a scope of no target this daemon reads: the next plan of it will do
	}
	args := RefreshArgs{Target: target, UID: it.Target, Source: fmt.Sprintf("retry-job-%d", jobID), Scope: a.Scope,
		Accounts: a.Plan.Accounts, Event: "retry " + it.Remediator, Correlation: a.Correlation, AnnouncedAt: a.AnnouncedAt}
	opts := args.InsertOpts()
	opts.ScheduledAt = time.Now().Add(transientRetry)
	if _, _, err := d.insert(ctx, []river.InsertManyParams{{Args: args, InsertOpts: &opts}}); err != nil {
		return fmt.Errorf("remediate %s: schedule a new read of %s: %w", a.Action, it.Target, err)
	}
	return nil
}

// checkpointWorker signs an audit checkpoint.
type checkpointWorker struct {
	river.WorkerDefaults[CheckpointArgs]
	d *Daemon
}

func (w *checkpointWorker) Work(ctx context.Context, job *river.Job[CheckpointArgs]) error {
	if w.d.o.Checkpoint == nil {
		return river.JobCancel(errors.New("this replica has no audit key to sign a checkpoint with"))
	}
	if err := w.d.o.Checkpoint(ctx); err != nil {
		return fmt.Errorf("sign an audit checkpoint: %w", err)
	}
	w.d.jobLog(ctx).Info("audit checkpoint signed")
	w.d.done(KindCheckpoint, "completed")
	return nil
}

// taskWorker runs one of the daemon's scheduled tasks.
type taskWorker struct {
	river.WorkerDefaults[TaskArgs]
	d *Daemon
}

func (w *taskWorker) Work(ctx context.Context, job *river.Job[TaskArgs]) error {
	t, ok := w.d.tasks[job.Args.Name]
	if !ok {
		// Queued by a replica with another configuration.
		return river.JobCancel(fmt.Errorf("this replica has no task %s", job.Args.Name))
	}
	at := job.Args.DueAt
	if at.IsZero() {
		at = job.CreatedAt
	}
	log := w.d.jobLog(ctx, "task", t.Name, "job", job.ID)
	start := time.Now()
	if err := t.Run(ctx, at); err != nil {
		if l, ok := errors.AsType[*laterError](err); ok {
			log.Info("task waits", "for", l.d, "why", l.why)
			w.d.done(KindTask, "snoozed")
			return river.JobSnooze(l.d)
		}
		return fmt.Errorf("task %s: %w", t.Name, err)
	}
	log.Info("task done", "took", time.Since(start).Round(time.Millisecond))
	w.d.done(KindTask, "completed")
	return nil
}

// target is the named target, or the error that cancels a job naming one this daemon
// does not have (its config changed since the job was queued).
func (d *Daemon) target(name string) (Target, error) {
	t, ok := d.targets[name]
	if !ok {
		return Target{}, river.JobCancel(fmt.Errorf("%w: %s", ErrUnknownTarget, name))
	}
	return t, nil
}

// DefaultUrgentYield is Options.UrgentYield's default.
const DefaultUrgentYield = time.Second

// urgentWork marks a job as urgent while it runs, if it is (an event's refresh, fix or
// collection; a decided approval's fix): the sweep's work yields to it. leave ends the
// mark.
func (d *Daemon) urgentWork(ctx context.Context, urgent bool) (context.Context, func()) {
	if !urgent {
		return ctx, func() {}
	}
	return urgency.Urgent(ctx), d.urgent.Enter()
}
