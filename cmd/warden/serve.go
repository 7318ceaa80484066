package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/serve"
	"github.com/warden-sec/warden/slackgate"
)

func (a *app) serveCmd() *cobra.Command {
	var rf remediationFlags
	var listen string
	var maxActions, maxPerAcct int
	cmd := &cobra.Command{
		Use:   "serve --config FILE [--listen ADDR] [--db URL] [targets]",
		Short: "Run the approval endpoints and apply what gets approved",
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
fixes re-read and write, as for apply.`,
		Example: `  warden serve --config warden.yaml --aws
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
				addr = r.cfg.Serve.Listen
			}
			if addr == "" {
				addr = config.DefaultServeListen
			}
			if !isLoopback(addr) && !r.cfg.Serve.AllowRemote {
				return usageErr(fmt.Errorf("listen %s is not a loopback address: set serve.allow_remote: true in the config to serve beyond this machine", addr))
			}
			m := remediate.New(remediate.Options{Store: r.st, Log: r.log, Gate: r.gate, Gates: r.cfg.Gates, Registry: r.reg,
				Observer: r.clouds.readers, Engine: r.eng, Actor: r.actor, Logger: a.log,
				Versions: scan.VersionEvents(r.eng, r.cfg.File, r.cfg.Version),
				Limits:   remediate.Limits{MaxActions: maxActions, MaxPerAccount: maxPerAcct}})
			opts := serve.Options{Machine: m, Logger: a.log, Routes: map[string]http.Handler{},
				Ready: func(ctx context.Context) error { _, err := r.st.Scans(ctx, 1); return err }}
			var srv *serve.Server
			var slackHandler *slackgate.Handler
			endpoints := "healthz, readyz"
			if r.cfg.Slack != nil {
				secrets, err := slackgate.LoadSecrets(*r.cfg.Slack, os.Getenv)
				if err != nil {
					return usageErr(err)
				}
				n, err := slackgate.NewNotifier(slackgate.Options{Config: *r.cfg.Slack, Identities: r.cfg.Identities, Secrets: secrets,
					Store: r.st, Gate: r.gate, Actions: m, Logger: a.log,
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
			srv = serve.New(opts)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
			fmt.Fprintf(a.stderr, "warden serve: listening on http://%s (%s)\n", ln.Addr(), endpoints)
			err = srv.Run(ctx, ln)
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
	return cmd
}
