// Package scan runs warden's evaluation use case end to end: read a snapshot, evaluate it,
// apply waivers, record it in the history, and hand back the report.
package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// Request is one scan of a snapshot.
type Request struct {
	// Snapshot is the snapshot's path, or "-" to read Input.
	Snapshot string
	Input    io.Reader
	// Label names the snapshot in reports and the history; empty means Snapshot.
	Label   string
	Engine  *engine.Engine
	Waivers *waivers.Set // optional
	Store   *store.Store // optional: nil keeps no history
	// Now overrides the evaluation time (default: the snapshot's collected_at). Without
	// it, a collected_at more than MaxClockSkew ahead of the clock is refused.
	Now      time.Time
	Progress func(done int)
	Version  string
	// Limits bound the snapshot's values and resources (zero fields: the defaults).
	Limits snapshot.Limits
}

// MaxClockSkew is how far ahead of the clock a snapshot's collected_at may be. Ages are
// measured at collected_at: one in the future (3000, 9999) would make every key and
// certificate look young and silently disable every age check.
const MaxClockSkew = 24 * time.Hour

// Run scans a snapshot and returns its report. The report is incomplete
// (Summary.Incomplete) when policy evaluations failed; the history then carries the
// findings of those policy × resource pairs over as unknown. A cancelled ctx always
// ends in an error wrapping ctx.Err(), never in a report, and nothing is recorded.
func Run(ctx context.Context, req Request) (*report.Report, error) {
	started := time.Now()
	in := req.Input
	if req.Snapshot != "-" {
		f, err := os.Open(req.Snapshot)
		if err != nil {
			return nil, fmt.Errorf("read snapshot: %w", err)
		}
		defer f.Close()
		in = f
	}
	label := req.Label
	if label == "" {
		label = req.Snapshot
	}
	rd := snapshot.NewReader(in, label, snapshot.WithLimits(req.Limits), snapshot.WithContext(ctx))
	res, err := req.Engine.Scan(ctx, rd, engine.Options{Now: req.Now, Progress: req.Progress})
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancelled evaluations come back as eval errors, or not at all: whatever the
		// engine returned, an interrupted scan has no result.
		return nil, fmt.Errorf("scan %s: interrupted: %w", label, ctxErr)
	}
	if err != nil {
		return nil, err
	}
	if req.Now.IsZero() {
		if err := checkCollectedAt(label, rd.HeaderLine("collected_at"), res.Header.CollectedAt, time.Now()); err != nil {
			return nil, err
		}
	}
	r := &report.Report{
		Scan: report.ScanInfo{Snapshot: label, Source: res.Header.Source, CollectedAt: res.Header.CollectedAt,
			EvaluatedAt: res.Now, StartedAt: started, Warden: req.Version, Policies: len(req.Engine.Policies()), Resources: res.Resources},
		Findings:   res.Findings,
		EvalErrors: res.EvalErrors,
	}
	for _, p := range req.Engine.Policies() {
		r.Rules = append(r.Rules, report.Rule{ID: p.ID, Title: p.Title, Description: p.Description, Severity: p.Severity, Frameworks: p.Frameworks})
	}
	// A waiver's expiry is a promise about today: judged at an old snapshot's collected_at
	// (or an earlier --now) a waiver that has run out would still suppress its findings.
	r.ExpiredWaivers = ApplyWaivers(r.Findings, req.Waivers, later(res.Now, time.Now()))
	scopeStatus := map[string]string{}
	for _, s := range res.Header.Scopes {
		scopeStatus[s.ID] = s.Status
		if !s.Complete() {
			r.IncompleteScopes = append(r.IncompleteScopes, s)
		}
	}
	r.Summarize(res.ByType)
	if req.Store != nil {
		sum, err := json.Marshal(r.Summary)
		if err != nil {
			return nil, fmt.Errorf("record scan: %w", err)
		}
		rec := &store.ScanRecord{StartedAt: started, FinishedAt: time.Now(), Snapshot: label, Source: res.Header.Source,
			CollectedAt: res.Now, Resources: res.Resources, Policies: len(req.Engine.Policies()), Scopes: scopeStatus, Summary: sum}
		id, stored, err := req.Store.SaveScan(ctx, rec, r.Findings, Completeness(res.Header), NotJudged(req.Engine, res.EvalErrors))
		if err != nil {
			return nil, fmt.Errorf("record scan: %w", err)
		}
		r.Scan.ID = id
		findings.Sort(stored)
		r.Findings = stored
		r.Summarize(res.ByType)
	}
	r.Scan.DurationMS = time.Since(started).Milliseconds()
	return r, nil
}

// Completeness says whether a scope was read in full in a snapshot. A snapshot that
// declares no scopes presents itself as the whole world: every scope is complete.
func Completeness(h snapshot.Header) func(scope string) bool {
	if len(h.Scopes) == 0 {
		return func(string) bool { return true }
	}
	status := map[string]string{}
	for _, s := range h.Scopes {
		status[s.ID] = s.Status
	}
	return func(scope string) bool { return status[scope] == snapshot.ScopeOK }
}

// Errored says whether evaluating a policy on a resource failed, from a scan's eval
// errors: such a pair was not judged. An error without a policy (the resource's policies
// could not be prepared) covers every policy on its resource. Policy and resource are
// compared as valid text (findings.ValidText), as the history stores them.
func Errored(errs []findings.EvalError) func(policy, resource string) bool {
	if len(errs) == 0 {
		return func(string, string) bool { return false }
	}
	type pair struct{ policy, resource string }
	failed := make(map[pair]bool, len(errs))
	for _, e := range errs {
		failed[pair{findings.ValidText(e.Policy), findings.ValidText(e.Resource)}] = true
	}
	return func(policy, resource string) bool {
		return failed[pair{policy, resource}] || failed[pair{"", resource}] || failed[pair{policy, ""}] || failed[pair{}]
	}
}

// NotJudged says whether a policy × resource pair went unjudged in a scan: its policy
// failed on the resource (Errored), or the policy was not loaded this time (removed, or
// left out with --no-builtin). Neither may resolve an earlier finding: only a policy
// that ran and found nothing does.
func NotJudged(e *engine.Engine, errs []findings.EvalError) func(policy, resource string) bool {
	errored := Errored(errs)
	loaded := map[string]bool{}
	for _, p := range e.Policies() {
		loaded[findings.ValidText(p.ID)] = true
	}
	return func(policy, resource string) bool { return !loaded[policy] || errored(policy, resource) }
}

// checkCollectedAt refuses a collected_at more than MaxClockSkew ahead of now.
func checkCollectedAt(name string, line int, at, now time.Time) error {
	if at.IsZero() || !at.After(now.Add(MaxClockSkew)) {
		return nil
	}
	where := ""
	if line > 0 {
		where = fmt.Sprintf("line %d: ", line)
	}
	return fmt.Errorf("read snapshot %s: %scollected_at: %s is %s ahead of this machine's clock (%s): ages measured from it would hide old keys and expired certificates; fix the clock or the snapshot, or give the evaluation time (--now)",
		name, where, at.UTC().Format(time.RFC3339), aheadBy(at.Sub(now)), now.UTC().Format(time.RFC3339))
}

// aheadBy says roughly how far ahead a time is, in the unit a person would use.
func aheadBy(d time.Duration) string {
	days := d.Hours() / 24
	switch {
	case days >= 730:
		return fmt.Sprintf("%.0f years", days/365.25)
	case days >= 2:
		return fmt.Sprintf("%.0f days", days)
	}
	return d.Round(time.Minute).String()
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ApplyWaivers marks the findings covered by an active waiver as waived, and returns the
// expired waivers with how many findings each would still cover.
func ApplyWaivers(fs []findings.Finding, set *waivers.Set, now time.Time) []report.ExpiredWaiver {
	if set == nil {
		return nil
	}
	expired := map[*waivers.Waiver]int{}
	for i := range fs {
		f := &fs[i]
		active, old := set.Match(f.Policy, f.Resource, now)
		switch {
		case active != nil:
			f.Status = findings.StatusWaived
			f.Waiver = &findings.WaiverRef{Owner: active.Owner, Reason: active.Reason, Expires: active.Expires}
		case old != nil:
			expired[old]++
		}
	}
	var out []report.ExpiredWaiver
	for _, w := range set.Waivers {
		if w.Active(now) {
			continue
		}
		out = append(out, report.ExpiredWaiver{Policy: w.Policy, Resource: w.Resource, Owner: w.Owner, Reason: w.Reason,
			Expired: w.Expires, File: w.File, Line: w.Line, Findings: expired[w]})
	}
	return out
}

// DiffLatest compares the two newest scans of the history.
func DiffLatest(ctx context.Context, st *store.Store) (prev, cur store.ScanRecord, d findings.Diff, err error) {
	scans, err := st.Scans(ctx, 2)
	if err != nil {
		return prev, cur, d, err
	}
	if len(scans) < 2 {
		return prev, cur, d, fmt.Errorf("findings diff: the history has %d scan(s); run warden scan twice first: %w", len(scans), store.ErrNoScans)
	}
	cur, prev = scans[0], scans[1]
	before, err := st.Findings(ctx, prev.ID)
	if err != nil {
		return prev, cur, d, err
	}
	after, err := st.Findings(ctx, cur.ID)
	if err != nil {
		return prev, cur, d, err
	}
	return prev, cur, findings.Compare(before, after), nil
}
