package scan

import (
	"fmt"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// Result is everything one scan has to say: the model reports print, plans are made
// from, and the exit code is decided on.
type Result struct {
	Scan    Info    `json:"scan"`
	Summary Summary `json:"summary"`
	// Findings are in report order (findings.Sort); waived ones carry their waiver, and
	// with a history, findings carried over as unknown are among them.
	Findings []findings.Finding `json:"findings"`
	// ExpiredWaivers no longer suppress anything; each counts the findings it would cover.
	ExpiredWaivers []ExpiredWaiver `json:"expired_waivers"`
	// IncompleteScopes were not read in full: their resources are unknown, not clean.
	IncompleteScopes []snapshot.Scope `json:"incomplete_scopes"`
	// EvalErrors are the policy evaluations that failed at run time; any of them makes
	// the scan incomplete (Summary.Incomplete).
	EvalErrors []findings.EvalError `json:"eval_errors"`
	// Rules describes the policies that were evaluated.
	Rules []Rule `json:"-"`
	// Header is the snapshot's header: accounts and scopes, for what comes after a scan
	// (plans judge principals against the accounts, skip unread scopes).
	Header snapshot.Header `json:"-"`
	// Collection is what a live collection read and cost; nil for a file or a reader.
	Collection *collect.Summary `json:"-"`
}

// Info identifies a scan.
type Info struct {
	// ID is the scan's id in the history; 0 when no history is kept.
	ID       int64  `json:"id,omitempty"`
	Snapshot string `json:"snapshot"`
	Source   string `json:"source,omitempty"`
	// CollectedAt is when the world was read (the snapshot's collected_at); EvaluatedAt
	// is the time ages were measured at: collected_at, or the --now given.
	CollectedAt time.Time `json:"collected_at"`
	EvaluatedAt time.Time `json:"evaluated_at"`
	StartedAt   time.Time `json:"started_at"`
	DurationMS  int64     `json:"duration_ms"`
	Warden      string    `json:"warden_version"`
	Policies    int       `json:"policies"`
	Resources   int       `json:"resources"`
}

// Summary counts what a scan found. The history keeps it verbatim, as JSON.
type Summary struct {
	// Findings counts open findings (not waived, not unknown).
	Findings         int            `json:"findings"`
	BySeverity       map[string]int `json:"by_severity"`
	Waived           int            `json:"waived"`
	Unknown          int            `json:"unknown"`
	ExpiredWaivers   int            `json:"expired_waivers"`
	Resources        int            `json:"resources"`
	ResourcesByType  map[string]int `json:"resources_by_type"`
	Policies         int            `json:"policies"`
	PoliciesFailing  int            `json:"policies_failing"`
	IncompleteScopes int            `json:"incomplete_scopes"`
	EvalErrors       int            `json:"eval_errors"`
	// Incomplete is set when policy evaluations failed: those policy × resource pairs
	// were not judged, so "no finding" there does not mean clean.
	Incomplete bool `json:"incomplete"`
}

// ExpiredWaiver is a waiver past its expiry date.
type ExpiredWaiver struct {
	Policy   string    `json:"policy"`
	Resource string    `json:"resource"`
	Owner    string    `json:"owner"`
	Reason   string    `json:"reason"`
	Expired  time.Time `json:"expired"`
	File     string    `json:"file"`
	Line     int       `json:"line"`
	// Findings counts the open findings it would have suppressed.
	Findings int `json:"findings"`
}

// Rule is a policy as results describe it.
type Rule struct {
	ID          string              `json:"id"`
	Title       string              `json:"title"`
	Description string              `json:"description"`
	Severity    findings.Severity   `json:"severity"`
	Frameworks  map[string][]string `json:"frameworks,omitempty"`
}

// summarize fills r.Summary from the rest of r.
func (r *Result) summarize(byType map[string]int) {
	s := Summary{BySeverity: map[string]int{}, ResourcesByType: byType, Resources: r.Scan.Resources,
		Policies: r.Scan.Policies, ExpiredWaivers: len(r.ExpiredWaivers), IncompleteScopes: len(r.IncompleteScopes),
		EvalErrors: len(r.EvalErrors), Incomplete: len(r.EvalErrors) > 0}
	for _, sev := range findings.Severities {
		s.BySeverity[sev.String()] = 0
	}
	failing := map[string]bool{}
	for _, f := range r.Findings {
		switch f.Status {
		case findings.StatusWaived:
			s.Waived++
		case findings.StatusUnknown:
			s.Unknown++
		default:
			s.Findings++
			s.BySeverity[f.Severity.String()]++
			failing[f.Policy] = true
		}
	}
	s.PoliciesFailing = len(failing)
	if s.ResourcesByType == nil {
		s.ResourcesByType = map[string]int{}
	}
	r.Summary = s
}

// Open returns the findings that are neither waived nor unknown.
func (r *Result) Open() []findings.Finding {
	var out []findings.Finding
	for _, f := range r.Findings {
		if f.Status == findings.StatusOpen {
			out = append(out, f)
		}
	}
	return out
}

// The exit codes of a scan, as DESIGN.md defines them.
const (
	// ExitClean: everything was read and judged, and nothing open is at or above the
	// threshold.
	ExitClean = 0
	// ExitFindings: an open finding is at or above the threshold.
	ExitFindings = 1
	// ExitIncomplete: a policy evaluation failed, or a scope could not be read and
	// nothing at or above the threshold was found among the rest. (Bad input and
	// errors exit 2 too, before there is a result.)
	ExitIncomplete = 2
)

// Verdict is the exit decision on a result: its code, and for an incomplete scan the
// reason to tell the user.
type Verdict struct {
	// Code is the process exit code: ExitClean, ExitFindings or ExitIncomplete.
	Code int
	// Reason says why a scan is incomplete; empty for the other verdicts, whose report
	// says it all.
	Reason string
}

// Verdict decides how a scan ends for a threshold (--fail-on). Failed evaluations come
// first: what was not judged is not clean, and the findings reported are not all there
// are, whatever the threshold says. Then open findings at or above the threshold. Then
// unread scopes: nothing to report among what was read is still not a clean bill.
func (r *Result) Verdict(failOn findings.Severity) Verdict {
	if r.Summary.Incomplete {
		return Verdict{Code: ExitIncomplete, Reason: fmt.Sprintf("scan incomplete: %s failed, so their results are missing (listed in the report); the history keeps their earlier findings as unknown",
			pluralize(len(r.EvalErrors), "policy evaluation"))}
	}
	for _, f := range r.Findings {
		if f.Status == findings.StatusOpen && f.Severity >= failOn {
			return Verdict{Code: ExitFindings}
		}
	}
	if n := len(r.IncompleteScopes); n > 0 {
		return Verdict{Code: ExitIncomplete, Reason: fmt.Sprintf("scan incomplete: %s could not be read in full (listed in the report), so nothing can be said of their resources; no finding at or above %s among the rest",
			pluralize(n, "scope"), failOn)}
	}
	return Verdict{Code: ExitClean}
}

// ExitCode is Verdict(failOn).Code.
func (r *Result) ExitCode(failOn findings.Severity) int { return r.Verdict(failOn).Code }

// pluralize is "1 policy evaluation" or "3 policy evaluations".
func pluralize(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
