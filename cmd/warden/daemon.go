package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/telemetry"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/waivers"
)

// daemonFlags are warden serve's daemon switches.
type daemonFlags struct {
	schedule string
	dryRun   bool
	workers  int
}

// openDaemon builds the reconciliation daemon over the live targets: one daemon target
// per kind of target given (aws, gcp, tls), each swept on its daemon.schedules entry or
// --schedule. No live target: no daemon (serve then only answers approvals). It mounts
// /metrics, and /v1/events and /v1/reconcile when an events token is configured. The
// daemon runs tasks on their schedules (the reports: section). The
// daemon is traced when daemon.otlp_endpoint or $OTEL_EXPORTER_OTLP_ENDPOINT names a
// collector: stopTracing flushes the last spans, and must be called when serve ends.
func (a *app) openDaemon(ctx context.Context, r *remediation, m *remediate.Machine, df daemonFlags, routes map[string]http.Handler, tasks []daemon.Task) (d *daemon.Daemon, stopTracing func(context.Context) error, err error) {
	stopTracing = func(context.Context) error { return nil }
	reg := prometheus.NewRegistry()
	met := metrics.New(reg, metrics.WithQueueDepth(daemon.QueueDepth(r.st)),
		metrics.WithState(daemon.State(r.st)), metrics.WithLogger(a.log))
	routes["GET /metrics"] = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)})
	if r.targets.Empty() {
		return nil, stopTracing, nil
	}
	dc := r.cfg.Daemon.WithDefaults()
	targets, err := daemonTargets(r, df.schedule)
	if err != nil {
		return nil, stopTracing, err
	}
	rec, err := a.reconciler(r)
	if err != nil {
		return nil, stopTracing, err
	}
	hooks, endpointHooks := daemon.MetricsHooks(met)
	checkpoint, err := a.checkpointer(r)
	if err != nil {
		return nil, stopTracing, err
	}
	tp, shutdown, err := telemetry.Setup(ctx, telemetry.Options{Endpoint: dc.OTLPEndpoint, ServiceVersion: version(),
		SampleRatio: dc.TraceSampleRatio, Logger: a.log})
	if err != nil {
		return nil, stopTracing, usageErr(err)
	}
	// Any failure below leaves serve without a daemon: the exporter is stopped here.
	defer func() {
		if err != nil {
			_ = shutdown(context.WithoutCancel(ctx))
		}
	}()
	d, err = daemon.New(ctx, daemon.Options{Store: r.st, Log: r.log, Reconciler: rec, Machine: m,
		Plan: reconcile.PlanOptions{Registry: r.reg, Gates: r.cfg.Gates}, Targets: targets, DryRun: df.dryRun || dc.DryRun,
		Workers: df.workers, JobTimeout: dc.JobTimeout, RescueAfter: dc.RescueAfter, Actor: r.actor, Logger: a.log, Hooks: hooks,
		Checkpoint: checkpoint, Tasks: tasks, Tracer: tp.Tracer(daemon.TracerName)})
	if err != nil {
		return nil, stopTracing, err
	}
	if err := a.mountEvents(d, dc.EventsTokenFile, routes, endpointHooks); err != nil {
		return nil, stopTracing, err
	}
	return d, shutdown, nil
}

// daemonTargets are the daemon's targets: one per kind of live target given (aws, gcp,
// tls), each swept on its daemon.schedules entry, else on schedule (--schedule), else
// only on demand and on events.
func daemonTargets(r *remediation, schedule string) ([]daemon.Target, error) {
	var fallback river.PeriodicSchedule
	if schedule != "" {
		s, err := config.ParseSchedule(schedule)
		if err != nil {
			return nil, usageErr(fmt.Errorf("--schedule: %w", err))
		}
		fallback = s
	}
	schedules := r.cfg.Daemon.WithDefaults().Schedules
	wanted := map[string]bool{"aws": r.targets.AWS != nil, "gcp": r.targets.GCP != nil, "tls": len(r.targets.TLS) > 0}
	var targets []daemon.Target
	for _, rd := range r.clouds.readers {
		sc, ok := rd.(collectors.ScopeCollector)
		if !ok || !wanted[sc.Name()] {
			continue
		}
		t := daemon.Target{Name: sc.Name(), Collector: sc, Reader: rd, Schedule: fallback}
		if expr, ok := schedules[sc.Name()]; ok {
			s, err := config.ParseSchedule(expr)
			if err != nil {
				return nil, usageErr(err)
			}
			t.Schedule = s
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// checkpointer signs an audit checkpoint when a key is at hand ($WARDEN_AUDIT_KEY or the
// key file warden audit checkpoint made): the daemon then signs one hourly. serve never
// creates a key; without one it is nil.
func (a *app) checkpointer(r *remediation) (func(context.Context) error, error) {
	signer, _, err := (&auditFlags{}).key(false)
	if err != nil {
		return nil, err
	}
	if signer == nil {
		a.log.Info("no audit key ($WARDEN_AUDIT_KEY or the file warden audit checkpoint creates): the daemon signs no checkpoints")
		return nil, nil
	}
	alog := audit.New(r.st, audit.Options{Signer: signer})
	return func(ctx context.Context) error { _, err := alog.Checkpoint(ctx); return err }, nil
}

// reconciler judges each scope the daemon reads, with serve's engine and waivers.
func (a *app) reconciler(r *remediation) (*reconcile.Reconciler, error) {
	var ws *waivers.Set
	if r.cfg.Waivers != "" {
		var err error
		if ws, err = waivers.Load(r.cfg.Waivers); err != nil {
			return nil, usageErr(err)
		}
	}
	return reconcile.New(reconcile.Options{Store: r.st, Log: r.log, Engine: r.eng, Waivers: ws, WaiversFile: r.cfg.Waivers,
		EvalVersion: r.eng.Version() + "+" + r.cfg.Version, FullEvery: r.cfg.Daemon.WithDefaults().FullEvery, Actor: r.actor, Logger: a.log}), nil
}

// mountEvents mounts /v1/events and /v1/reconcile when an events token is configured
// ($WARDEN_EVENTS_TOKEN, else tokenFile); a token configured but unreadable is an error.
func (a *app) mountEvents(d *daemon.Daemon, tokenFile string, routes map[string]http.Handler, hooks daemon.EndpointHooks) error {
	token, err := daemon.LoadToken(os.Getenv, tokenFile)
	if err != nil && (tokenFile != "" || os.Getenv(daemon.EnvEventsToken) != "") {
		return usageErr(err)
	}
	if err != nil {
		a.log.Info("no events token ($" + daemon.EnvEventsToken + " or daemon.events_token_file): /v1/events and /v1/reconcile are off")
		return nil
	}
	routes["POST /v1/events"] = d.EventsHandler(token, hooks)
	routes["POST /v1/reconcile"] = d.ReconcileHandler(token)
	return nil
}
