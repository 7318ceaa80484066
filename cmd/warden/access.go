package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/access"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
)

func (a *app) accessCmd() *cobra.Command {
	var o access.Options
	var format string
	cmd := &cobra.Command{
		Use:   "access SNAPSHOT [--principal ARN]...",
		Short: "Show what each IAM principal is granted against what it used, and the fix that would close the gap",
		Long: `Read a snapshot collected with usage (warden collect --aws-usage, or targets.aws.usage)
and show, per user, group and role: the services its policies grant and those it used,
every service or action unused for the window with its evidence ("never used since
tracking began on …", "last used …"), and the right-sizing fix the plan would offer.
Data that cannot speak for the window (not collected, incomplete, tracking younger than
the window) counts as used: nothing is ever called unused for lack of evidence.`,
		Example: `  warden collect --aws --aws-usage --out snap.json
  warden access snap.json
  warden access snap.json --principal arn:aws:iam::111111111111:role/deploy --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			if o.Registry, err = builtin.Registry(nil, nil); err != nil {
				return err
			}
			ps, err := access.Read(cmd.Context(), snapshot.NewReader(f, args[0], snapshot.WithContext(cmd.Context())), o)
			if err != nil {
				return err
			}
			return tableOrJSON(format, func() error { return access.WriteText(a.stdout, ps, time.Now()) }, func() error { return access.WriteJSON(a.stdout, ps) })
		},
	}
	cmd.Flags().StringArrayVar(&o.Principals, "principal", nil, "only this user, group or role (its ARN; repeatable)")
	cmd.Flags().IntVar(&o.WindowDays, "window-days", 90, "days a grant must have gone unused to count as unused")
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}
