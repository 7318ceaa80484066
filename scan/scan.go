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
	// Now overrides the evaluation time (default: the snapshot's collected_at).
	Now      time.Time
	Progress func(done int)
	Version  string
}

// Run scans a snapshot and returns its report.
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
	res, err := req.Engine.Scan(ctx, snapshot.NewReader(in, label), engine.Options{Now: req.Now, Progress: req.Progress})
	if err != nil {
		return nil, err
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
	r.ExpiredWaivers = ApplyWaivers(r.Findings, req.Waivers, res.Now)
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
		id, stored, err := req.Store.SaveScan(ctx, rec, r.Findings, Completeness(res.Header))
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
