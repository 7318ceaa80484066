package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/internal/termesc"
)

// openTokens opens the token store of the database warden serve uses; creating a token
// creates the database if needed (it may be the first thing set up), listing and
// revoking need it to exist.
func openTokens(cmd *cobra.Command, db *dbFlags, create bool) (*dashboard.Tokens, func(), error) {
	_, st, err := db.open(cmd.Context(), create)
	if err != nil {
		return nil, nil, err
	}
	return dashboard.NewTokens(st, audit.New(st, audit.Options{Now: time.Now}), time.Now), func() { _ = st.Close() }, nil
}

func (a *app) tokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke the web dashboard's bearer tokens",
		Long: `The dashboard warden serve serves (unless authentication is off on loopback) takes a
bearer token in "Authorization: Bearer TOKEN", or exchanges one for a session cookie at
its login form. A token acts as its name — the identity approvers and the audit log
know, the same as $WARDEN_ACTOR on the CLI, so that the requester of a fix cannot
approve it from the web either — with one role:

  viewer    reads every page
  approver  also approves and denies requests, and waives findings
  admin     also rolls fixes back and revokes tokens

A token is printed once, when it is created; warden keeps only its SHA-256. Creating
and revoking tokens is audited.`,
	}
	cmd.AddCommand(a.tokenCreateCmd(), a.tokenListCmd(), a.tokenRevokeCmd())
	return cmd
}

func (a *app) tokenCreateCmd() *cobra.Command {
	var db dbFlags
	var role, name string
	cmd := &cobra.Command{
		Use:   "create --role viewer|approver|admin [--name NAME]",
		Short: "Create a token and print it (once)",
		Long: `Create a dashboard token with a role and print it on standard output, alone on its line:
it is shown this once and cannot be read back. The name is the identity the token acts
as (default: the token's id). Audited, as $WARDEN_ACTOR or the OS user.`,
		Example: `  warden token create --role approver --name carol --config warden.yaml > carol.token
  curl -H "Authorization: Bearer $(cat carol.token)" http://127.0.0.1:8080/approvals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := dashboard.ParseRole(role)
			if err != nil {
				return usageErr(fmt.Errorf("--role: %w", err))
			}
			who, err := audit.CurrentActor()
			if err != nil {
				return usageErr(err)
			}
			ts, closeDB, err := openTokens(cmd, &db, true)
			if err != nil {
				return err
			}
			defer closeDB()
			t, secret, err := ts.Create(cmd.Context(), name, r, who)
			if err != nil {
				return usageErr(err)
			}
			fmt.Fprintln(a.stdout, secret)
			fmt.Fprintf(a.stderr, "warden token: created %s for %s (%s); it is shown this once\n", t.ID, termesc.Escape(t.Name), t.RoleName)
			return nil
		},
	}
	db.register(cmd, dbHelp, dbConfigHelp)
	cmd.Flags().StringVar(&role, "role", "", "viewer, approver or admin (required)")
	cmd.Flags().StringVar(&name, "name", "", "the identity the token acts as (default its id)")
	cmd.MarkFlagRequired("role")
	return cmd
}

func (a *app) tokenListCmd() *cobra.Command {
	var db dbFlags
	var format string
	cmd := &cobra.Command{
		Use:   "list [--format table|json]",
		Short: "List the tokens (never the tokens themselves)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			ts, closeDB, err := openTokens(cmd, &db, false)
			if err != nil {
				return err
			}
			defer closeDB()
			list, err := ts.List(cmd.Context())
			if err != nil {
				return err
			}
			return writeList(a.stdout, format, "tokens", list, dashboard.WriteTokens)
		},
	}
	db.register(cmd, dbHelp, dbConfigHelp)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}

func (a *app) tokenRevokeCmd() *cobra.Command {
	var db dbFlags
	cmd := &cobra.Command{
		Use:     "revoke ID",
		Short:   "Revoke a token: it and the sessions it opened stop working at once",
		Example: `  warden token revoke tok-1a2b3c4d`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			who, err := audit.CurrentActor()
			if err != nil {
				return usageErr(err)
			}
			ts, closeDB, err := openTokens(cmd, &db, false)
			if err != nil {
				return err
			}
			defer closeDB()
			t, err := ts.Revoke(cmd.Context(), args[0], who)
			if err != nil {
				return usageErr(err)
			}
			fmt.Fprintf(a.stdout, "token %s (%s, %s) revoked\n", t.ID, termesc.Escape(t.Name), t.RoleName)
			return nil
		},
	}
	db.register(cmd, dbHelp, dbConfigHelp)
	return cmd
}
