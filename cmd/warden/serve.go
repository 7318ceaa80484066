package main

import (
	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/serve"
)

func (a *app) serveCmd() *cobra.Command {
	var rf remediationFlags
	var so serve.RunOptions
	cmd := &cobra.Command{
		Use:   "serve --config FILE [--listen ADDR] [--db URL] [targets]",
		Short: "Run the reconciliation daemon, the web dashboard and the approval endpoints",
		Long: `Run warden's long-running process: an HTTP server with /healthz, /readyz and the
approval channels' endpoints (Slack's POST /slack/interactions when slack: is configured:
requests are posted to slack.channel with Approve and Deny buttons, and each message
follows its request to the end), and
a worker that, within seconds of an approval request reaching its quorum, applies that
action as 'warden apply' does, moves multi-step fixes on when their next step is due and
resolves actions an interrupted run left applying. It logs (--log-level info by default)
each fix taken up and its end, and warns of one whose cloud it has no target for.

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
			if !cmd.Flags().Changed("log-level") {
				a.log = serve.Logger(a.stderr)
			}
			r, err := a.openRemediation(cmd, &rf, true)
			if err != nil {
				return err
			}
			defer r.Close()
			so.Config, so.Store, so.Log, so.Gate, so.Engine, so.Registry = r.Config, r.Store, r.Log, r.Gate, r.Engine, r.Registry
			so.Readers, so.Targets, so.Actor, so.Version, so.Stderr, so.Logger = r.Clouds.Readers, r.Targets, r.Actor, version(), a.stderr, a.log
			return serve.Run(cmd.Context(), so)
		},
	}
	rf.pf.register(cmd)
	rf.tf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&rf.dbPath, "db", "", "warden's database (default the config's db:, else $XDG_STATE_HOME/warden/warden.db)")
	f.StringVar(&so.Listen, "listen", "", "address to listen on (default serve.listen, else "+config.DefaultServeListen+")")
	f.IntVar(&so.MaxActions, "max-actions", 25, "blast-radius cap: the most actions one pass applies")
	f.IntVar(&so.MaxPerAccount, "max-per-account", 10, "blast-radius cap: the most actions one pass applies in one account")
	f.StringVar(&so.Schedule, "schedule", "", "sweep the targets on this cron schedule (\"*/15 * * * *\", \"@every 1h\") unless daemon.schedules names one")
	f.BoolVar(&so.DryRun, "dry-run", false, "reconcile and plan, never apply: say what would be done")
	f.IntVar(&so.Workers, "workers", 0, "jobs this replica works at once in each of its queues of fixes, the sweeps' and the events', and collections judging what they read at once, at most one per core (default 4)")
	return cmd
}
