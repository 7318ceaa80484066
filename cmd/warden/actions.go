package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/show"
	"github.com/warden-sec/warden/remediators"
)

// actionFlags are the flags of the commands over recorded actions.
type actionFlags struct{ dbFlags }

func (af *actionFlags) register(cmd *cobra.Command) {
	af.dbFlags.register(cmd, "warden's database (default the config's db:, else $XDG_STATE_HOME/warden/warden.db)", "YAML config (db:, gates:)")
}

// machine opens the database of recorded actions and a Machine over it without clouds
// (listing and pausing need none).
func (a *app) machine(cmd *cobra.Command, af *actionFlags) (*remediate.Machine, func(), error) {
	who, err := audit.CurrentActor()
	if err != nil {
		return nil, nil, usageErr(err)
	}
	cfg, st, err := af.open(cmd.Context(), true)
	if err != nil {
		return nil, nil, err
	}
	log := audit.New(st, audit.Options{Now: time.Now})
	m := remediate.New(remediate.Options{Store: st, Log: log, Gates: cfg.Gates, Actor: who, Logger: a.log})
	return m, func() { _ = st.Close() }, nil
}

func (a *app) actionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "actions", Short: "Show the fixes warden planned and applied"}
	var (
		af     actionFlags
		format string
	)
	list := &cobra.Command{
		Use:   "list [--format table|json]",
		Short: "List every recorded action with its state and history",
		Long: `List every recorded action: id, remediator, target, part, risk and state (planned,
pending_approval, approved, denied, refused, applying, verified, failed, voided,
rolled_back), with its history in JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, closeDB, err := a.machine(cmd, &af)
			if err != nil {
				return err
			}
			defer closeDB()
			rs, err := m.Actions(cmd.Context())
			if err != nil {
				return err
			}
			if format == "json" {
				if rs == nil {
					rs = []*remediate.Record{}
				}
				return writeJSON(a.stdout, rs)
			}
			if format != "table" {
				return usageErr(fmt.Errorf("--format: want table or json, not %q", format))
			}
			return show.Actions(a.stdout, rs)
		},
	}
	af.register(list)
	list.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	cmd.AddCommand(list)
	return cmd
}

func (a *app) rollbackCmd() *cobra.Command {
	var rf remediationFlags
	cmd := &cobra.Command{
		Use:   "rollback ACTION_ID [targets]",
		Short: "Undo an applied fix from its stored before-state",
		Long: `Undo an applied and verified fix: restore the before-state the plan recorded, where the
cloud allows it, then observe the target again to check it is back. A fix with no way
back (a deleted login profile, a deleted certificate) is refused with the reason. The
action's cloud is opened as the targets say (flags, the config's targets:), else with AWS's
standard chain; an action in GCP needs --gcp-project or --gcp-endpoint. Audited.`,
		Example: `  warden rollback act-1a2b3c4d5e6f7a8b`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rf.action = args[0]
			r, err := a.openRemediation(cmd, &rf, true)
			if err != nil {
				return err
			}
			defer r.Close()
			it, err := remediate.New(r.MachineOptions(a.log)).Rollback(cmd.Context(), args[0])
			if err != nil {
				if errors.Is(err, remediators.ErrNoRollback) || errors.Is(err, remediate.ErrNoSuchAction) || errors.Is(err, remediate.ErrPaused) {
					return usageErr(err)
				}
				return usageErr(fmt.Errorf("rollback: %w", err))
			}
			fmt.Fprintf(a.stdout, "%s: %s\n", it.Action, it.Outcome)
			return nil
		},
	}
	rf.register(cmd)
	return cmd
}

func (a *app) pauseCmd() *cobra.Command {
	var (
		af     actionFlags
		reason string
	)
	cmd := &cobra.Command{
		Use:   "pause --reason TEXT",
		Short: "Stop every apply and rollback until 'warden resume'",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.setPause(cmd, &af, true, reason, "remediation paused: apply and rollback refuse to run until warden resume")
		},
	}
	af.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded in the audit log; required)")
	return cmd
}

func (a *app) resumeCmd() *cobra.Command {
	var af actionFlags
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Lift a pause",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.setPause(cmd, &af, false, "", "remediation resumed")
		},
	}
	af.register(cmd)
	return cmd
}

// setPause pauses remediation (paused, with reason) or resumes it, and says so (done).
func (a *app) setPause(cmd *cobra.Command, af *actionFlags, paused bool, reason, done string) error {
	m, closeDB, err := a.machine(cmd, af)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := m.SetPause(cmd.Context(), paused, reason); err != nil {
		return usageErr(err)
	}
	fmt.Fprintln(a.stdout, done)
	return nil
}
