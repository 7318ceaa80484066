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
	"github.com/warden-sec/warden/remediate/env"
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
func (a *app) openDaemon(ctx context.Context, r *env.Env, m *remediate.Machine, df daemonFlags, routes map[string]http.Handler, tasks []daemon.Task) (d *daemon.Daemon, stopTracing func(context.Context) error, err error) {
	stopTracing = func(context.Context) error { return nil }
	reg := prometheus.NewRegistry()
	met := metrics.New(reg, metrics.WithQueueDepth(daemon.QueueDepth(r.Store)),
		metrics.WithState(daemon.State(r.Store)), metrics.WithLogger(a.log))
	routes["GET /metrics"] = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)})
	if r.Targets.Empty() {
		return nil, stopTracing, nil
	}
	dc := r.Config.Daemon.WithDefaults()
	var fallback river.PeriodicSchedule
	if df.schedule != "" {
		s, err := config.ParseSchedule(df.schedule)
		if err != nil {
			return nil, stopTracing, usageErr(fmt.Errorf("--schedule: %w", err))
		}
		fallback = s
	}
	wanted := map[string]bool{"aws": r.Targets.AWS != nil, "gcp": r.Targets.GCP != nil, "tls": len(r.Targets.TLS) > 0}
	var targets []daemon.Target
	for _, rd := range r.Clouds.Readers {
		sc, ok := rd.(collectors.ScopeCollector)
		if !ok || !wanted[sc.Name()] {
			continue
		}
		t := daemon.Target{Name: sc.Name(), Collector: sc, Reader: rd, Schedule: fallback}
		if expr, ok := dc.Schedules[sc.Name()]; ok {
			s, err := config.ParseSchedule(expr)
			if err != nil {
				return nil, stopTracing, usageErr(err)
			}
			t.Schedule = s
		}
		targets = append(targets, t)
	}
	var ws *waivers.Set
	if r.Config.Waivers != "" {
		var err error
		if ws, err = waivers.Load(r.Config.Waivers); err != nil {
			return nil, stopTracing, usageErr(err)
		}
	}
	rec := reconcile.New(reconcile.Options{Store: r.Store, Log: r.Log, Engine: r.Engine, Waivers: ws, WaiversFile: r.Config.Waivers,
		EvalVersion: r.Engine.Version() + "+" + r.Config.Version, FullEvery: dc.FullEvery, Actor: r.Actor, Logger: a.log})
	hooks, endpointHooks := daemon.MetricsHooks(met)
	// Checkpoints are signed hourly when a key is at hand ($WARDEN_AUDIT_KEY or the key
	// file warden audit checkpoint made); serve never creates one.
	var checkpoint func(context.Context) error
	af := auditFlags{}
	if signer, _, err := af.key(false); err != nil {
		return nil, stopTracing, err
	} else if signer != nil {
		alog := audit.New(r.Store, audit.Options{Signer: signer})
		checkpoint = func(ctx context.Context) error { _, err := alog.Checkpoint(ctx); return err }
	} else {
		a.log.Info("no audit key ($WARDEN_AUDIT_KEY or the file warden audit checkpoint creates): the daemon signs no checkpoints")
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
	d, err = daemon.New(ctx, daemon.Options{Store: r.Store, Log: r.Log, Reconciler: rec, Machine: m,
		Plan: reconcile.PlanOptions{Registry: r.Registry, Gates: r.Config.Gates}, Targets: targets, DryRun: df.dryRun || dc.DryRun,
		Workers: df.workers, JobTimeout: dc.JobTimeout, RescueAfter: dc.RescueAfter, Actor: r.Actor, Logger: a.log, Hooks: hooks,
		Checkpoint: checkpoint, Tasks: tasks, Tracer: tp.Tracer(daemon.TracerName)})
	if err != nil {
		return nil, stopTracing, err
	}
	token, err := daemon.LoadToken(os.Getenv, dc.EventsTokenFile)
	if err != nil && (dc.EventsTokenFile != "" || os.Getenv(daemon.EnvEventsToken) != "") {
		return nil, stopTracing, usageErr(err)
	}
	if err == nil {
		routes["POST /v1/events"] = d.EventsHandler(token, endpointHooks)
		routes["POST /v1/reconcile"] = d.ReconcileHandler(token)
	} else {
		a.log.Info("no events token ($" + daemon.EnvEventsToken + " or daemon.events_token_file): /v1/events and /v1/reconcile are off")
	}
	return d, shutdown, nil
}
