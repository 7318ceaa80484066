package daemon

import (
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/warden-sec/warden/remediate"
)

// Job kinds, as River stores them.
const (
	KindSweep     = "warden.sweep"
	KindCollect   = "warden.collect"
	KindRefresh   = "warden.refresh"
	KindRemediate = "warden.remediate"
)

// liveStates are the states in which a job holds its unique key: one scope is never
// collected twice at once, yet a finished collection does not block the next one (River's
// default would keep a completed job's key for a day).
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

func unique() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

// SweepArgs asks for every scope of a target to be collected: a scheduled tick.
type SweepArgs struct {
	Target string `json:"target" river:"unique"`
	// Correlation follows the tick into the jobs it enqueues, in the logs.
	Correlation string `json:"correlation"`
}

// Kind implements river.JobArgs.
func (SweepArgs) Kind() string { return KindSweep }

// InsertOpts implements river.JobArgsWithInsertOpts: one sweep of a target at a time.
func (SweepArgs) InsertOpts() river.InsertOpts { return unique() }

// CollectArgs asks for one scope to be read, judged and its fixes planned.
type CollectArgs struct {
	Target string `json:"target"`
	Scope  string `json:"scope" river:"unique"`
	// Accounts are the organisation's accounts and projects (the policies' known ones).
	Accounts []string `json:"accounts,omitempty"`
	// Reason says what asked: "schedule", "event", "reconcile".
	Reason      string `json:"reason"`
	Correlation string `json:"correlation"`
}

// Kind implements river.JobArgs.
func (CollectArgs) Kind() string { return KindCollect }

// InsertOpts implements river.JobArgsWithInsertOpts: one collection of a scope at a time.
func (CollectArgs) InsertOpts() river.InsertOpts { return unique() }

// RefreshArgs asks for one resource to be read again alone and judged: a change event.
type RefreshArgs struct {
	Target   string   `json:"target"`
	UID      string   `json:"uid" river:"unique"`
	Scope    string   `json:"scope"`
	Accounts []string `json:"accounts,omitempty"`
	// Event names what announced the change, for the logs ("iam:UpdateAccessKey").
	Event       string `json:"event,omitempty"`
	Correlation string `json:"correlation"`
	// AnnouncedAt is when the event says the change happened (Unix nanoseconds; 0 if
	// unknown): drift to verified fix is measured from it.
	AnnouncedAt int64 `json:"announced_at,omitempty"`
}

// Kind implements river.JobArgs.
func (RefreshArgs) Kind() string { return KindRefresh }

// InsertOpts implements river.JobArgsWithInsertOpts: one refresh of a resource at a time.
func (RefreshArgs) InsertOpts() river.InsertOpts { return unique() }

// RemediateArgs asks for one planned action to be applied, through the same machine as
// warden apply: gates, drift re-check, intent, call, verification, audit.
type RemediateArgs struct {
	Action string `json:"action" river:"unique"`
	// Plan is a plan of that one action.
	Plan        *remediate.Plan `json:"plan"`
	Scope       string          `json:"scope"`
	Correlation string          `json:"correlation"`
	AnnouncedAt int64           `json:"announced_at,omitempty"`
}

// Kind implements river.JobArgs.
func (RemediateArgs) Kind() string { return KindRemediate }

// InsertOpts implements river.JobArgsWithInsertOpts: one job per action at a time.
func (RemediateArgs) InsertOpts() river.InsertOpts { return unique() }
