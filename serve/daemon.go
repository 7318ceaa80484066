package serve

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

// openMetrics makes serve's metrics and mounts them at /metrics.
func (o RunOptions) openMetrics(routes map[string]http.Handler) *metrics.Metrics {
	reg := prometheus.NewRegistry()
	met := metrics.New(reg, metrics.WithQueueDepth(daemon.QueueDepth(o.Store)),
		metrics.WithState(daemon.State(o.Store)), metrics.WithLogger(o.Logger))
	routes["GET /metrics"] = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn)})
	return met
}

// openDaemon builds the reconciliation daemon over the live targets: one daemon target
// per kind of target given (aws, gcp, tls), each swept on its daemon.schedules entry or
// --schedule. No live target: no daemon (the loop then applies what gets approved and
// runs the tasks itself). It mounts /metrics, and /v1/events and /v1/reconcile when an
// events token is configured. The daemon runs the tasks on their schedules (the
// reports: section). It is traced when daemon.otlp_endpoint or
// $OTEL_EXPORTER_OTLP_ENDPOINT names a collector: stopTracing flushes the last spans,
// and must be called when serve ends.
func (o RunOptions) openDaemon(ctx context.Context, m *remediate.Machine, met *metrics.Metrics, routes map[string]http.Handler, tasks []daemon.Task) (d *daemon.Daemon, stopTracing func(context.Context) error, err error) {
	stopTracing = func(context.Context) error { return nil }
	if o.Targets.Empty() {
		return nil, stopTracing, nil
	}
	dc := o.Config.Daemon.WithDefaults()
	targets, err := o.daemonTargets()
	if err != nil {
		return nil, stopTracing, err
	}
	rec, err := o.reconciler()
	if err != nil {
		return nil, stopTracing, err
	}
	hooks, endpointHooks := daemon.MetricsHooks(met)
	checkpoint, err := o.checkpointer()
	if err != nil {
		return nil, stopTracing, err
	}
	tp, shutdown, err := telemetry.Setup(ctx, telemetry.Options{Endpoint: dc.OTLPEndpoint, ServiceVersion: o.Version,
		SampleRatio: dc.TraceSampleRatio, Logger: o.Logger})
	if err != nil {
		return nil, stopTracing, err
	}
	// Any failure below leaves serve without a daemon: the exporter is stopped here.
	defer func() {
		if err != nil {
			_ = shutdown(context.WithoutCancel(ctx))
		}
	}()
	d, err = daemon.New(ctx, daemon.Options{Store: o.Store, Log: o.Log, Reconciler: rec, Machine: m,
		Plan: reconcile.PlanOptions{Registry: o.Registry, Gates: o.Config.Gates}, Targets: targets, DryRun: o.DryRun || dc.DryRun,
		Workers: o.Workers, Readers: dc.Readers, FullReads: dc.FullReads, JobTimeout: dc.JobTimeout, RescueAfter: dc.RescueAfter, Actor: o.Actor, Logger: o.Logger, Hooks: hooks,
		Checkpoint: checkpoint, Tasks: tasks, Tracer: tp.Tracer(daemon.TracerName),
		DeniedWindow: dc.DeniedWindow, RollbackOnDenied: dc.RollbackOnDenied, SweepSpread: dc.Spread()})
	if err != nil {
		return nil, stopTracing, err
	}
	if err := o.mountEvents(d, dc.EventsTokenFile, routes, endpointHooks); err != nil {
		return nil, stopTracing, err
	}
	return d, shutdown, nil
}

// daemonTargets are the daemon's targets: one per kind of live target given (aws, gcp,
// tls), each swept on its daemon.schedules entry, else on o.Schedule (--schedule), else
// only on demand and on events.
func (o RunOptions) daemonTargets() ([]daemon.Target, error) {
	var fallback river.PeriodicSchedule
	if o.Schedule != "" {
		s, err := config.ParseSchedule(o.Schedule)
		if err != nil {
			return nil, fmt.Errorf("--schedule: %w", err)
		}
		fallback = s
	}
	schedules := o.Config.Daemon.WithDefaults().Schedules
	wanted := map[string]bool{"aws": o.Targets.AWS != nil, "gcp": o.Targets.GCP != nil, "tls": len(o.Targets.TLS) > 0}
	var targets []daemon.Target
	for _, rd := range o.Readers {
		sc, ok := rd.(collectors.ScopeCollector)
		if !ok || !wanted[sc.Name()] {
			continue
		}
		t := daemon.Target{Name: sc.Name(), Collector: sc, Reader: rd, Schedule: fallback}
		if expr, ok := schedules[sc.Name()]; ok {
			s, err := config.ParseSchedule(expr)
			if err != nil {
				return nil, err
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
func (o RunOptions) checkpointer() (func(context.Context) error, error) {
	signer, _, err := audit.SigningKey(os.Getenv, "", false)
	if err != nil {
		return nil, err
	}
	if signer == nil {
		o.Logger.Info("no audit key ($WARDEN_AUDIT_KEY or the file warden audit checkpoint creates): the daemon signs no checkpoints")
		return nil, nil
	}
	alog := audit.New(o.Store, audit.Options{Signer: signer})
	return func(ctx context.Context) error { _, err := alog.Checkpoint(ctx); return err }, nil
}

// reconciler judges each scope the daemon reads, with serve's engine and waivers.
func (o RunOptions) reconciler() (*reconcile.Reconciler, error) {
	var ws *waivers.Set
	if o.Config.Waivers != "" {
		var err error
		if ws, err = waivers.Load(o.Config.Waivers); err != nil {
			return nil, err
		}
	}
	return reconcile.New(reconcile.Options{Store: o.Store, Log: o.Log, Engine: o.Engine, Waivers: ws, WaiversFile: o.Config.Waivers,
		EvalVersion: o.Engine.Version() + "+" + o.Config.Version, FullEvery: o.Config.Daemon.WithDefaults().FullEvery, Actor: o.Actor, Logger: o.Logger}), nil
}

// mountEvents mounts /v1/events and /v1/reconcile when an events token is configured
// ($WARDEN_EVENTS_TOKEN, else tokenFile); a token configured but unreadable is an error.
func (o RunOptions) mountEvents(d *daemon.Daemon, tokenFile string, routes map[string]http.Handler, hooks daemon.EndpointHooks) error {
	token, err := daemon.LoadToken(os.Getenv, tokenFile)
	if err != nil && (tokenFile != "" || os.Getenv(daemon.EnvEventsToken) != "") {
		return err
	}
	if err != nil {
		o.Logger.Info("no events token ($" + daemon.EnvEventsToken + " or daemon.events_token_file): /v1/events and /v1/reconcile are off")
		return nil
	}
	routes["POST /v1/events"] = d.EventsHandler(token, hooks)
	routes["POST /v1/reconcile"] = d.ReconcileHandler(token)
	return nil
}
