package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/demo"
	"github.com/warden-sec/warden/internal/tty"
	"github.com/warden-sec/warden/scan"
)

func (a *app) demoCmd() *cobra.Command {
	var (
		dir, framework, nowFlag string
		interactive             bool
	)
	cmd := &cobra.Command{
		Use:   "demo [--dir FOLDER]",
		Short: "Run one whole reconciliation on a simulated organisation, in under a minute",
		Long: `Run one whole reconciliation of the bundled example organisation, acme (3 AWS
accounts in an organisation, 2 GCP projects), served by warden's cloud simulator inside
this process and read through the official AWS and Google SDK clients. Nothing outside
the simulator is called; nothing needs setting up.

The steps are the ones warden runs on a real organisation:
  1. collect   read every account and project
  2. evaluate  run the policy pack, record the scan in the history
  3. plan      turn the open findings into the smallest fixes, each with its risk
  4. apply     fixes of low risk run at once: re-read, changed, read again, verified
  5. approve   the others wait for approval: on a terminal you are asked, fix by fix,
               with the exact change shown (approve, deny or skip); without a terminal
               they stay pending and the 'warden approve' commands are written down
  6. apply     what you approved runs (critical fixes need a second approver)
  7. verify    the clouds are read and evaluated again; the audit log is verified
               and a signed checkpoint of it is kept
  8. report    an HTML compliance report of the history

Everything lands in one folder (--dir, default ./warden-demo): the config, the store
(SQLite: history, actions, approvals, audit log), the snapshots, the report, the audit
key and checkpoint, and the simulated clouds as the demo left them (world-now.yaml), so
that 'warden serve --sim' continues where the demo stopped. A second run empties the
folder it made before and starts fresh; a folder the demo did not make is never touched.

You approve as $WARDEN_ACTOR, or else your OS user name; the fixes are requested by
"` + demo.Requester + `", and "` + demo.SecondApprover + `" is the second approver critical fixes need.`,
		Example: `  warden demo
  warden demo --dir /tmp/acme --framework soc2
  warden demo --interactive=false    # leave every approval pending, print the commands`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("interactive") {
				interactive = tty.Input(a.stdin)
			}
			fw, err := compliance.Lookup(framework)
			if err != nil {
				return fmt.Errorf("--framework: %w", err)
			}
			now, err := scan.ParseNow(nowFlag)
			if err != nil {
				return err
			}
			you, err := audit.CurrentActor()
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("log-level") {
				// The demo's own lines say what a warning would (an unread scope, a failed fix).
				a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
			}
			return demo.Run(cmd.Context(), demo.Options{Dir: dir, Framework: fw, Interactive: interactive, You: you,
				Stdout: a.stdout, Stdin: a.stdin, Logger: a.log, Version: version(), Collect: a.collectOptions(nil), Now: now})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "warden-demo", "the folder everything is written to (made if missing; emptied first if an earlier demo made it)")
	f.StringVar(&framework, "framework", "cis-aws-3.0", "the framework of the compliance report ('warden report --list')")
	f.BoolVar(&interactive, "interactive", false, "ask for each approval on standard input (default: when it is a terminal)")
	f.StringVar(&nowFlag, "now", "", "judge ages (keys, certificates) as of this RFC 3339 time instead of now: acme ages with the calendar")
	_ = f.MarkHidden("now")
	return cmd
}
