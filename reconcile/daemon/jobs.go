package daemon

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/warden-sec/warden/remediate"
)

// Job kinds, as River stores them.
const (
	KindSweep      = "warden.sweep"
	KindCollect    = "warden.collect"
	KindRefresh    = "warden.refresh"
	KindRemediate  = "warden.remediate"
	KindCheckpoint = "warden.checkpoint"
	KindTask       = "warden.task"
)

// liveStates are the states in which a job holds its unique key: one scope is never
// collected twice at once, yet a finished collection does not block the next one (River's
// default would keep a completed job's key for a day).
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// The River priorities of fix jobs (1 runs first, and is River's default). A sweep's
// fixes queue behind what a change event asked for, and behind decided approvals: a
// first sweep of an organisation plans thousands, and a drift announced meanwhile must
// not wait for all of them.
const (
	priorityEvent = 1
	prioritySwept = 2
)

// fixQueue is the queue of a fix job at priority: an event's fixes run in the events'
// queue, which the sweep's fixes never fill.
func fixQueue(priority int) string {
	if priority == priorityEvent {
		return QueueEvents
	}
	return river.QueueDefault
}

// fixOpts are the insert options of a fix job at priority.
func fixOpts(priority int) *river.InsertOpts {
	return &river.InsertOpts{Priority: priority, Queue: fixQueue(priority)}
}

// raceRetry is how soon a fix job runs again after another job of its action moved the
// action first (remediate.ErrStateChanged).
const raceRetry = 250 * time.Millisecond

func unique() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

// SweepArgs asks for every scope of a target to be collected: a scheduled tick.
type SweepArgs struct {
	Target string `json:"target" river:"unique"`
	// Correlation follows the tick into the jobs it enqueues, in the logs.
	Correlation string `json:"correlation"`
	// Trace is the W3C traceparent of the span that enqueued the job, whose child its
	// run's span is (empty without tracing). Not part of the unique key: the same work
	// asked for by two traces is one job.
	Trace string `json:"trace,omitempty"`
	// Spread is how long the sweep's collections are spread over (0: all at once): each
	// scope starts at its own offset within it (spreadOffset).
	Spread time.Duration `json:"spread,omitempty"`
}

// Kind implements river.JobArgs.
func (SweepArgs) Kind() string { return KindSweep }

// InsertOpts implements river.JobArgsWithInsertOpts: one sweep of a target at a time.
func (SweepArgs) InsertOpts() river.InsertOpts { return unique() }

// CollectArgs asks for one scope to be read, judged and its fixes planned.
type CollectArgs struct {
	Target string `json:"target"`
	Scope  string `json:"scope" river:"unique"`
	// After is the id of a collection of the scope that was running when this one was
	// asked for (it may have read the scope before the change that asked): this one
	// reads it again after it. Zero for the others.
	After int64 `json:"after,omitempty" river:"unique"`
	// AccountsRef names the organisation's accounts and projects (the policies' known
	// ones), kept once (state.PutAccountList): a sweep queues a collection per scope,
	// and the list is as long as the organisation.
	AccountsRef string `json:"accounts_ref,omitempty"`
	// Accounts are the same accounts, listed: set by a change event's collection, and by
	// the versions before AccountsRef.
	Accounts []string `json:"accounts,omitempty"`
	// Listing names the listing of the sweep that started the collection before it had
	// listed the organisation (state.Listing), when neither AccountsRef nor Accounts are
	// set: the collection judges and plans nothing until that listing is kept, and
	// nothing at all when it no longer names the scope (listing.go).
	Listing string `json:"listing,omitempty"`
	// Reason says what asked: "schedule", "event", "reconcile".
	Reason string `json:"reason"`
	// Replan asks for the scope's fixes to be planned even if the read changes nothing:
	// the sweep found an action of one of its open findings that a plan moves on (ended,
	// or approved). Not part of the unique key.
	Replan      bool   `json:"replan,omitempty"`
	Correlation string `json:"correlation"`
	// Trace is the traceparent of the span that enqueued the job, as SweepArgs.Trace.
	Trace string `json:"trace,omitempty"`
}

// Kind implements river.JobArgs.
func (CollectArgs) Kind() string { return KindCollect }

// InsertOpts implements river.JobArgsWithInsertOpts: one collection of a scope at a time,
// in the readers' queue (Options.Readers). Uniqueness ignores the queue, so a collection
// queued by an earlier version in the default queue still counts as the scope's.
func (CollectArgs) InsertOpts() river.InsertOpts {
	o := unique()
	o.Queue = QueueCollect
	return o
}

// RefreshArgs asks for one resource to be read again alone and judged: a change event.
// It is unique by resource and event: the same event delivered twice reads once, while
// a second change of a resource whose refresh is already running (and may have read the
// state before it) gets a refresh of its own.
type RefreshArgs struct {
	Target string `json:"target"`
	UID    string `json:"uid" river:"unique"`
	// Source is the event's own id (CloudTrail's eventID), or the request's correlation.
	Source   string   `json:"source" river:"unique"`
	Scope    string   `json:"scope"`
	Accounts []string `json:"accounts,omitempty"`
	// Event names what announced the change, for the logs ("iam:UpdateAccessKey").
	Event       string `json:"event,omitempty"`
	Correlation string `json:"correlation"`
	// AnnouncedAt is when the event says the change happened (Unix nanoseconds; 0 if
	// unknown): drift to verified fix is measured from it.
	AnnouncedAt int64 `json:"announced_at,omitempty"`
	// Trace is the traceparent of the span that enqueued the job, as SweepArgs.Trace.
	Trace string `json:"trace,omitempty"`
}

// Kind implements river.JobArgs.
func (RefreshArgs) Kind() string { return KindRefresh }

// InsertOpts implements river.JobArgsWithInsertOpts: one refresh per resource and event,
// in the events' queue.
func (RefreshArgs) InsertOpts() river.InsertOpts {
	o := unique()
	o.Queue = QueueEvents
	return o
}

// RemediateArgs asks for one planned action to be applied, through the same machine as
// warden apply: gates, drift re-check, intent, call, verification, audit.
type RemediateArgs struct {
	Action string `json:"action" river:"unique"`
	// After is the id of the action's job that was running when this one was asked for
	// (the drift it answers came after that job's re-check). Zero for the others.
	After int64 `json:"after,omitempty" river:"unique"`
	// Plan is a plan of that one action. Its Accounts are left out when AccountsRef
	// names them (CollectArgs.AccountsRef).
	Plan        *remediate.Plan `json:"plan"`
	AccountsRef string          `json:"accounts_ref,omitempty"`
	Scope       string          `json:"scope"`
	Correlation string          `json:"correlation"`
	AnnouncedAt int64           `json:"announced_at,omitempty"`
	// Trace is the traceparent of the span that enqueued the job, as SweepArgs.Trace.
	Trace string `json:"trace,omitempty"`
}

// Kind implements river.JobArgs.
func (RemediateArgs) Kind() string { return KindRemediate }

// InsertOpts implements river.JobArgsWithInsertOpts: one job per action at a time.
func (RemediateArgs) InsertOpts() river.InsertOpts { return unique() }

// CheckpointArgs asks for a signed checkpoint of the audit log: a periodic job.
type CheckpointArgs struct{}

// Kind implements river.JobArgs.
func (CheckpointArgs) Kind() string { return KindCheckpoint }

// InsertOpts implements river.JobArgsWithInsertOpts: one at a time.
func (CheckpointArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

// TaskArgs runs one of the daemon's scheduled tasks (Options.Tasks): a periodic job.
type TaskArgs struct {
	Name string `json:"name" river:"unique"`
	// DueAt is when the schedule enqueued it; not part of the unique key, so that a run
	// late or retried is not doubled by the next.
	DueAt time.Time `json:"due_at"`
}

// Kind implements river.JobArgs.
func (TaskArgs) Kind() string { return KindTask }

// InsertOpts implements river.JobArgsWithInsertOpts: one run of a task at a time.
func (TaskArgs) InsertOpts() river.InsertOpts { return unique() }

// follower is a job that can be asked again while one like it is running.
type follower interface {
	river.JobArgs
	following(id int64) river.JobArgs
}

func (a CollectArgs) following(id int64) river.JobArgs   { a.After = id; return a }
func (a RemediateArgs) following(id int64) river.JobArgs { a.After = id; return a }
