package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/config"
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
			if format != "table" && format != "json" {
				return usageErr(fmt.Errorf("--format: unknown format %q (want table or json)", format))
			}
			cfg := &config.Config{}
			if af.configFile != "" {
				c, err := config.Load(af.configFile)
				if err != nil {
					return usageErr(err)
				}
				cfg = c
			}
			st, err := openHistory(cmd.Context(), af.dbPath, cfg, false)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := daemon.ReadStatus(cmd.Context(), st)
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			printStatus(a, s)
			return nil
		},
	}
	af.register(cmd)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}

func printStatus(a *app, s *daemon.Status) {
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	defer w.Flush()
	switch {
	case s.Leader == "":
		fmt.Fprintln(w, "leader:\tnone (no warden serve is reconciling)")
	case time.Until(s.LeaderUntil) < 0:
		fmt.Fprintf(w, "leader:\t%s (term ended %s ago: no replica alive?)\n", s.Leader, time.Since(s.LeaderUntil).Round(time.Second))
	default:
		fmt.Fprintf(w, "leader:\t%s (term until %s)\n", s.Leader, s.LeaderUntil.Format(time.RFC3339))
	}
	if s.Paused {
		fmt.Fprintf(w, "remediation:\tPAUSED by %s: %s\n", s.PausedBy, s.PauseReason)
	} else {
		fmt.Fprintln(w, "remediation:\trunning")
	}
	if s.Checkpoint != nil {
		fmt.Fprintf(w, "last checkpoint:\t%d entries, %s ago\n", s.Checkpoint.Size, time.Since(s.Checkpoint.At).Round(time.Second))
	} else {
		fmt.Fprintln(w, "last checkpoint:\tnone (warden audit checkpoint signs one)")
	}
	fmt.Fprintf(w, "pending approvals:\t%d\n", len(s.PendingApproval))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "QUEUE\tSTATE\tJOBS")
	if len(s.Queue) == 0 {
		fmt.Fprintln(w, "(empty)\t\t")
	}
	for _, c := range s.Queue {
		fmt.Fprintf(w, "%s\t%s\t%d\n", c.Kind, c.State, c.Count)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SCOPE\tSTATUS\tRESOURCES\tREAD\tLAST COMPLETE")
	for _, sc := range s.Scopes {
		ok := "never"
		if !sc.OKAt.IsZero() {
			ok = ago(sc.OKAt)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s", sc.Scope, sc.Status, sc.Resources, ago(sc.ReadAt), ok)
		if sc.Error != "" {
			line += "\t" + sc.Error
		}
		fmt.Fprintln(w, line)
	}
}

func ago(t time.Time) string { return time.Since(t).Round(time.Second).String() + " ago" }
