// Package report renders scan results, one writer per format: table for people, JSON for
// tools (the contract of DESIGN.md), SARIF for code-scanning dashboards.
package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// Report is everything a scan has to say.
type Report struct {
	Scan     ScanInfo           `json:"scan"`
	Summary  Summary            `json:"summary"`
	Findings []findings.Finding `json:"findings"`
	// ExpiredWaivers no longer suppress anything; each names the findings it would cover.
	ExpiredWaivers []ExpiredWaiver `json:"expired_waivers"`
	// IncompleteScopes were not read in full: their resources are unknown, not clean.
	IncompleteScopes []snapshot.Scope `json:"incomplete_scopes"`
	// EvalErrors are the policy evaluations that failed at run time; any of them makes
	// the scan incomplete (Summary.Incomplete).
	EvalErrors []findings.EvalError `json:"eval_errors"`
	// Rules describes the policies that were evaluated.
	Rules []Rule `json:"-"`
}

// ScanInfo identifies a scan.
type ScanInfo struct {
	ID          int64     `json:"id,omitempty"`
	Snapshot    string    `json:"snapshot"`
	Source      string    `json:"source,omitempty"`
	CollectedAt time.Time `json:"collected_at"`
	EvaluatedAt time.Time `json:"evaluated_at"`
	StartedAt   time.Time `json:"started_at"`
	DurationMS  int64     `json:"duration_ms"`
	Warden      string    `json:"warden_version"`
	Policies    int       `json:"policies"`
	Resources   int       `json:"resources"`
}

// Summary counts what a scan found.
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
	// were not judged, so "no finding" there does not mean clean, and warden exits 2.
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

// Rule is a policy as reports describe it.
type Rule struct {
	ID          string              `json:"id"`
	Title       string              `json:"title"`
	Description string              `json:"description"`
	Severity    findings.Severity   `json:"severity"`
	Frameworks  map[string][]string `json:"frameworks,omitempty"`
}

// Summarize fills r.Summary from the rest of r.
func (r *Report) Summarize(byType map[string]int) {
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
func (r *Report) Open() []findings.Finding {
	var out []findings.Finding
	for _, f := range r.Findings {
		if f.Status == findings.StatusOpen {
			out = append(out, f)
		}
	}
	return out
}

// Writer renders a report in one format.
type Writer interface {
	Write(w io.Writer, r *Report) error
}

// Formats lists the format names New accepts.
var Formats = []string{"table", "json", "sarif"}

// New returns the writer for a format; color applies to the table only.
func New(format string, color bool) (Writer, error) {
	switch strings.ToLower(format) {
	case "table", "":
		return &Table{Color: color}, nil
	case "json":
		return JSON{}, nil
	case "sarif":
		return SARIF{}, nil
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
