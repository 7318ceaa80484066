package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/reconcile/daemon"
)

func (a *app) statusCmd() *cobra.Command {
	var af actionFlags
	var format string
	cmd := &cobra.Command{
		Use:   "status [--format table|json]",
		Short: "Show how a running deployment converges: leader, queue, scopes, approvals",
		Long: `Show what warden serve's database says of the deployment: the replica leading the
job queue (it runs the schedules) and until when, whether remediation is paused, the
jobs waiting or running by kind, the last read of every scope and its outcome (ok,
partial, failed: a failed scope's findings are unknown, not resolved), the approval
requests waiting for a decision, and the last signed audit checkpoint. It reads the
database only; it works with serve running or not.`,
		Example: `  warden status --db postgres://warden@db/warden
  warden status --format json | jq '.scopes[] | select(.status != "ok")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			_, st, err := af.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := daemon.ReadStatus(cmd.Context(), st)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(a.stdout, s)
			}
			return s.WriteText(a.stdout, time.Now())
		},
	}
	af.register(cmd)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}
