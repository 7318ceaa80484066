package metrics

import (
	"context"
	"errors"
	"net"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc/codes"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// other is the label value that stands for any value outside a label's fixed set, or past
// a free-form label's limit: a bug or a surprise shows up as "other" instead of as a new
// series per value.
const other = "other"

// Stage is a step of the reconcile loop, the stage label of the reconcile metrics.
type Stage string

// The stages of the loop.
const (
	StageCollect   Stage = "collect"   // read a scope (or one resource) from its cloud
	StageEvaluate  Stage = "evaluate"  // run the policies over what changed
	StagePlan      Stage = "plan"      // turn findings into actions and gate them
	StageRemediate Stage = "remediate" // apply, verify, roll back
	StageEvent     Stage = "event"     // handle one cloud change event
)

func stages() []Stage {
	return []Stage{StageCollect, StageEvaluate, StagePlan, StageRemediate, StageEvent}
}

// Reason is why a reconcile step failed, the reason label of warden_reconcile_errors_total.
type Reason string

// The reasons, a fixed set so that errors can be counted without a series per message.
const (
	ReasonThrottled    Reason = "throttled"     // the cloud refused for rate or quota
	ReasonAccessDenied Reason = "access_denied" // warden lacks a permission
	ReasonTimeout      Reason = "timeout"       // a deadline passed
	ReasonCanceled     Reason = "canceled"      // shutdown or a caller gave up; not the loop's fault
	ReasonUnavailable  Reason = "unavailable"   // the cloud answered 5xx / UNAVAILABLE after retries
	ReasonInvalid      Reason = "invalid"       // bad input: config, policy, event, plan
	ReasonInternal     Reason = "internal"      // anything else: a bug, the store, the unexpected
)

func reasons() []Reason {
	return []Reason{ReasonThrottled, ReasonAccessDenied, ReasonTimeout, ReasonCanceled,
		ReasonUnavailable, ReasonInvalid, ReasonInternal}
}

// reasonError is an error marked with its Reason by Classify.
type reasonError struct {
	err    error
	reason Reason
}

func (e *reasonError) Error() string { return e.err.Error() }
func (e *reasonError) Unwrap() error { return e.err }

// Classify marks err with reason, so that ReasonOf (and so ObserveReconcile) counts it
// under that reason whatever it wraps: the way to say "invalid" for a bad event or plan,
// which no error type tells. A nil err stays nil.
func Classify(err error, reason Reason) error {
	if err == nil {
		return nil
	}
	return &reasonError{err: err, reason: reason}
}

// ReasonOf reads why err happened: a reason given with Classify; a passed deadline or a
// cancelled context; throttling, AccessDenied and unavailability as AWS and Google
// answer them (with the same tests internal/awsapi and internal/gcpapi use, so the
// metrics agree with the scopes' counts); ReasonInternal otherwise. It is "" for nil.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	var re *reasonError
	if errors.As(err, &re) {
		return Reason(oneOf(re.reason, reasons()...))
	}
	// A cancelled context wins over the cloud error it caused: the call did not fail,
	// it was abandoned.
	if errors.Is(err, context.Canceled) {
		return ReasonCanceled
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return ReasonTimeout
	}
	switch {
	case awsapi.IsThrottled(err) || gcpapi.IsThrottled(err):
		return ReasonThrottled
	case awsapi.IsDenied(err) || gcpapi.IsDenied(err):
		return ReasonAccessDenied
	}
	switch gcpapi.Code(err) {
	case codes.Unavailable:
		return ReasonUnavailable
	case codes.DeadlineExceeded:
		return ReasonTimeout
	}
	// AWS's response errors carry the HTTP status; a 5xx that outlived the retries means
	// the service, not warden, is at fault.
	var hs interface{ HTTPStatusCode() int }
	if errors.As(err, &hs) && hs.HTTPStatusCode() >= 500 {
		return ReasonUnavailable
	}
	return ReasonInternal
}

// Provider is the cloud a call or scope belongs to, as snapshot.Scope names it.
type Provider string

// The providers.
const (
	ProviderAWS Provider = "aws"
	ProviderGCP Provider = "gcp"
	ProviderTLS Provider = "tls"
)

// EventSource is where a change event came from, the source label of warden_events_total.
type EventSource string

// The sources. SourceUnknown is an event refused before its source could be told
// (no or a bad token, a body that is neither EventBridge's nor Pub/Sub's).
const (
	SourceAWS     EventSource = "aws"
	SourceGCP     EventSource = "gcp"
	SourceUnknown EventSource = "unknown"
)

func eventSources() []EventSource { return []EventSource{SourceAWS, SourceGCP, SourceUnknown} }

// EventResult is what became of a change event.
type EventResult string

// The results: accepted events are mapped to a resource and reconciled; the others are
// answered 400 (unknown, malformed) or 401 (unauthorized) and counted only.
const (
	EventAccepted     EventResult = "accepted"
	EventUnknown      EventResult = "unknown"      // well-formed, but no call warden maps to a resource
	EventMalformed    EventResult = "malformed"    // not parseable as the source's envelope
	EventUnauthorized EventResult = "unauthorized" // missing or wrong bearer token
)

func eventResults() []EventResult {
	return []EventResult{EventAccepted, EventUnknown, EventMalformed, EventUnauthorized}
}

// ActionOutcome is what became of one remediation action, the outcome label of
// warden_actions_total.
type ActionOutcome string

// The outcomes of an action.
const (
	ActionApplied    ActionOutcome = "applied"     // the cloud call succeeded
	ActionVerified   ActionOutcome = "verified"    // observed again and converged
	ActionFailed     ActionOutcome = "failed"      // the call or its verification failed
	ActionRolledBack ActionOutcome = "rolled_back" // undone from its before-state
	ActionHeld       ActionOutcome = "held"        // stopped by a safety rule, pause or dry-run
	ActionWaiting    ActionOutcome = "waiting"     // waits for an approval
	ActionVoid       ActionOutcome = "void"        // its approval died with a change of the action
)

func actionOutcomes() []ActionOutcome {
	return []ActionOutcome{ActionApplied, ActionVerified, ActionFailed, ActionRolledBack,
		ActionHeld, ActionWaiting, ActionVoid}
}

// ApprovalOutcome is how an approval request ended, the outcome label of
// warden_approvals_total. The values are the gates package's final states.
type ApprovalOutcome string

// The outcomes of an approval request.
const (
	ApprovalApproved ApprovalOutcome = "approved"
	ApprovalDenied   ApprovalOutcome = "denied"
	ApprovalExpired  ApprovalOutcome = "expired"
	ApprovalVoided   ApprovalOutcome = "voided"
)

func approvalOutcomes() []ApprovalOutcome {
	return []ApprovalOutcome{ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalVoided}
}

// JobOutcome is what River did with a job when an attempt ended, the outcome label of
// warden_jobs_total.
type JobOutcome string

// The outcomes of a job attempt.
const (
	JobCompleted JobOutcome = "completed"
	JobRetried   JobOutcome = "retried"   // failed, will run again after backoff
	JobSnoozed   JobOutcome = "snoozed"   // asked to run later (e.g. waiting for an approval)
	JobDiscarded JobOutcome = "discarded" // failed for the last time
	JobCancelled JobOutcome = "cancelled"
)

func jobOutcomes() []JobOutcome {
	return []JobOutcome{JobCompleted, JobRetried, JobSnoozed, JobDiscarded, JobCancelled}
}

// riverStates are River's job states, the state label of warden_queue_jobs.
func riverStates() []string {
	return []string{"available", "cancelled", "completed", "discarded", "pending",
		"retryable", "running", "scheduled"}
}

func scopeOutcomes() []string {
	return []string{snapshot.ScopeOK, snapshot.ScopePartial, snapshot.ScopeFailed}
}

// oneOf is v's label value if v is in set, else "other".
func oneOf[T ~string](v T, set ...T) string {
	for _, s := range set {
		if v == s {
			return string(v)
		}
	}
	return other
}

// severity is the label value of s: its name, or "other" for a value out of range.
func severity(s findings.Severity) string {
	if s < findings.Info || s > findings.Critical {
		return other
	}
	return s.String()
}

func provider(p Provider) string { return oneOf(p, ProviderAWS, ProviderGCP, ProviderTLS) }

// maxLabelLen is the longest free-form label value kept; a longer one is surely not a
// name from config or code (a uid, a message) and is recorded as "other".
const maxLabelLen = 128

// labelSet bounds the values of one free-form label (target, remediator, job kind,
// service): they come from config or code, so a few dozen are expected, and the first
// limit distinct values are kept while the rest become "other". It guards the time
// series database against a caller passing a scope id or resource uid by mistake.
type labelSet struct {
	mu    sync.Mutex
	seen  map[string]struct{}
	limit int
}

func newLabelSet(limit int) *labelSet {
	return &labelSet{seen: make(map[string]struct{}), limit: limit}
}

// value is the label value to record for v.
func (l *labelSet) value(v string) string {
	switch {
	case v == "":
		return "unknown"
	case len(v) > maxLabelLen || !utf8.ValidString(v):
		return other
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[v]; ok {
		return v
	}
	if len(l.seen) >= l.limit {
		return other
	}
	l.seen[v] = struct{}{}
	return v
}
