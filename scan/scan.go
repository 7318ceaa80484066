// Package scan is warden's evaluation use case: it takes a snapshot from a source (a
// file, a stream, or a live collection), evaluates it against the policies, applies the
// waivers, records it in the history, and returns the Result that reports print and the
// exit code is decided on (Result.Verdict).
package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// Request is one scan.
type Request struct {
	// Source is the snapshot to scan: File, Reader or Live.
	Source  Source
	Engine  *engine.Engine
	Waivers *waivers.Set // optional; checked against Engine's policies before anything is read
	Store   *store.Store // optional: nil keeps no history
	// Now overrides the evaluation time (default: the snapshot's collected_at). Without
	// it, a collected_at more than MaxClockSkew ahead of the clock is refused.
	Now      time.Time
	Progress func(done int)
	Version  string
	// Limits bound the snapshot's values and resources (zero fields: the defaults).
	Limits snapshot.Limits
	// Recorded, when set with a Store, runs inside the transaction that saves the scan,
	// with the record (ID set) and how the stored findings moved from the scan before
	// (diff.New, Open and Unknown are the findings as stored): what it writes (audit
	// entries of the scan and its findings, see Audit) commits with the scan or not at
	// all. An error from it records nothing and fails the scan.
	Recorded func(ctx context.Context, tx *store.Tx, rec store.ScanRecord, diff findings.Diff) error
}

// MaxClockSkew is how far ahead of the clock a snapshot's collected_at may be. Ages are
// measured at collected_at: one in the future (3000, 9999) would make every key and
// certificate look young and silently disable every age check.
const MaxClockSkew = 24 * time.Hour

// Run scans a snapshot and returns its result. The result is incomplete
// (Summary.Incomplete) when policy evaluations failed; the history then carries the
// findings of those policy × resource pairs over as unknown. A cancelled ctx always
// ends in an error wrapping ctx.Err(), never in a result, and nothing is recorded.
func Run(ctx context.Context, req Request) (*Result, error) {
	started := time.Now()
	if req.Source == nil || req.Engine == nil {
		return nil, fmt.Errorf("scan: a request needs a source and an engine")
	}
	if req.Waivers != nil {
		// Before anything is read: a live collection may take minutes, a typo none.
		var ids []string
		for _, p := range req.Engine.Policies() {
			ids = append(ids, p.ID)
		}
		if err := req.Waivers.CheckPolicies(ids); err != nil {
			return nil, err
		}
	}
	src, err := req.Source.open(ctx)
	if ctxErr := ctx.Err(); ctxErr != nil {
		if src != nil {
			_ = src.close()
		}
		return nil, fmt.Errorf("scan: interrupted: %w", ctxErr)
	}
	if err != nil {
		return nil, err
	}
	defer src.close()
	label := src.name
	rd := snapshot.NewReader(src.r, label, snapshot.WithLimits(req.Limits), snapshot.WithContext(ctx))
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
	r := &Result{
		Scan: Info{Snapshot: label, Source: res.Header.Source, CollectedAt: res.Header.CollectedAt,
			EvaluatedAt: res.Now, StartedAt: started, Warden: req.Version, Policies: len(req.Engine.Policies()), Resources: res.Resources},
		Findings:   res.Findings,
		EvalErrors: res.EvalErrors,
		Header:     res.Header,
		Collection: src.collection,
	}
	for _, p := range req.Engine.Policies() {
		r.Rules = append(r.Rules, Rule{ID: p.ID, Title: p.Title, Description: p.Description, Severity: p.Severity, Frameworks: p.Frameworks})
	}
	// A waiver's expiry is a promise about today: judged at an old snapshot's collected_at
	// (or an earlier --now) a waiver that has run out would still suppress its findings.
	r.ExpiredWaivers = ApplyWaivers(r.Findings, req.Waivers, later(res.Now, time.Now()))
	for _, s := range res.Header.Scopes {
		if !s.Complete() {
			r.IncompleteScopes = append(r.IncompleteScopes, s)
		}
	}
	r.summarize(res.ByType)
	if req.Store != nil {
		if err := record(ctx, req, r, res); err != nil {
			return nil, err
		}
		r.summarize(res.ByType)
	}
	r.Scan.DurationMS = time.Since(started).Milliseconds()
	return r, nil
}

// record saves the scan in the history, with req.Recorded in the same transaction, and
// replaces r's findings with the stored ones (carried-over unknowns included).
func record(ctx context.Context, req Request, r *Result, res *engine.Result) error {
	sum, err := json.Marshal(r.Summary)
	if err != nil {
		return fmt.Errorf("record scan: %w", err)
	}
	scopeStatus := map[string]string{}
	for _, s := range res.Header.Scopes {
		scopeStatus[s.ID] = s.Status
	}
	// The collection time is the snapshot's, whatever time ages were measured at: under
	// --now the evaluation time is the user's choice, not when the world was read. A
	// snapshot that does not say when it was collected was at the latest collected when
	// the scan started.
	collected := res.Header.CollectedAt
	if collected.IsZero() {
		collected = r.Scan.StartedAt
	}
	rec := &store.ScanRecord{StartedAt: r.Scan.StartedAt, FinishedAt: time.Now(), Snapshot: r.Scan.Snapshot, Source: res.Header.Source,
		CollectedAt: collected, Resources: res.Resources, Policies: r.Scan.Policies, Scopes: scopeStatus, Summary: sum}
	var stored []findings.Finding
	err = req.Store.InTx(ctx, func(tx *store.Tx) error {
		var prev []findings.Finding
		if req.Recorded != nil {
			var err error
			if _, prev, err = tx.LatestFindings(ctx); err != nil {
				return err
			}
		}
		var err error
		if _, stored, err = tx.SaveScan(ctx, rec, r.Findings, Completeness(res.Header), NotJudged(req.Engine, res.EvalErrors)); err != nil {
			return err
		}
		// The summary kept is the one the report prints: the carried-over unknowns
		// are counted in it.
		withCarried := *r
		withCarried.Findings = stored
		withCarried.summarize(res.ByType)
		sum, err := json.Marshal(withCarried.Summary)
		if err != nil {
			return err
		}
		if err := tx.SetScanSummary(ctx, rec.ID, sum); err != nil {
			return err
		}
		if req.Recorded != nil {
			return req.Recorded(ctx, tx, *rec, findings.Compare(prev, stored))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record scan: %w", err)
	}
	r.Scan.ID = rec.ID
	findings.Sort(stored)
	r.Findings = stored
	return nil
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
