package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/export"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/loopback"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/slackgate"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// RunOptions are what warden serve runs with: the config, warden's store and the
// pipeline over it, the live targets and the command's flags.
type RunOptions struct {
	Config   *config.Config
	Store    *store.Store
	Log      *audit.Log
	Gate     *gates.Gate
	Engine   *engine.Engine
	Registry *remediators.Registry
	// Readers read the live targets again (the fixes' re-checks, the daemon's reads);
	// Targets say which kinds there are. No target: no daemon.
	Readers remediate.Readers
	Targets collect.Targets
	Actor   string
	// Listen overrides serve.listen; MaxActions and MaxPerAccount cap each pass of the
	// loop (--max-actions, --max-per-account).
	Listen                    string
	MaxActions, MaxPerAccount int
	// Schedule sweeps every target daemon.schedules does not name (--schedule); DryRun
	// (or daemon.dry_run) plans and asks, and applies nothing; Workers is the daemon's.
	Schedule string
	DryRun   bool
	Workers  int
	// Version is warden's, as reports and traces name it.
	Version string
	// Stderr hears where serve listens and as which replica it reconciles.
	Stderr io.Writer
	Logger *slog.Logger
}

// ErrNotLoopback is the error of a listen address beyond this machine that the config
// does not allow (serve.allow_remote): config.ErrNotLoopback.
var ErrNotLoopback = config.ErrNotLoopback

// Run is warden serve: it wires the machine that applies fixes, the channels (Slack, the
// dashboard), the daemon and the scheduled tasks under one loop (daemon.Loop), and the
// HTTP server of their routes, and runs them until ctx ends; then it drains both.
func Run(ctx context.Context, o RunOptions) error {
	cfg := o.Config
	addr := cmp.Or(o.Listen, cfg.Serve.Listen, config.DefaultServeListen)
	// The checks warden config check makes too (config.CheckServe), so that a config it
	// passes is one serve starts on.
	if err := cfg.CheckServe(o.Listen); err != nil {
		return err
	}
	if err := applyMemoryLimit(cfg.Daemon.MemoryLimit, o.Logger); err != nil {
		return err
	}
	// The channels decide through a gate that signs with the replica's key (checked mode).
	gate, err := o.signingGate()
	if err != nil {
		return err
	}
	o.Gate = gate
	routes := map[string]http.Handler{}
	met := o.openMetrics(routes)
	mo := o.machineOptions()
	m := remediate.New(mo)
	dryRun := o.DryRun || cfg.Daemon.DryRun
	if err := warnUnreachable(ctx, m, o.Targets, dryRun, o.Logger); err != nil {
		return err
	}
	// The loop is made last; the channels wake it as soon as a decision is recorded, so
	// that what reached its quorum is applied at once, not at the next pass.
	var loop *daemon.Loop
	wake := func(string) { loop.Wake() }
	endpoints := "healthz, readyz"
	slackHandler, syncers, err := o.mountSlack(m, wake, routes)
	if err != nil {
		return err
	}
	if slackHandler != nil {
		endpoints += ", slack/interactions"
	}
	tasks, err := o.reportsTasks(ctx)
	if err != nil {
		return err
	}
	exports, closeExports, err := o.exportTasks(ctx, met)
	if err != nil {
		return err
	}
	defer closeExports()
	tasks = append(tasks, exports...)
	d, stopTracing, err := o.openDaemon(ctx, m, met, routes, tasks)
	if err != nil {
		return err
	}
	// After the daemon's last job: its spans are flushed, within a bound.
	defer func() {
		if err := stopTracing(context.WithoutCancel(ctx)); err != nil {
			o.Logger.Warn("traces: the last spans were not sent", "err", err)
		}
	}()
	if cfg.Dashboard.IsEnabled() {
		dash, err := o.openDashboard(mo, m, loopback.Addr(addr), dryRun, wake)
		if err != nil {
			return err
		}
		routes["/"] = dash
		endpoints += ", dashboard at /"
		if !dash.AuthOn() {
			endpoints += " (authentication off: loopback only)"
		}
	}
	if routes["POST /v1/events"] != nil {
		endpoints += ", v1/events, v1/reconcile"
	}
	endpoints += ", metrics"
	loop = daemon.NewLoop(daemon.LoopOptions{Machine: m, DryRun: dryRun, Syncers: syncers, Daemon: d, Tasks: tasks, Logger: o.Logger})
	srv := New(Options{Routes: routes, Logger: o.Logger,
		Ready: func(ctx context.Context) error { _, err := o.Store.Scans(ctx, 1); return err }})
	replica := ""
	if d != nil {
		replica = d.ID()
	}
	return o.run(ctx, srv, addr, endpoints, replica, loop, slackHandler)
}

// run listens on addr and runs the HTTP server and the loop until ctx ends (or the
// listener fails), and drains both. It says what it serves, and as which replica it
// reconciles when there is a daemon.
func (o RunOptions) run(ctx context.Context, srv *Server, addr, endpoints, replica string, loop *daemon.Loop, slackHandler *slackgate.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	fmt.Fprintf(o.Stderr, "warden serve: listening on http://%s (%s)\n", ln.Addr(), endpoints)
	if replica != "" {
		fmt.Fprintf(o.Stderr, "warden serve: reconciling as replica %s\n", replica)
	}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	loopDone := make(chan error, 1)
	go func() { loopDone <- loop.Run(lctx) }()
	err = srv.Run(ctx, ln)
	stop()
	if lerr := <-loopDone; lerr != nil && err == nil {
		err = lerr
	}
	if slackHandler != nil {
		// Clicks acknowledged before the stop are decided and answered.
		slackHandler.Wait()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	done, failed := loop.Passes()
	o.Logger.Info("serve stopped", "passes", done, "failed_passes", failed)
	return nil
}

// machineOptions are the options of serve's remediation machine. The budget is shared
// by every run on the store: the daemon's jobs and the loop apply one action at a time.
func (o RunOptions) machineOptions() remediate.Options {
	dc := o.Config.Daemon.WithDefaults()
	return remediate.Options{Store: o.Store, Log: o.Log, Gate: o.Gate, Gates: o.Config.Gates, Registry: o.Registry,
		Observer: o.Readers, Engine: o.Engine, Actor: o.Actor, Logger: o.Logger,
		Versions: scan.VersionEvents(o.Engine, o.Config.File, o.Config.Version),
		Limits: remediate.Limits{MaxActions: o.MaxActions, MaxPerAccount: o.MaxPerAccount,
			PerHour: dc.MaxFixesPerHour, PerAccountPerHour: dc.MaxFixesPerAccountPerHour, PauseAfterFailures: dc.PauseAfterFailures},
		// Replicas apply side by side: an action another one is applying is
		// interrupted only once a rescued job could have taken it over.
		InFlightLease: dc.RescueAfter,
		// A fix whose cloud this serve has no target for is left for one that has.
		Reach: Reach(o.Targets)}
}

// mountSlack mounts the Slack channel when the config has a slack: section: its
// secrets from the environment or the files the config names, a notifier that wakes the
// loop on each decision (and syncs the messages after each pass), and the interaction
// endpoint. Without the section: nothing.
func (o RunOptions) mountSlack(m *remediate.Machine, wake func(string), routes map[string]http.Handler) (*slackgate.Handler, []daemon.Syncer, error) {
	sc := o.Config.Slack
	if sc == nil {
		return nil, nil, nil
	}
	secrets, err := slackgate.LoadSecrets(*sc, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	n, err := slackgate.NewNotifier(slackgate.Options{Config: *sc, Identities: o.Config.Identities, Secrets: secrets,
		Store: o.Store, Gate: o.Gate, Actions: m, Logger: o.Logger, OnDecision: wake})
	if err != nil {
		return nil, nil, err
	}
	h := slackgate.NewHandler(n)
	routes["POST /slack/interactions"] = h
	return h, []daemon.Syncer{n}, nil
}

// openDashboard builds the web dashboard over serve's store, gate and machine. A
// rollback from the pages runs through a machine like serve's own, acting as the
// person who asked: the audit log names them. Without live targets, or in a dry run,
// the pages offer no rollback.
func (o RunOptions) openDashboard(mo remediate.Options, m *remediate.Machine, loopback, dryRun bool, wake func(string)) (*dashboard.Dashboard, error) {
	var policies []string
	for _, p := range o.Engine.Policies() {
		policies = append(policies, p.ID)
	}
	_, verifier, err := audit.SigningKey(os.Getenv, "", false)
	if err != nil {
		return nil, err
	}
	var rollback func(ctx context.Context, actor, id string) (remediate.Item, error)
	if !o.Targets.Empty() && !dryRun {
		rollback = func(ctx context.Context, actor, id string) (remediate.Item, error) {
			ro := mo
			ro.Actor = actor
			return remediate.New(ro).Rollback(ctx, id)
		}
	}
	return dashboard.New(dashboard.Options{Store: o.Store, Log: o.Log, Gate: o.Gate, Actions: m, Rollback: rollback,
		Verifier: verifier, WaiverFile: o.Config.Waivers, Policies: policies, Report: o.report, Formats: render.Formats(),
		Config: o.Config.Dashboard, Loopback: loopback, LocalActor: o.Actor, OnDecision: wake, Logger: o.Logger,
		Fixes: o.Registry, UnusedWindowDays: unusedWindowDays(o.Config.Settings)})
}

// report writes a compliance report for the dashboard, gathered from the history as
// 'warden report' gathers it, with the waivers as the file holds them now (the pages may
// have added some).
func (o RunOptions) report(ctx context.Context, w io.Writer, framework, format string) error {
	fw, err := compliance.Lookup(framework)
	if err != nil {
		return err
	}
	wr, err := render.New(format)
	if err != nil {
		return err
	}
	eo, err := o.evidenceOptions()
	if err != nil {
		return err
	}
	doc, err := evidence.Gather(ctx, o.Store, o.Log, fw, eo)
	if err != nil {
		return err
	}
	return wr.Write(w, doc)
}

// evidenceOptions are what serve judges a report's evidence with: its policies and
// settings, and the waivers as the file holds them now (the dashboard may have added
// some since serve started).
func (o RunOptions) evidenceOptions() (evidence.Options, error) {
	var ws *waivers.Set
	if o.Config.Waivers != "" {
		var err error
		if ws, err = waivers.Load(o.Config.Waivers); err != nil {
			return evidence.Options{}, err
		}
	}
	return evidence.Options{Policies: o.Engine.Policies(), Waivers: ws,
		Settings: evidence.SettingsInEffect(o.Engine.SettingsSchema(), o.Config.Settings), Tool: "warden " + o.Version}, nil
}

// reportsTasks are serve's scheduled tasks: the reports: section as one task
// (daemon.ReportsTask), none without it.
func (o RunOptions) reportsTasks(ctx context.Context) ([]daemon.Task, error) {
	rc := o.Config.Reports
	if rc == nil {
		return nil, nil
	}
	every := rc.Every
	if every <= 0 {
		every = config.DefaultReportsEvery
	}
	eo := export.Options{Frameworks: rc.Frameworks, Formats: rc.Formats, Destination: rc.Destination,
		Region: rc.Region, Keep: rc.Keep, Store: o.Store, Log: o.Log, Logger: o.Logger.With("task", "reports")}
	t, err := daemon.ReportsTask(ctx, eo, every, o.evidenceOptions, o.Logger)
	if err != nil {
		return nil, err
	}
	return []daemon.Task{t}, nil
}

// unusedWindowDays is the pack's unused_access_window_days setting, 0 (the default) when
// unset or not a whole number.
func unusedWindowDays(settings map[string]any) int {
	switch v := settings["unused_access_window_days"].(type) {
	case int:
		return v
	case float64:
		if v == float64(int(v)) {
			return int(v)
		}
	}
	return 0
}
