package evidence

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// DaemonSnapshot is Document.Source.Snapshot when the evidence is the daemon's state.
const DaemonSnapshot = "daemon state"

// TrendDays is how many days Document.Trend covers when the evidence is the daemon's
// state, one point a day ending at the report's time, and the days Convergence counts
// the resolved findings of. The daemon records no scans to take points at, and reads
// every few minutes: a point a day is what a trend over a month needs, at a cost of
// TrendDays evaluations of the framework.
const TrendDays = 30

const day = 24 * time.Hour

// daemonState is the daemon's state as it bears on one report.
type daemonState struct {
	// scopes are the scopes as last read, those not read in full first; failed are the
	// ids of those not read in full, sorted.
	scopes []compliance.Scope
	failed []string
	// byType counts the resources kept by type, and partial those of them the last
	// evaluation judged only in part (kept without a hash, to be evaluated again).
	byType, partial map[string]int
	resources       int
	// findings are the findings of the framework's policies opened at or before the
	// report's time and not resolved before the TrendDays days up to it.
	findings []state.Finding
	// first is the earliest read the state records, latest the latest at or before the
	// report's time (zero if none).
	first, latest time.Time
}

// readDaemon reads the daemon's state as it bears on fw at at, from package state,
// which keeps it: each scope's last read (its status, error and resources; when it was
// read, last read in full and last evaluated in full), each resource as last read (its
// type; its hash, empty when its evaluation failed in part; when a read last changed
// it), and each finding's life (status, opened, seen, resolved, the finding as last
// judged). Every scope's findings are read, the resolved ones too.
//
// When the daemon never read a scope its scopes are empty, and nothing else is read.
func readDaemon(ctx context.Context, st *store.Store, fw *compliance.Framework, at time.Time) (*daemonState, error) {
	d := &daemonState{byType: map[string]int{}, partial: map[string]int{}}
	// Every time the state keeps is the time of a read: the daemon records no list of
	// its reads, only each scope's last one and when each resource and finding last
	// changed, so these are the reads the evidence can name.
	saw := func(ts ...time.Time) {
		for _, t := range ts {
			if t.IsZero() {
				continue
			}
			if d.first.IsZero() || t.Before(d.first) {
				d.first = t
			}
			if !t.After(at) && t.After(d.latest) {
				d.latest = t
			}
		}
	}
	err := st.Read(ctx, func(r *store.Reader) error {
		if err := d.readScopes(ctx, r, saw); err != nil {
			return err
		}
		if len(d.scopes) == 0 {
			return nil
		}
		if err := d.readResources(ctx, r, saw); err != nil {
			return err
		}
		return d.readFindings(ctx, r, frameworkPolicies(fw), at, saw)
	})
	if err != nil {
		return nil, fmt.Errorf("read the daemon's state: %w", err)
	}
	sortScopes(d.scopes)
	slices.Sort(d.failed)
	return d, nil
}

func (d *daemonState) readScopes(ctx context.Context, r *store.Reader, saw func(...time.Time)) error {
	scopes, err := state.Scopes(ctx, r)
	if err != nil {
		return err
	}
	for _, s := range scopes {
		saw(s.ReadAt, s.OKAt, s.FullAt)
		sc := s.Scope
		d.scopes = append(d.scopes, compliance.Scope{ID: sc.ID, Status: sc.Status, Error: sc.Error, Resources: sc.Resources})
		if sc.Status != snapshot.ScopeOK {
			d.failed = append(d.failed, sc.ID)
		}
	}
	return nil
}

func (d *daemonState) readResources(ctx context.Context, r *store.Reader, saw func(...time.Time)) error {
	// The resources' data is not read: a report counts them.
	rows, err := state.ResourceRows(ctx, r)
	if err != nil {
		return err
	}
	for _, row := range rows {
		saw(row.ReadAt)
		d.resources++
		d.byType[row.Type]++
		if row.Hash == "" {
			d.partial[row.Type]++
		}
	}
	return nil
}

// readFindings notes the times of every finding's life, whatever its policy (a read
// that opened or resolved a finding and changed no resource is recorded nowhere else),
// and keeps the findings of policies that may count at at or in the TrendDays days up to
// it: opened by then, and not resolved before those days. Only those are decoded;
// resolved findings stay for ever.
func (d *daemonState) readFindings(ctx context.Context, r *store.Reader, policies map[string]bool, at time.Time, saw func(...time.Time)) error {
	since := at.Add(-TrendDays * day)
	var err error
	d.findings, err = state.Findings(ctx, r, func(l state.Life) bool {
		saw(l.OpenedAt, l.SeenAt, l.ResolvedAt)
		return policies[l.Policy] && !l.OpenedAt.After(at) &&
			(l.Status != findings.StatusResolved || l.ResolvedAt.After(since))
	})
	return err
}

// fromDaemon judges fw on the daemon's state d at at. The state keeps the latest of
// everything, which is exact for the present; of an earlier time it keeps less, and
// what it lacks is taken as it is now:
//
//   - A finding not resolved has its current status throughout: one that was unknown
//     for a while (its scope failed to read, its evaluation failed) and is open again
//     shows as open then too, one unknown now shows as unknown since it opened, and one
//     waived now shows as waived with the waiver it carries (Options.Waivers is applied
//     at At, as for the history). A finding resolved after At was open at At, or waived
//     if it carried a waiver when it resolved; whether it was unknown then is not kept.
//   - A finding resolved and later seen again has one row, opened anew: its earlier
//     open period is not known, and a report within it does not show it.
//   - A finding's text (message, details) is as last judged.
//   - The scopes, and the resources each policy's run counts, are as last read: a scope
//     that failed to read after At makes the controls of its resources unknown at At,
//     and one that failed before At and reads in full now does not.
//
// The history, for its part, cannot fill Scope.Resources and Scope.Error; the daemon's
// state does. A resource kept without a hash was judged only in part by its last
// evaluation: it counts as a failed evaluation of every policy of its type, since the
// state does not say which failed.
func fromDaemon(fw *compliance.Framework, d *daemonState, at time.Time, o Options) (*compliance.Document, error) {
	if len(d.scopes) == 0 {
		return nil, fmt.Errorf("the daemon's state holds no scope (warden serve records each it reads): %w", store.ErrNoScans)
	}
	if d.latest.IsZero() {
		return nil, fmt.Errorf("the daemon's state records no read by then: its first was at %s: %w", stamp(d.first), store.ErrNoScans)
	}
	runs := runsOf(o.Policies, d.byType, d.failed, func(types []string, _ int) int {
		n := 0
		for _, t := range types {
			n += d.partial[t]
		}
		return n
	})
	judge := func(t time.Time) *compliance.Report {
		return compliance.Evaluate(fw, compliance.Input{At: t, Findings: d.postureAt(t), Policies: runs, Settings: o.Settings, Waivers: o.Waivers})
	}
	rep := judge(at)
	doc := &compliance.Document{
		Report: rep,
		Source: compliance.Source{Snapshot: DaemonSnapshot, CollectedAt: d.latest, Resources: d.resources, Policies: len(o.Policies)},
		Scopes: d.scopes,
	}
	for i := TrendDays - 1; i > 0; i-- {
		t := at.Add(-time.Duration(i) * day)
		if t.Before(d.first) {
			// Before the daemon's first read there is nothing to judge: an empty posture
			// would pass.
			continue
		}
		r := judge(t)
		doc.Trend = append(doc.Trend, compliance.TrendPoint{At: t, Score: r.Score, Open: openBySeverity(r)})
	}
	doc.Trend = append(doc.Trend, compliance.TrendPoint{At: at, Score: rep.Score, Open: openBySeverity(rep)})
	var open []time.Duration
	since := at.Add(-TrendDays * day)
	for _, r := range d.findings {
		if r.Status == findings.StatusResolved && r.ResolvedAt.After(since) && !r.ResolvedAt.After(at) {
			open = append(open, max(0, r.ResolvedAt.Sub(r.OpenedAt)))
		}
	}
	doc.Convergence = convergence(open, rep)
	return doc, nil
}

// postureAt returns the findings as they stood at t (see fromDaemon): opened at or
// before it and not resolved by then, each with the status it had and first seen when
// it opened.
func (d *daemonState) postureAt(t time.Time) []findings.Finding {
	var out []findings.Finding
	for _, r := range d.findings {
		if r.OpenedAt.After(t) {
			continue
		}
		f := r.Finding
		switch {
		case r.Status != findings.StatusResolved:
			f.Status = r.Status
		case r.ResolvedAt.After(t):
			f.Status = findings.StatusOpen
			if f.Waiver != nil {
				// Waived when it resolved; compliance.Evaluate opens it again at a time its
				// waiver had expired by.
				f.Status = findings.StatusWaived
			}
		default:
			continue
		}
		f.FirstSeen = r.OpenedAt
		out = append(out, f)
	}
	return out
}
