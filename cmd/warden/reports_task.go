package main

import (
	"context"

	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/waivers"
)

// evidenceOptions are what serve judges a report's evidence with: its policies and
// settings, and the waivers as the file holds them now (the dashboard may have added
// some since serve started).
func evidenceOptions(r *remediation) (evidence.Options, error) {
	var ws *waivers.Set
	if r.cfg.Waivers != "" {
		var err error
		if ws, err = waivers.Load(r.cfg.Waivers); err != nil {
			return evidence.Options{}, err
		}
	}
	return evidence.Options{Policies: r.eng.Policies(), Waivers: ws,
		Settings: evidence.SettingsInEffect(r.eng.SettingsSchema(), r.cfg.Settings), Tool: "warden " + version()}, nil
}

// reportsTasks are serve's scheduled tasks: the reports: section as one task
// (daemon.ReportsTask), none without it.
func (a *app) reportsTasks(ctx context.Context, r *remediation) ([]daemon.Task, error) {
	rc := r.cfg.Reports
	if rc == nil {
		return nil, nil
	}
	every := rc.Every
	if every <= 0 {
		every = config.DefaultReportsEvery
	}
	o := export.Options{Frameworks: rc.Frameworks, Formats: rc.Formats, Destination: rc.Destination,
		Region: rc.Region, Keep: rc.Keep, Store: r.st, Log: r.log, Logger: a.log.With("task", "reports")}
	t, err := daemon.ReportsTask(ctx, o, every, func() (evidence.Options, error) { return evidenceOptions(r) }, a.log)
	if err != nil {
		return nil, usageErr(err)
	}
	return []daemon.Task{t}, nil
}
