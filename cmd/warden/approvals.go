package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate/show"
	"github.com/warden-sec/warden/store"
)

// gateFlags are the flags every approvals command shares: where the requests are kept
// and where the rules (gates: in the config) come from.
type gateFlags struct{ db dbFlags }

func (gf *gateFlags) register(cmd *cobra.Command) {
	gf.db.register(cmd, dbHelp, "YAML config whose gates: section lists the approvers and rules")
}

// open opens the store holding the requests and the gate over it. The database must
// exist: approval requests are made by warden apply, so a missing one is a wrong --db.
func (gf *gateFlags) open(ctx context.Context) (*gates.Gate, *store.Store, error) {
	cfg, st, err := gf.db.open(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	log := audit.New(st, audit.Options{Now: time.Now})
	return gates.New(st, log, cfg.Gates, time.Now), st, nil
}

func (a *app) approvalsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the approval requests of actions that wait for approvers",
		Long: `Approval requests are made by 'warden apply --confirm' for actions whose risk the
gates: section of the config does not apply automatically. Each waits for its quorum of
distinct approvers ('warden approve ID'); a deny by any approver ends it
('warden deny ID --reason TEXT'); unanswered, it expires. The requester never decides.`,
	}
	cmd.AddCommand(a.approvalsListCmd())
	return cmd
}

func (a *app) approvalsListCmd() *cobra.Command {
	var gf gateFlags
	var format string
	var all, wide bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List pending approval requests (--all: every request)",
		Long: `List approval requests: each with its action's remediator, target and part, its risk,
who requested it, the decisions so far, the quorum it needs and when it expires.

Pending requests past their expiry are marked expired first (and audited), so that the
list never shows as open what can no longer be approved.`,
		Example: `  warden approvals list
  warden approvals list --all --format json --config warden.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			g, st, err := gf.open(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			reqs, err := g.Current(cmd.Context(), all)
			if err != nil {
				return err
			}
			return writeList(a.stdout, format, "requests", reqs, show.RequestTable(all, wide))
		},
	}
	gf.register(cmd)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	cmd.Flags().BoolVar(&all, "all", false, "list every request, decided, expired and voided ones too")
	cmd.Flags().BoolVar(&wide, "wide", false, "print every column whole (default: fit the terminal, else 100 columns)")
	return cmd
}

func (a *app) approveCmd() *cobra.Command {
	return a.decisionCmd(&cobra.Command{
		Use:   "approve ID",
		Short: "Approve an approval request (as $WARDEN_ACTOR, or the OS user)",
		Long: `Approve an approval request as $WARDEN_ACTOR, or else the OS user name, who must be listed
under gates.approvers and must not be its requester. Each approver approves once; the
request is approved when its quorum of distinct approvers has; its action runs within
seconds under a warden serve on the same database, else on the next 'warden apply --confirm'.

A refusal (self-approval, not an approver, already decided, expired, voided) exits 2
with the reason.`,
		Example: `  WARDEN_ACTOR=carol warden approve apr-3f9a2c1b7d4e --reason "change ticket CHG-1234"`,
	}, true, "why you approve (recorded with the decision and in the audit log)")
}

func (a *app) denyCmd() *cobra.Command {
	return a.decisionCmd(&cobra.Command{
		Use:   "deny ID --reason TEXT",
		Short: "Deny an approval request (as $WARDEN_ACTOR, or the OS user)",
		Long: `Deny an approval request as $WARDEN_ACTOR, or else the OS user name, who must be listed
under gates.approvers and must not be its requester. A deny by any approver ends the
request: its action does not run. A deny must say why.

A refusal (self-denial, not an approver, already decided, expired, voided) exits 2 with
the reason.`,
		Example: `  WARDEN_ACTOR=carol warden deny apr-3f9a2c1b7d4e --reason "breaks the nightly export"`,
	}, false, "why you deny (required; recorded with the decision and in the audit log)")
}

// decisionCmd makes cmd record the actor's decision on the request its argument names
// (approve, or deny: then --reason is required) through the CLI channel, and say where
// the request stands.
func (a *app) decisionCmd(cmd *cobra.Command, approve bool, reasonHelp string) *cobra.Command {
	var gf gateFlags
	var reason, signKey string
	cmd.Args = cobra.ExactArgs(1)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		who, err := audit.CurrentActor()
		if err != nil {
			return usageErr(err)
		}
		g, st, err := gf.open(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		r, err := g.DecideCLI(cmd.Context(), args[0], who, approve, reason, signKey, a.stderr)
		if err != nil {
			// A refusal (gates.ErrSelfApproval, ErrNotApprover, …) is the user's to act on:
			// exit 2 with its reason, as for any other error.
			return usageErr(err)
		}
		show.Decided(a.stdout, r, daemon.Applier(cmd.Context(), st))
		return nil
	}
	gf.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", reasonHelp)
	cmd.Flags().StringVar(&signKey, "sign-key", "", "private SSH key file to sign the decision with (default: a key of yours gates.signers lists, from ssh-agent)")
	if !approve {
		cmd.MarkFlagRequired("reason")
	}
	return cmd
}
