package main

import (
	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/termesc"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check a config file",
		Long: `Commands about warden's YAML config: 'warden config check FILE' (or --config FILE)
validates one and names every problem at once. docs/config.md describes the sections.`,
	}
	cmd.AddCommand(a.configCheckCmd())
	return cmd
}

func (a *app) configCheckCmd() *cobra.Command {
	var (
		format, cfgFlag string
		opts            config.CheckOptions
	)
	cmd := &cobra.Command{
		Use:   "check FILE | --config FILE",
		Short: "Validate a config and name every problem, and where each secret comes from",
		Long: `Read the config FILE once and report every problem in it, each as

  FILE:LINE: FIELD: what is wrong

sorted by line: YAML syntax (warden then stops: nothing after it can be read), unknown
keys (with the key meant, when it is near one), wrong types, and bad values in every
section (settings, policies, db, fail_on, targets, gates, serve, rotation, certs, slack,
identities, daemon, dashboard, reports). A section with problems does not hide the others'.
Settings are judged against the policies that read them, as warden scan judges them: the
built-in pack, the config's policies: directories and --policies.

Secrets never come from the config: a password written in db:, or credentials in an
endpoint's URL, are problems. Each secret comes from the environment, else from a file
readable by its owner only:

  Slack bot token        $WARDEN_SLACK_BOT_TOKEN, else slack.bot_token_file
  Slack signing secret   $WARDEN_SLACK_SIGNING_SECRET, else slack.signing_secret_file
  events token           $WARDEN_EVENTS_TOKEN, else daemon.events_token_file
  database password      $PGPASSWORD, else the passfile (passfile=, $PGPASSFILE, ~/.pgpass)
  audit checkpoint key   $WARDEN_AUDIT_KEY, else the key file (--audit-key)
  certs archive key      certs.archive_key_file, else $WARDEN_CERTS_ARCHIVE_KEY
  replica signing key    $WARDEN_REPLICA_KEY, else gates.replica_key_file (signs web and Slack decisions)

The check says where each one was found (the variable's name, the file and its mode),
whether warden would accept it, and never what it is. A secret warden needs and cannot
read (the Slack ones with a slack: section, the archive key with a certs: section), or
would refuse (a file its group or others may read, a token of the wrong form), is a
problem; a secret file warden reads whatever its mode is a warning.

Exit codes: 0 no problem (warnings may be printed), 2 problems, or the file cannot be
read.`,
		Example: `  warden config check warden.yaml
  warden config check --config warden.yaml
  warden config check warden.yaml --format json | jq '.problems[] | "\(.line): \(.message)"'

  # In CI, away from the secrets: the file alone
  warden config check deploy/warden.yaml --skip-secrets`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			file, err := config.CheckTarget(args, cfgFlag)
			if err != nil {
				return usageErr(err)
			}
			r := config.Check(cmd.Context(), file, opts)
			if format == "json" {
				err = writeJSON(a.stdout, r)
			} else {
				// A config quotes what it holds: no control character reaches the terminal raw.
				err = r.WriteText(a.stdout, termesc.EscapeLines)
			}
			if err != nil {
				return err
			}
			if !r.OK() {
				return &exitErr{code: exitError}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfgFlag, "config", "", "the config file to check, as every command takes it (or give it as the argument)")
	f.StringVarP(&format, "format", "f", "text", "output format: text or json")
	f.StringArrayVar(&opts.PolicyDirs, "policies", nil, "directory of extra Rego policies whose settings are known too (repeatable)")
	f.BoolVar(&opts.NoBuiltin, "no-builtin", false, "judge the settings without the built-in policy pack")
	f.BoolVar(&opts.SkipSecrets, "skip-secrets", false, "check the file alone: do not look for the secrets")
	f.StringVar(&opts.AuditKeyFile, "audit-key", "", "the checkpoint signing key file to look at (default $XDG_STATE_HOME/warden/audit.key)")
	return cmd
}
