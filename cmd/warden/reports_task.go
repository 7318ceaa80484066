package main

import (
	"context"
	"errors"
	"time"

	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate/env"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// evidenceOptions are what serve judges a report's evidence with: its policies and
// settings, and the waivers as the file holds them now (the dashboard may have added
// some since serve started).
func evidenceOptions(r *env.Env) (evidence.Options, error) {
	var ws *waivers.Set
	if r.Config.Waivers != "" {
		var err error
		if ws, err = waivers.Load(r.Config.Waivers); err != nil {
			return evidence.Options{}, err
		}
	}
	return evidence.Options{Policies: r.Engine.Policies(), Waivers: ws,
		Settings: evidence.SettingsInEffect(r.Engine.SettingsSchema(), r.Config.Settings), Tool: "warden " + version()}, nil
}

// reportsWaitForEvidence is how long scheduled reports wait, when nothing has been read
// yet, before they look again.
const reportsWaitForEvidence = 15 * time.Second

// reportsTask is the reports: section as a task of the daemon: every reports.every, each
// framework's evidence gathered once from the history and written in every format to the
// destination, the oldest beyond reports.keep deleted. Nil without a reports: section.
func (a *app) reportsTask(ctx context.Context, r *env.Env) (*daemon.Task, error) {
	rc := r.Config.Reports
	if rc == nil {
		return nil, nil
	}
	// The evidence options are read at each run (the waivers file changes), so the
	// exporter is made with none and each run makes its own.
	base := export.Options{Frameworks: rc.Frameworks, Formats: rc.Formats, Destination: rc.Destination,
		Region: rc.Region, Keep: rc.Keep, Store: r.Store, Log: r.Log, Logger: a.log.With("task", "reports")}
	if _, err := export.New(ctx, base); err != nil {
		return nil, usageErr(err)
	}
	every := rc.Every
	if every <= 0 {
		every = config.DefaultReportsEvery
	}
	// A run reports the posture as it stands when it runs: a run that waited for the
	// first evidence reports what it found, not the empty posture of when it was due.
	return &daemon.Task{Name: "reports", Every: every, Run: func(ctx context.Context, _ time.Time) error {
		o := base
		var err error
		if o.Evidence, err = evidenceOptions(r); err != nil {
			return err
		}
		ex, err := export.New(ctx, o)
		if err != nil {
			return err
		}
		res, err := ex.Run(ctx, time.Now())
		if err != nil && allNoEvidence(res) {
			// Nothing read yet (the first sweep is still running): not a failure.
			return daemon.Later(reportsWaitForEvidence, "no scan or daemon read yet to report on")
		}
		a.log.Info("scheduled reports written", "destination", ex.Destination().String(), "reports", len(res.Reports), "failed", len(res.Failed()))
		return err
	}}, nil
}

// runTask runs t at once and then every t.Every until ctx ends: serve without a daemon
// (no live targets) still writes its scheduled reports. A failed run is logged; the next
// tries again.
func (a *app) runTask(ctx context.Context, t daemon.Task) {
	tick := time.NewTicker(t.Every)
	defer tick.Stop()
	for {
		wait := tick.C
		if err := t.Run(ctx, time.Now().UTC()); err != nil && ctx.Err() == nil {
			if d, later := daemon.IsLater(err); later {
				wait = time.After(d)
			} else {
				a.log.Error("task failed: it runs again at its next time", "task", t.Name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wait:
		}
	}
}

// allNoEvidence reports whether every report of res failed for want of any evidence.
func allNoEvidence(res export.Result) bool {
	failed := res.Failed()
	if len(failed) == 0 || len(failed) != len(res.Reports) {
		return false
	}
	for _, r := range failed {
		if !errors.Is(r.Err, store.ErrNoScans) {
			return false
		}
	}
	return true
}
