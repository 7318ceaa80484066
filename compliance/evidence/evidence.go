// Package evidence gathers what a compliance report stands on from warden's database:
// the scan of the history in effect at a time, or the state the daemon (warden serve)
// keeps, with their findings and scopes, how each policy ran on them, the audit
// checkpoint the report can be verified against, the fixes applied and the audit entries
// recording them, and the posture's trend and time to converge. Gather turns it into the
// compliance.Document every report format is written from.
//
// The history keeps, per scan, its findings (carried ones included), its scopes' status
// and its summary (resources by type, evaluation errors), but not which policies it ran
// nor how many resources each scope held. Gather therefore takes the policy pack from
// its caller (Options.Policies) as the pack every scan ran, counts a policy's resources
// from the scan's resources by type, and reports each scope with 0 resources. The
// daemon's state keeps each scope's last read (with its error and resource count) and
// each finding's life, but only the latest of everything: see daemon.go for what it can
// and cannot tell of a past time.
package evidence

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// TrendScans is the most scans Document.Trend (and Convergence) covers: the latest ones
// up to the report's time.
const TrendScans = 50

// Options say which posture to gather and how to judge it.
type Options struct {
	// At is the time the report describes: the latest scan finished at or before it is
	// the evidence. Zero means now; a time after now is an error.
	At time.Time
	// Policies are the policies the history's scans ran (their ids and resource types):
	// the pack loaded now, since the history does not record which ran. A framework
	// policy missing here counts as not run.
	Policies []*engine.Policy
	// Waivers, when set, also waive open findings an active waiver covers at At
	// (compliance.Input.Waivers).
	Waivers *waivers.Set
	// Settings are the settings in effect, the policies' defaults included, for the
	// controls whose pass relies on a threshold. They are today's: the history does not
	// keep each scan's.
	Settings map[string]any
	// Tool is the warden version writing the document (Document.Tool).
	Tool string
	// Now is the clock: Document.Generated, and At when At is zero. Default time.Now.
	Now func() time.Time
	// Source is where the evidence comes from: SourceHistory, SourceDaemon, or
	// SourceAuto (the zero value) to let Gather choose.
	Source string
}

// The sources of evidence, Options.Source.
const (
	// SourceAuto lets Gather choose the source that read the world more recently.
	SourceAuto = ""
	// SourceHistory is the scan history that warden scan records.
	SourceHistory = "history"
	// SourceDaemon is the state that warden serve keeps as it reads each scope.
	SourceDaemon = "daemon"
)

// Gather reads the evidence of framework fw as it stood at o.At from the store st and
// its audit log (log; nil means audit.New(st, …)), and returns the document a report is
// written from.
//
// The evidence is the scan history (SourceHistory) or the daemon's state (SourceDaemon),
// as o.Source says. SourceAuto takes the daemon's state when it holds a scope and its
// latest read at or before At is later than the collection of the latest history scan
// finished at or before At, or when no such scan exists; otherwise the history. That is
// whichever read the world more recently, the history on a tie: a deployment that runs
// warden scan gets its scans, one that runs the daemon gets the daemon's reads, and an
// old snapshot scanned after the daemon read does not win because it was scanned late.
// From the history:
//
//   - Source is the latest scan finished at or before At (by finished_at, then id);
//     without one the error names At and when the history's first scan finished, and
//     wraps store.ErrNoScans.
//   - Report is fw judged on that scan's findings, as the history stores them (carried
//     ones included), at At. Each policy's run counts the scan's resources of its types,
//     the scan's failed scopes that can hold them (ScopeHolds) and, when any evaluation
//     of the scan failed, that many errors: the history does not say which policy
//     failed, and a control whose policy may not have judged everything is unknown.
//   - Trend is fw judged on each of the latest TrendScans scans up to Source, oldest
//     first; the last point is the report itself.
//   - Convergence is measured over the same scans: a finding of fw's policies is
//     resolved at the first of them that no longer holds it, after being open from its
//     first_seen; open findings age until At.
//
// From the daemon's state (fromDaemon says what it can and cannot know of a past At):
//
//   - Source has ScanID 0 and Snapshot DaemonSnapshot, CollectedAt the latest read at or
//     before At the state records, Resources the resources it keeps; without a read at
//     or before At the error wraps store.ErrNoScans.
//   - Report is fw judged on the findings open, waived or unknown at At by their
//     opened_at and resolved_at; each policy's run counts the kept resources of its
//     types, those last judged only in part as errors, and the scopes last read not in
//     full that can hold them.
//   - Scopes are the scopes as last read, with their errors and resource counts.
//   - Trend is one point a day over the TrendDays days up to At (none before the
//     daemon's first read), the last the report; Convergence counts the findings of fw
//     resolved in those days.
//
// From either:
//
//   - Checkpoint is the latest signed checkpoint stored at or before At.
//   - Fixes are every remediation action of a policy of fw that ended — verified,
//     failed, rolled back — at or before At (not only since the previous scan), each
//     with the audit entries of its generation: its steps and its approval's.
func Gather(ctx context.Context, st *store.Store, log *audit.Log, fw *compliance.Framework, o Options) (*compliance.Document, error) {
	clock := o.Now
	if clock == nil {
		clock = time.Now
	}
	now := clock().UTC()
	at := o.At.UTC()
	if o.At.IsZero() {
		at = now
	}
	if at.After(now) {
		return nil, fmt.Errorf("gather evidence: %s is in the future (now %s): a report describes a posture as it was", stamp(at), stamp(now))
	}
	if log == nil {
		log = audit.New(st, audit.Options{})
	}
	switch o.Source {
	case SourceAuto, SourceHistory, SourceDaemon:
	default:
		return nil, fmt.Errorf("gather evidence: unknown source %q: want %q, %q or %q (choose)", o.Source, SourceHistory, SourceDaemon, SourceAuto)
	}
	var window []store.ScanRecord
	var noScan error
	if o.Source != SourceDaemon {
		window, noScan = scansUpTo(ctx, st, at)
		if noScan != nil && (o.Source == SourceHistory || !errors.Is(noScan, store.ErrNoScans)) {
			// The error names the time already.
			return nil, fmt.Errorf("gather evidence: %w", noScan)
		}
	}
	daemon := o.Source == SourceDaemon
	var d *daemonState
	if o.Source != SourceHistory {
		var err error
		if d, err = readDaemon(ctx, st, fw, at); err != nil {
			return nil, fmt.Errorf("gather evidence at %s: %w", stamp(at), err)
		}
		daemon = daemon || (len(d.scopes) > 0 && (noScan != nil || d.latest.After(window[len(window)-1].CollectedAt)))
	}
	var doc *compliance.Document
	var err error
	switch {
	case daemon:
		doc, err = fromDaemon(fw, d, at, o)
	case noScan != nil:
		return nil, fmt.Errorf("gather evidence: %w", noScan)
	default:
		doc, err = fromHistory(ctx, st, fw, window, at, o)
	}
	if err != nil {
		return nil, fmt.Errorf("gather evidence at %s: %w", stamp(at), err)
	}
	doc.Generated, doc.Tool = now, o.Tool
	if doc.Checkpoint, err = checkpointAt(ctx, log, at); err != nil {
		return nil, fmt.Errorf("gather evidence at %s: %w", stamp(at), err)
	}
	if doc.Fixes, err = fixes(ctx, st, log, fw, at); err != nil {
		return nil, fmt.Errorf("gather evidence at %s: %w", stamp(at), err)
	}
	return doc, nil
}

// fromHistory judges fw on the last scan of window (the latest scans up to at, oldest
// first), with the trend and convergence over all of them.
func fromHistory(ctx context.Context, st *store.Store, fw *compliance.Framework, window []store.ScanRecord, at time.Time, o Options) (*compliance.Document, error) {
	src := window[len(window)-1]
	fs, err := st.Findings(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	runs, err := policyRuns(src, o.Policies)
	if err != nil {
		return nil, err
	}
	rep := compliance.Evaluate(fw, compliance.Input{At: at, Findings: fs, Policies: runs, Settings: o.Settings, Waivers: o.Waivers})
	doc := &compliance.Document{
		Report: rep,
		Source: compliance.Source{ScanID: src.ID, Snapshot: src.Snapshot, CollectedAt: src.CollectedAt,
			Resources: src.Resources, Policies: src.Policies},
		Scopes: scopesOf(src),
	}
	if doc.Trend, doc.Convergence, err = history(ctx, st, fw, window, fs, rep, o); err != nil {
		return nil, err
	}
	return doc, nil
}

// scansUpTo returns the latest TrendScans scans finished at or before at, oldest first.
func scansUpTo(ctx context.Context, st *store.Store, at time.Time) ([]store.ScanRecord, error) {
	// The history is read whole: its rows are small, and finished_at is text that SQL
	// cannot compare as time (RFC 3339 with trimmed fractions does not sort as text).
	all, err := st.Scans(ctx, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("the history holds no scan (warden scan records one): %w", store.ErrNoScans)
	}
	byTime := func(a, b store.ScanRecord) int {
		return cmp.Or(a.FinishedAt.Compare(b.FinishedAt), cmp.Compare(a.ID, b.ID))
	}
	slices.SortFunc(all, byTime)
	n, _ := slices.BinarySearchFunc(all, at, func(s store.ScanRecord, t time.Time) int {
		if s.FinishedAt.After(t) {
			return 1
		}
		return -1
	})
	if n == 0 {
		return nil, fmt.Errorf("no scan finished at or before %s: the history's first scan finished at %s: %w",
			stamp(at), stamp(all[0].FinishedAt), store.ErrNoScans)
	}
	return all[max(0, n-TrendScans):n], nil
}

// policyRuns says how each policy ran on a scan, from its summary and scopes.
func policyRuns(rec store.ScanRecord, pols []*engine.Policy) (map[string]compliance.PolicyRun, error) {
	var sum scan.Summary
	if len(rec.Summary) > 0 {
		if err := json.Unmarshal(rec.Summary, &sum); err != nil {
			return nil, fmt.Errorf("scan %d: summary: %w", rec.ID, err)
		}
	}
	var failed []string
	for id, status := range rec.Scopes {
		if status != snapshot.ScopeOK {
			failed = append(failed, id)
		}
	}
	slices.Sort(failed)
	return runsOf(pols, sum.ResourcesByType, failed, func(_ []string, resources int) int {
		if resources > 0 {
			return sum.EvalErrors
		}
		return 0
	}), nil
}

// runsOf says how each policy of pols ran over resources counted by type: failed are
// the scopes not read in full (sorted), and failures says how many evaluations failed
// for a policy of the given types (sorted, each once) over that many resources.
func runsOf(pols []*engine.Policy, byType map[string]int, failed []string, failures func(types []string, resources int) int) map[string]compliance.PolicyRun {
	out := make(map[string]compliance.PolicyRun, len(pols))
	for _, p := range pols {
		var run compliance.PolicyRun
		types := slices.Compact(slices.Sorted(slices.Values(p.ResourceTypes)))
		for _, t := range types {
			run.Resources += byType[t]
		}
		for _, s := range failed {
			if slices.ContainsFunc(types, func(t string) bool { return ScopeHolds(s, t) }) {
				run.FailedScopes = append(run.FailedScopes, s)
			}
		}
		run.Errors = failures(types, run.Resources)
		out[p.ID] = run
	}
	return out
}

// scopesOf lists a scan's scopes, those not read in full first, each group by id.
func scopesOf(rec store.ScanRecord) []compliance.Scope {
	out := make([]compliance.Scope, 0, len(rec.Scopes))
	for id, status := range rec.Scopes {
		out = append(out, compliance.Scope{ID: id, Status: status})
	}
	sortScopes(out)
	return out
}

// sortScopes puts the scopes not read in full first, each group by id.
func sortScopes(out []compliance.Scope) {
	slices.SortFunc(out, func(a, b compliance.Scope) int {
		aOK, bOK := a.Status == snapshot.ScopeOK, b.Status == snapshot.ScopeOK
		if aOK != bOK {
			if aOK {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// history judges fw on every scan of window (oldest first, ending with the report's)
// and measures how long findings stayed open. fs and rep are the last scan's findings
// and report.
func history(ctx context.Context, st *store.Store, fw *compliance.Framework, window []store.ScanRecord, fs []findings.Finding,
	rep *compliance.Report, o Options) ([]compliance.TrendPoint, compliance.Convergence, error) {
	mine := frameworkPolicies(fw)
	var trend []compliance.TrendPoint
	var open []time.Duration
	var prev map[string]findings.Finding
	for i, rec := range window {
		cur, r := fs, rep
		if i < len(window)-1 {
			var err error
			if cur, err = st.Findings(ctx, rec.ID); err != nil {
				return nil, compliance.Convergence{}, err
			}
			runs, err := policyRuns(rec, o.Policies)
			if err != nil {
				return nil, compliance.Convergence{}, err
			}
			r = compliance.Evaluate(fw, compliance.Input{At: rec.FinishedAt, Findings: cur, Policies: runs, Settings: o.Settings, Waivers: o.Waivers})
		}
		trend = append(trend, compliance.TrendPoint{At: rec.FinishedAt, ScanID: rec.ID, Score: r.Score, Open: openBySeverity(r)})
		seen := make(map[string]findings.Finding, len(cur))
		for _, f := range cur {
			if mine[f.Policy] {
				seen[f.Fingerprint] = f
			}
		}
		for fp, f := range prev {
			if _, still := seen[fp]; still || f.FirstSeen.IsZero() {
				continue
			}
			// Resolved when the world was read without it. A history scanned out of order
			// (an old snapshot after a newer one) could make this negative: it counts as
			// resolved at once.
			open = append(open, max(0, rec.CollectedAt.Sub(f.FirstSeen)))
		}
		prev = seen
	}
	return trend, convergence(open, rep), nil
}

// convergence measures time to converge at the report rep: open are how long each
// resolved finding stayed open, in any order; the report's failing findings age from
// their first sighting.
func convergence(open []time.Duration, rep *compliance.Report) compliance.Convergence {
	conv := compliance.Convergence{Resolved: len(open)}
	if len(open) > 0 {
		slices.Sort(open)
		conv.MedianOpen, conv.P90Open = rank(open, 0.5), rank(open, 0.9)
	}
	oldest := rep.At
	for _, f := range failing(rep) {
		conv.Open++
		if !f.FirstSeen.IsZero() && f.FirstSeen.Before(oldest) {
			oldest = f.FirstSeen
		}
	}
	conv.OldestOpen = rep.At.Sub(oldest)
	return conv
}

// rank is the nearest-rank percentile q of sorted durations.
func rank(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// failing returns the findings failing some control of the report, each once.
func failing(rep *compliance.Report) []findings.Finding {
	seen := map[string]bool{}
	var out []findings.Finding
	for _, c := range rep.Controls {
		for _, f := range c.Failing {
			if !seen[f.Fingerprint] {
				seen[f.Fingerprint] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// openBySeverity counts the report's failing findings by severity, every severity
// present.
func openBySeverity(rep *compliance.Report) map[string]int {
	out := make(map[string]int, len(findings.Severities))
	for _, s := range findings.Severities {
		out[s.String()] = 0
	}
	for _, f := range failing(rep) {
		out[f.Severity.String()]++
	}
	return out
}

// frameworkPolicies is the set of policies fw's controls name.
func frameworkPolicies(fw *compliance.Framework) map[string]bool {
	out := map[string]bool{}
	for _, c := range fw.Controls {
		for _, p := range c.Policies {
			out[p] = true
		}
	}
	return out
}

// stamp writes a time for messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ForEngine are the options of a report judged with eng's policies and its settings in
// effect (configured, the config's settings:, over their defaults), written by tool.
func ForEngine(eng *engine.Engine, configured map[string]any, tool string) Options {
	return Options{Policies: eng.Policies(), Settings: SettingsInEffect(eng.SettingsSchema(), configured), Tool: tool}
}

// SettingsInEffect are the settings the policies of schema read: each one's declared
// default, replaced by the configured value where there is one (config settings:).
func SettingsInEffect(schema []engine.Setting, configured map[string]any) map[string]any {
	out := make(map[string]any, len(schema)+len(configured))
	for _, s := range schema {
		if s.Default != nil {
			out[s.Name] = s.Default
		}
	}
	for k, v := range configured {
		out[k] = v
	}
	return out
}
