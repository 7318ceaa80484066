package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/env"
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
			ctx := cmd.Context()
			r, err := a.openRemediation(cmd, &rf, true)
			if err != nil {
				return err
			}
			defer r.Close()
			addr := listen
			if addr == "" {
				addr = r.Config.Serve.Listen
			}
			if addr == "" {
				addr = config.DefaultServeListen
			}
			if !isLoopback(addr) && !r.Config.Serve.AllowRemote {
				return usageErr(fmt.Errorf("listen %s is not a loopback address: set serve.allow_remote: true in the config to serve beyond this machine", addr))
			}
			// The budget is shared by every run on the store: the daemon's jobs and this
			// worker apply one action at a time.
			dc := r.Config.Daemon.WithDefaults()
			mo := remediate.Options{Store: r.Store, Log: r.Log, Gate: r.Gate, Gates: r.Config.Gates, Registry: r.Registry,
				Observer: remediate.Readers(r.Clouds.Readers), Engine: r.Engine, Actor: r.Actor, Logger: a.log,
				Versions: scan.VersionEvents(r.Engine, r.Config.File, r.Config.Version),
				Limits: remediate.Limits{MaxActions: maxActions, MaxPerAccount: maxPerAcct,
					PerHour: dc.MaxFixesPerHour, PerAccountPerHour: dc.MaxFixesPerAccountPerHour, PauseAfterFailures: dc.PauseAfterFailures},
				// Replicas apply side by side: an action another one is applying is
				// interrupted only once a rescued job could have taken it over.
				InFlightLease: dc.RescueAfter}
			m := remediate.New(mo)
			opts := serve.Options{Machine: m, Logger: a.log, Routes: map[string]http.Handler{},
				Ready: func(ctx context.Context) error { _, err := r.Store.Scans(ctx, 1); return err }}
			var srv *serve.Server
			var slackHandler *slackgate.Handler
			endpoints := "healthz, readyz"
			if r.Config.Slack != nil {
				secrets, err := slackgate.LoadSecrets(*r.Config.Slack, os.Getenv)
				if err != nil {
					return usageErr(err)
				}
				n, err := slackgate.NewNotifier(slackgate.Options{Config: *r.Config.Slack, Identities: r.Config.Identities, Secrets: secrets,
					Store: r.Store, Gate: r.Gate, Actions: m, Logger: a.log,
					// The worker applies what reached its quorum at once, not at its next tick.
					OnDecision: func(string) { srv.Wake() }})
				if err != nil {
					return usageErr(err)
				}
				slackHandler = slackgate.NewHandler(n)
				opts.Routes["POST /slack/interactions"] = slackHandler
				opts.Syncers = append(opts.Syncers, n)
				endpoints += ", slack/interactions"
			}
			reports, err := a.reportsTask(ctx, r)
			if err != nil {
				return err
			}
			var tasks []daemon.Task
			if reports != nil {
				tasks = append(tasks, *reports)
			}
			d, stopTracing, err := a.openDaemon(ctx, r, m, df, opts.Routes, tasks)
			if err != nil {
				return err
			}
			if d == nil && reports != nil {
				go a.runTask(ctx, *reports)
			}
			// After the daemon's last job: its spans are flushed, within a bound.
			defer func() {
				if err := stopTracing(context.WithoutCancel(ctx)); err != nil {
					a.log.Warn("traces: the last spans were not sent", "err", err)
				}
			}()
			opts.DryRun = df.dryRun || r.Config.Daemon.DryRun
			if r.Config.Dashboard.IsEnabled() {
				dash, err := a.openDashboard(r, mo, m, isLoopback(addr), opts.DryRun, func() { srv.Wake() })
				if err != nil {
					return err
				}
				opts.Routes["/"] = dash
				endpoints += ", dashboard at /"
				if !dash.AuthOn() {
					endpoints += " (authentication off: loopback only)"
				}
			}
			if opts.Routes["POST /v1/events"] != nil {
				endpoints += ", v1/events, v1/reconcile"
			}
			endpoints += ", metrics"
			srv = serve.New(opts)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
			fmt.Fprintf(a.stderr, "warden serve: listening on http://%s (%s)\n", ln.Addr(), endpoints)
			daemonDone := make(chan error, 1)
			if d != nil {
				fmt.Fprintf(a.stderr, "warden serve: reconciling as replica %s\n", d.ID())
				go func() { daemonDone <- d.Run(ctx, 30*time.Second) }()
			} else {
				daemonDone <- nil
			}
			err = srv.Run(ctx, ln)
			if derr := <-daemonDone; derr != nil && err == nil {
				err = derr
			}
			if slackHandler != nil {
				// Clicks acknowledged before the stop are decided and answered.
				slackHandler.Wait()
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			done, failed := srv.Passes()
			a.log.Info("serve stopped", "passes", done, "failed_passes", failed)
			return nil
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

// openDashboard builds the web dashboard over serve's store, gate and machine. A
// rollback from the pages runs through a machine like serve's own, acting as the
// person who asked: the audit log names them. Without live targets, or in a dry run,
// the pages offer no rollback.
func (a *app) openDashboard(r *env.Env, mo remediate.Options, m *remediate.Machine, loopback, dryRun bool, wake func()) (*dashboard.Dashboard, error) {
	var policies []string
	for _, p := range r.Engine.Policies() {
		policies = append(policies, p.ID)
	}
	_, verifier, err := (&auditFlags{}).key(false)
	if err != nil {
		return nil, err
	}
	var rollback func(ctx context.Context, actor, id string) (remediate.Item, error)
	if !r.Targets.Empty() && !dryRun {
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
		doc, err := evidence.Gather(ctx, r.Store, r.Log, fw, eo)
		if err != nil {
			return err
		}
		return wr.Write(w, doc)
	}
	d, err := dashboard.New(dashboard.Options{Store: r.Store, Log: r.Log, Gate: r.Gate, Actions: m, Rollback: rollback,
		Verifier: verifier, WaiverFile: r.Config.Waivers, Policies: policies, Report: report, Formats: render.Formats(),
		Config: r.Config.Dashboard, Loopback: loopback, LocalActor: r.Actor, OnDecision: func(string) { wake() }, Logger: a.log})
	if err != nil {
		return nil, usageErr(err)
	}
	return d, nil
}
