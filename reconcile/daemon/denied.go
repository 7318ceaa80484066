package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/events"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/reconcile/watch"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// KindRollback is the job that rolls back a right-sizing fix whose removal a principal
// was denied (Options.RollbackOnDenied).
const KindRollback = "warden.rollback"

// RollbackArgs asks for one applied action to be rolled back through the remediation
// machine, as `warden rollback` does, and the watch finding that asked for it resolved.
type RollbackArgs struct {
	Action string `json:"action" river:"unique"`
	// Finding is the fingerprint of the WARDEN-WATCH-001 finding, in Scope, resolved once
	// the action is rolled back.
	Finding     string `json:"finding"`
	Scope       string `json:"scope"`
	Correlation string `json:"correlation"`
}

// Kind implements river.JobArgs.
func (RollbackArgs) Kind() string { return KindRollback }

// InsertOpts implements river.JobArgsWithInsertOpts: one rollback of an action at a time.
func (RollbackArgs) InsertOpts() river.InsertOpts { return unique() }

// denied compares one denial with the right-sizing fixes that stand applied
// (reconcile/watch): each fix it is blamed on gets its critical finding (opened, or
// updated with the latest denial), an audit entry, a count, and, with
// Options.RollbackOnDenied, a rollback job. A denial delivered again changes nothing. It
// returns how many fixes the denial was newly blamed on.
func (d *Daemon) denied(ctx context.Context, den events.Denial) (int, error) {
	fixes, err := d.o.Machine.Verified(ctx, watch.Remediators()...)
	if err != nil {
		return 0, err
	}
	matches, err := watch.Find(den, fixes, d.o.DeniedWindow, d.observed)
	if err != nil {
		return 0, err
	}
	log := d.jobLog(ctx, "event", den.Event, "source", den.Source, "principal", den.Principal)
	if len(matches) == 0 {
		log.Debug("access denied: no right-sizing fix removed it", "denied", strings.Join(den.Actions, ","))
		return 0, nil
	}
	n := 0
	for _, m := range matches {
		f := watch.Finding(m)
		fresh, err := d.recordDenied(ctx, m, f)
		if err != nil {
			return n, err
		}
		if !fresh {
			continue // this event was delivered before
		}
		n++
		if d.o.Hooks.RightsizeDenied != nil {
			d.o.Hooks.RightsizeDenied(m.Fix.Remediator)
		}
		log.Warn("a right-sized principal was denied a permission its fix removed", "denied", m.Denied, "action", m.Fix.ID,
			"remediator", m.Fix.Remediator, "rollback", watch.RollbackCommand(m.Fix.ID), "auto_rollback", d.o.RollbackOnDenied && !d.o.DryRun)
		if d.o.RollbackOnDenied && !d.o.DryRun {
			if _, err := d.insertOne(ctx, RollbackArgs{Action: m.Fix.ID, Finding: f.Fingerprint, Scope: f.Scope, Correlation: "denied-" + den.Source}); err != nil {
				return n, fmt.Errorf("enqueue the rollback of %s: %w", m.Fix.ID, err)
			}
		}
	}
	return n, nil
}

// observed is a resource as the daemon last read it: an IAM uid is looked for in its
// account's IAM scope.
func (d *Daemon) observed(uid string) (snapshot.Resource, bool, error) {
	parts := strings.SplitN(uid, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" || parts[2] != "iam" {
		return snapshot.Resource{}, false, nil
	}
	var res snapshot.Resource
	var ok bool
	err := d.o.Store.Read(context.Background(), func(q *store.Reader) error {
		var err error
		res, ok, err = state.Resource(context.Background(), q, "aws/"+parts[4]+"/iam", uid)
		return err
	})
	return res, ok, err
}

// recordDenied opens f, or updates it with the latest denial, with its audit entries,
// in one transaction; fresh is false when f already names this very event (a delivery
// repeated).
func (d *Daemon) recordDenied(ctx context.Context, m watch.Match, f findings.Finding) (fresh bool, err error) {
	now := time.Now().UTC()
	err = d.o.Store.InTx(ctx, func(tx *store.Tx) error {
		old, err := state.ActiveFindings(ctx, tx, f.Scope, f.Resource, nil)
		if err != nil {
			return err
		}
		fs, was := old[f.Fingerprint]
		if was && fs.Finding.Details["event_id"] == m.Denial.Source {
			return nil
		}
		fresh = true
		if !was {
			fs = state.Finding{OpenedAt: now}
		}
		fs.Finding, fs.Status, fs.SeenAt, fs.ResolvedAt = f, findings.StatusOpen, now, time.Time{}
		if err := state.PutFinding(ctx, tx, fs); err != nil {
			return err
		}
		var evs []audit.Event
		if !was {
			evs = append(evs, audit.Event{Actor: d.o.Actor, Kind: audit.KindFindingOpened, Subject: f.Fingerprint, Data: map[string]any{
				"scope": f.Scope, "policy": f.Policy, "severity": f.Severity.String(), "resource": f.Resource,
				"account": f.Account, "region": f.Region, "message": f.Message}})
		}
		evs = append(evs, audit.Event{Actor: d.o.Actor, Kind: watch.AuditKind, Subject: m.Fix.ID, Data: map[string]any{
			"principal": m.Denial.Principal, "denied": m.Denied, "removed": m.Removed, "remediator": m.Fix.Remediator,
			"target": m.Fix.Target, "event": m.Denial.Event, "event_id": m.Denial.Source, "code": m.Denial.Code,
			"denied_at": m.Denial.At.Format(time.RFC3339), "finding": f.Fingerprint, "rollback": watch.RollbackCommand(m.Fix.ID),
			"auto_rollback": d.o.RollbackOnDenied && !d.o.DryRun}})
		_, err = d.o.Log.AppendAll(ctx, tx, evs)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record the denial of %s to %s: %w", m.Denied, m.Denial.Principal, err)
	}
	return fresh, nil
}

// rollbackWorker rolls back a fix a principal was denied by, and resolves its finding.
type rollbackWorker struct {
	river.WorkerDefaults[RollbackArgs]
	d *Daemon
}

func (w *rollbackWorker) Work(ctx context.Context, job *river.Job[RollbackArgs]) error {
	d, a := w.d, job.Args
	ctx = audit.WithCorrelation(ctx, a.Correlation)
	log := d.jobLog(ctx, "correlation", a.Correlation, "action", a.Action, "job", job.ID)
	r, err := d.o.Machine.Action(ctx, a.Action)
	if err != nil {
		return err
	}
	switch {
	case r == nil:
		d.done(KindRollback, "cancelled")
		return river.JobCancel(fmt.Errorf("rollback %s: %w", a.Action, remediate.ErrNoSuchAction))
	case r.State == remediate.StateRolledBack:
		// Rolled back meanwhile (a person, an earlier run of this job): its finding goes.
	case r.State != remediate.StateVerified:
		d.done(KindRollback, "cancelled")
		return river.JobCancel(fmt.Errorf("rollback %s: the action is %s, no longer applied", a.Action, r.State))
	default:
		it, err := d.o.Machine.Rollback(ctx, a.Action)
		if errors.Is(err, remediate.ErrPaused) {
			log.Info("remediation is paused: the rollback waits", "err", err)
			d.done(KindRollback, "snoozed")
			return river.JobSnooze(d.o.ApprovalPoll)
		}
		if err != nil {
			return fmt.Errorf("rollback %s: %w", a.Action, err)
		}
		log.Warn("right-sizing fix rolled back after a denial", "state", it.State, "outcome", it.Outcome)
	}
	if err := d.resolveDenied(ctx, a); err != nil {
		return err
	}
	d.done(KindRollback, "completed")
	return nil
}

// resolveDenied resolves the watch finding of a rolled-back fix, with its audit entry.
func (d *Daemon) resolveDenied(ctx context.Context, a RollbackArgs) error {
	return d.o.Store.InTx(ctx, func(tx *store.Tx) error {
		old, err := state.ActiveFindings(ctx, tx, a.Scope, "", func(string, string) bool { return true })
		if err != nil {
			return err
		}
		fs, ok := old[a.Finding]
		if !ok {
			return nil
		}
		fs.Status, fs.ResolvedAt = findings.StatusResolved, time.Now().UTC()
		if err := state.PutFinding(ctx, tx, fs); err != nil {
			return err
		}
		f := fs.Finding
		_, err = d.o.Log.Append(ctx, tx, audit.Event{Actor: d.o.Actor, Kind: audit.KindFindingResolved, Subject: f.Fingerprint,
			Data: map[string]any{"scope": f.Scope, "policy": f.Policy, "severity": f.Severity.String(), "resource": f.Resource,
				"account": f.Account, "region": f.Region, "message": "fix " + a.Action + " rolled back"}})
		return err
	})
}

// KindWatch is the periodic job that resolves the WARDEN-WATCH-001 findings of fixes no
// longer applied.
const KindWatch = "warden.watch"

// WatchArgs asks for the open WARDEN-WATCH-001 findings to be checked against their
// fixes: a periodic job.
type WatchArgs struct{}

// Kind implements river.JobArgs.
func (WatchArgs) Kind() string { return KindWatch }

// InsertOpts implements river.JobArgsWithInsertOpts: one at a time.
func (WatchArgs) InsertOpts() river.InsertOpts { return unique() }

// watchWorker resolves the open findings whose fix is no longer verified: rolled back
// by hand (`warden rollback`, the dashboard), or planned anew. A fix that stays applied
// keeps its finding open: it is for a person to decide.
type watchWorker struct {
	river.WorkerDefaults[WatchArgs]
	d *Daemon
}

func (w *watchWorker) Work(ctx context.Context, job *river.Job[WatchArgs]) error {
	d := w.d
	var open []state.Finding
	err := d.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		open, err = state.FindingsOf(ctx, q, watch.PolicyID, findings.StatusOpen)
		return err
	})
	if err != nil {
		return fmt.Errorf("read the watch findings: %w", err)
	}
	for _, fs := range open {
		id, _ := fs.Finding.Details["action_id"].(string)
		r, err := d.o.Machine.Action(ctx, id)
		if err != nil {
			return err
		}
		if r != nil && r.State == remediate.StateVerified {
			continue
		}
		if err := d.resolveDenied(ctx, RollbackArgs{Action: id, Finding: fs.Finding.Fingerprint, Scope: fs.Finding.Scope}); err != nil {
			return err
		}
		d.jobLog(ctx, "job", job.ID).Info("watch finding resolved: its fix is no longer applied", "action", id, "finding", fs.Finding.Fingerprint)
	}
	d.done(KindWatch, "completed")
	return nil
}
