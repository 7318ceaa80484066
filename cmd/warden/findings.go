package main

import (
	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/scan"
)

func (a *app) findingsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "findings",
		Short: "Work with the findings of recorded scans",
	}
	cmd.AddCommand(a.findingsDiffCmd())
	return cmd
}

func (a *app) findingsDiffCmd() *cobra.Command {
	var (
		df     dbFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "Show new, resolved, still open and unknown findings between the last two scans",
		Long: `Show how findings moved between the last two recorded scans.

  new       found now, not in the scan before
  resolved  in the scan before, gone now, and its scope was read in full
  open      in both
  unknown   in the scan before; its scope could not be read now, so it is neither
            confirmed nor resolved`,
		Example: `  warden scan --snapshot monday.json && warden scan --snapshot tuesday.json
  warden findings diff
  warden findings diff --config warden.yaml --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Reading the history never creates one: a misspelt --db is an error.
			_, st, err := df.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer st.Close()
			prev, cur, d, err := scan.DiffLatest(cmd.Context(), st)
			if err != nil {
				return err
			}
			return tableOrJSON(format, func() error { report.DiffTable(a.stdout, prev, cur, d); return nil },
				func() error { return report.DiffJSON(a.stdout, prev, cur, d) })
		},
	}
	df.register(cmd, "scan history: a SQLite file, a postgres:// URL or a PostgreSQL key=value DSN (default: the config's db:, else $XDG_STATE_HOME/warden/warden.db)",
		"YAML config whose db: names the scan history")
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}
