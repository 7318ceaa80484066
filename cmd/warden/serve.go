package main

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

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/serve"
	"github.com/warden-sec/warden/slackgate"
)

func (a *app) serveCmd() *cobra.Command {
	var rf remediationFlags
	var listen string
	var maxActions, maxPerAcct int
	var df daemonFlags
	cmd := &cobra.Command{
		Use:   "serve --config FILE [--listen ADDR] [--db URL] [targets]",
		Short: "Run the reconciliation daemon, the web dashboard and the approval endpoints",
		Long: `Run warden's long-running process: an HTTP server with /healthz, /readyz and the
approval channels' endpoints (Slack's POST /slack/interactions when slack: is configured:
requests are posted to slack.channel with Approve and Deny buttons, and each message
follows its request to the end), and
a worker that, within seconds of an approval request reaching its quorum, applies that
action with the same code as 'warden apply': drift re-check, intent, call, verification,
audit. It also moves multi-step fixes on when their next step is due (an access-key
rotation's grace period) and resolves actions an interrupted run left applying.

Slack's bot token and signing secret come from $WARDEN_SLACK_BOT_TOKEN and
$WARDEN_SLACK_SIGNING_SECRET, else from the files slack.bot_token_file and
slack.signing_secret_file name (readable by their owner only): never from flags, never
printed. Requests whose signature, timestamp (5 minutes) or signer is wrong get 401.

It listens on serve.listen (default ` + config.DefaultServeListen + `), loopback only unless the
config sets serve.allow_remote: true. SIGTERM or SIGINT drains: the server stops taking
requests, the action in flight finishes and is recorded, nothing new starts; exit 0.

The live targets (--aws, --gcp-project, endpoints, or targets: in --config) say where the
fixes re-read and write, as for apply, and what the daemon reconciles: each kind of
target (aws, gcp, tls) is swept on its daemon.schedules cron entry, or on --schedule,
one unique job per scope (an account's IAM, a region's security groups, a project's
firewalls); each scope read evaluates only what changed, moves its findings on
(opened, resolved, unknown while it cannot be read) and queues one fix per planned
action through the same gates. Without a schedule nothing is swept on its own.
POST /v1/events takes CloudTrail events (EventBridge) and audit log entries (Pub/Sub
push) and reads each resource they name again; POST /v1/reconcile {"target": "aws"} or
{"uid": "arn:…"} reconciles now. Both want "Authorization: Bearer $WARDEN_EVENTS_TOKEN"
(or daemon.events_token_file) and are off without one. GET /metrics is Prometheus's
(docs/metrics.md). The web dashboard is served at / unless dashboard.enabled is false:
overview, findings (waive), approvals (approve, deny), actions (roll back), audit log,
reports. Its visitors authenticate with tokens ('warden token create') or an
authenticating proxy's headers (dashboard.proxy); authentication is off only on a
loopback address (dashboard.auth). The job queue is River, in the same database: on
PostgreSQL, several replicas share it and one of them (the leader) runs the schedules.
--dry-run plans and says what it would do, and applies nothing.`,
		Example: `  warden serve --config warden.yaml --aws --schedule "*/15 * * * *"
  WARDEN_EVENTS_TOKEN=$(cat /etc/warden/events.token) warden serve --config warden.yaml --db postgres://warden@db/warden
  warden serve --sim fixtures/acme/world.yaml --schedule "@every 5m" --dry-run --db /tmp/demo.db
  WARDEN_ACTOR=bob warden approve apr-1a2b3c4d5e6f    # the worker applies it within seconds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := a.openRemediation(cmd, &rf, true)
			if err != nil {
				return err
			}
			defer r.Close()
			return a.serve(cmd.Context(), r, serveFlags{listen: listen, maxActions: maxActions, maxPerAcct: maxPerAcct, daemon: df})
		},
	}
	rf.pf.register(cmd)
	rf.tf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&rf.dbPath, "db", "", "warden's database (default the config's db:, else $XDG_STATE_HOME/warden/warden.db)")
	f.StringVar(&listen, "listen", "", "address to listen on (default serve.listen, else "+config.DefaultServeListen+")")
	f.IntVar(&maxActions, "max-actions", 25, "blast-radius cap: the most actions one pass applies")
	f.IntVar(&maxPerAcct, "max-per-account", 10, "blast-radius cap: the most actions one pass applies in one account")
	f.StringVar(&df.schedule, "schedule", "", "sweep the targets on this cron schedule (\"*/15 * * * *\", \"@every 1h\") unless daemon.schedules names one")
	f.BoolVar(&df.dryRun, "dry-run", false, "reconcile and plan, never apply: say what would be done")
	f.IntVar(&df.workers, "workers", 0, "jobs this replica works at once (default 4)")
	return cmd
}

// serveFlags are warden serve's own flags.
type serveFlags struct {
	listen                 string
	maxActions, maxPerAcct int
	daemon                 daemonFlags
}

// serve wires warden serve: the machine that applies fixes, the channels (Slack, the
// dashboard), the daemon and the scheduled tasks under one loop (reconcile/daemon.Loop),
// and the HTTP server of their routes; it runs them until ctx ends.
func (a *app) serve(ctx context.Context, r *remediation, sf serveFlags) error {
	addr := cmp.Or(sf.listen, r.cfg.Serve.Listen, config.DefaultServeListen)
	if !isLoopback(addr) && !r.cfg.Serve.AllowRemote {
		return usageErr(fmt.Errorf("listen %s is not a loopback address: set serve.allow_remote: true in the config to serve beyond this machine", addr))
	}
	mo := machineOptions(r, a.log, sf)
	m := remediate.New(mo)
	dryRun := sf.daemon.dryRun || r.cfg.Daemon.DryRun
	// The loop is made last; the channels wake it as soon as a decision is recorded, so
	// that what reached its quorum is applied at once, not at the next pass.
	var loop *daemon.Loop
	wake := func(string) { loop.Wake() }
	routes := map[string]http.Handler{}
	endpoints := "healthz, readyz"
	slackHandler, syncers, err := a.mountSlack(r, m, wake, routes)
	if err != nil {
		return err
	}
	if slackHandler != nil {
		endpoints += ", slack/interactions"
	}
	tasks, err := a.reportsTasks(ctx, r)
	if err != nil {
		return err
	}
	d, stopTracing, err := a.openDaemon(ctx, r, m, sf.daemon, routes, tasks)
	if err != nil {
		return err
	}
	// After the daemon's last job: its spans are flushed, within a bound.
	defer func() {
		if err := stopTracing(context.WithoutCancel(ctx)); err != nil {
			a.log.Warn("traces: the last spans were not sent", "err", err)
		}
	}()
	if r.cfg.Dashboard.IsEnabled() {
		dash, err := a.openDashboard(r, mo, m, isLoopback(addr), dryRun, wake)
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
	loop = daemon.NewLoop(daemon.LoopOptions{Machine: m, DryRun: dryRun, Syncers: syncers, Daemon: d, Tasks: tasks, Logger: a.log})
	srv := serve.New(serve.Options{Routes: routes, Logger: a.log,
		Ready: func(ctx context.Context) error { _, err := r.st.Scans(ctx, 1); return err }})
	replica := ""
	if d != nil {
		replica = d.ID()
	}
	return a.runServe(ctx, srv, addr, endpoints, replica, loop, slackHandler)
}

// runServe listens on addr and runs the HTTP server and the loop until ctx ends (or the
// listener fails), and drains both. It says what it serves, and as which replica it
// reconciles when there is a daemon.
func (a *app) runServe(ctx context.Context, srv *serve.Server, addr, endpoints, replica string, loop *daemon.Loop, slackHandler *slackgate.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	fmt.Fprintf(a.stderr, "warden serve: listening on http://%s (%s)\n", ln.Addr(), endpoints)
	if replica != "" {
		fmt.Fprintf(a.stderr, "warden serve: reconciling as replica %s\n", replica)
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
	a.log.Info("serve stopped", "passes", done, "failed_passes", failed)
	return nil
}

// machineOptions are the options of serve's remediation machine. The budget is shared
// by every run on the store: the daemon's jobs and the loop apply one action at a time.
func machineOptions(r *remediation, log *slog.Logger, sf serveFlags) remediate.Options {
	dc := r.cfg.Daemon.WithDefaults()
	return remediate.Options{Store: r.st, Log: r.log, Gate: r.gate, Gates: r.cfg.Gates, Registry: r.reg,
		Observer: r.clouds.readers, Engine: r.eng, Actor: r.actor, Logger: log,
		Versions: scan.VersionEvents(r.eng, r.cfg.File, r.cfg.Version),
		Limits: remediate.Limits{MaxActions: sf.maxActions, MaxPerAccount: sf.maxPerAcct,
			PerHour: dc.MaxFixesPerHour, PerAccountPerHour: dc.MaxFixesPerAccountPerHour, PauseAfterFailures: dc.PauseAfterFailures},
		// Replicas apply side by side: an action another one is applying is
		// interrupted only once a rescued job could have taken it over.
		InFlightLease: dc.RescueAfter}
}

// mountSlack mounts the Slack channel when the config has a slack: section: its
// secrets from the environment or the files the config names, a notifier that wakes the
// loop on each decision (and syncs the messages after each pass), and the interaction
// endpoint. Without the section: nothing.
func (a *app) mountSlack(r *remediation, m *remediate.Machine, wake func(string), routes map[string]http.Handler) (*slackgate.Handler, []daemon.Syncer, error) {
	if r.cfg.Slack == nil {
		return nil, nil, nil
	}
	secrets, err := slackgate.LoadSecrets(*r.cfg.Slack, os.Getenv)
	if err != nil {
		return nil, nil, usageErr(err)
	}
	n, err := slackgate.NewNotifier(slackgate.Options{Config: *r.cfg.Slack, Identities: r.cfg.Identities, Secrets: secrets,
		Store: r.st, Gate: r.gate, Actions: m, Logger: a.log, OnDecision: wake})
	if err != nil {
		return nil, nil, usageErr(err)
	}
	h := slackgate.NewHandler(n)
	routes["POST /slack/interactions"] = h
	return h, []daemon.Syncer{n}, nil
}

// openDashboard builds the web dashboard over serve's store, gate and machine. A
// rollback from the pages runs through a machine like serve's own, acting as the
// person who asked: the audit log names them. Without live targets, or in a dry run,
// the pages offer no rollback.
func (a *app) openDashboard(r *remediation, mo remediate.Options, m *remediate.Machine, loopback, dryRun bool, wake func(string)) (*dashboard.Dashboard, error) {
	var policies []string
	for _, p := range r.eng.Policies() {
		policies = append(policies, p.ID)
	}
	_, verifier, err := (&auditFlags{}).key(false)
	if err != nil {
		return nil, err
	}
	var rollback func(ctx context.Context, actor, id string) (remediate.Item, error)
	if !r.targets.Empty() && !dryRun {
		rollback = func(ctx context.Context, actor, id string) (remediate.Item, error) {
			o := mo
			o.Actor = actor
			return remediate.New(o).Rollback(ctx, id)
		}
	}
	// A report is gathered from the history as 'warden report' gathers it, with the
	// waivers as the file holds them now (the pages may have added some).
	report := func(ctx context.Context, w io.Writer, framework, format string) error {
		fw, err := compliance.Lookup(framework)
		if err != nil {
			return err
		}
		wr, err := render.New(format)
		if err != nil {
			return err
		}
		eo, err := evidenceOptions(r)
		if err != nil {
			return err
		}
		doc, err := evidence.Gather(ctx, r.st, r.log, fw, eo)
		if err != nil {
			return err
		}
		return wr.Write(w, doc)
	}
	d, err := dashboard.New(dashboard.Options{Store: r.st, Log: r.log, Gate: r.gate, Actions: m, Rollback: rollback,
		Verifier: verifier, WaiverFile: r.cfg.Waivers, Policies: policies, Report: report, Formats: render.Formats(),
		Config: r.cfg.Dashboard, Loopback: loopback, LocalActor: r.actor, OnDecision: wake, Logger: a.log})
	if err != nil {
		return nil, usageErr(err)
	}
	return d, nil
}
