package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/engine/inspect"
)

func (a *app) policyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "List and test policies",
	}
	cmd.AddCommand(a.policyListCmd(), a.policyTestCmd(), a.policySettingsCmd())
	return cmd
}

func (a *app) policyListCmd() *cobra.Command {
	var (
		pf        policyFlags
		format    string
		framework string
		typ       string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show the policies: ids, titles, severities, resource types and frameworks",
		Example: `  warden policy list
  warden policy list --framework cis-aws-3.0
  warden policy list --policies ./our-policies --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, eng, err := a.loadPolicies(cmd, &pf)
			if err != nil {
				return err
			}
			list, err := inspect.Policies(eng, framework, typ)
			if err != nil {
				return usageErr(fmt.Errorf("--framework: %w", err))
			}
			return tableOrJSON(format, func() error { return inspect.PoliciesTable(a.stdout, list) },
				func() error { return inspect.PoliciesJSON(a.stdout, list) })
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	cmd.Flags().StringVar(&framework, "framework", "", "only policies mapped to this framework ("+strings.Join(engine.Frameworks, ", ")+")")
	cmd.Flags().StringVar(&typ, "type", "", "only policies evaluated on this resource type")
	return cmd
}

func (a *app) policySettingsCmd() *cobra.Command {
	var (
		pf     policyFlags
		format string
	)
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show the settings the policies read: defaults, the values in effect, and which policies read them",
		Long: `Show every setting the loaded policies read from data.warden.config: its default
(declared in the Rego itself), the value in effect when --config sets one, and the
policies that read it. Set them under settings: in the config file; a value of the wrong
type, or a name no policy reads, is refused when the policies load.`,
		Example: `  warden policy settings
  warden policy settings --config warden.yaml
  warden policy settings --policies ./our-policies --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, eng, err := a.loadPolicies(cmd, &pf)
			if err != nil {
				return err
			}
			rows := inspect.Settings(eng, cfg.Settings)
			return tableOrJSON(format, func() error { return inspect.SettingsTable(a.stdout, rows) },
				func() error { return inspect.SettingsJSON(a.stdout, rows) })
		},
	}
	pf.register(cmd)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}

func (a *app) policyTestCmd() *cobra.Command {
	var (
		verbose   bool
		run       string
		noBuiltin bool
	)
	cmd := &cobra.Command{
		Use:   "test [DIR...]",
		Short: "Run the Rego unit tests of the built-in pack and of DIRs, as 'opa test' does",
		Long: `Run the Rego unit tests (rules named test_* in *_test.rego files).

Without DIR, the built-in pack's tests run. With DIRs, their policies and tests run
together with the built-in pack, so that your policies may use its library
(data.warden.lib.*); add --no-builtin to test DIRs without the pack's policies and
tests (its library stays: no user module may define it).`,
		Example: `  warden policy test
  warden policy test ./our-policies -v
  warden policy test --run ssh`,
		RunE: func(cmd *cobra.Command, dirs []string) error {
			results, err := inspect.Test(cmd.Context(), run, dirs, noBuiltin)
			if err != nil {
				return usageErr(err)
			}
			pass, fail := inspect.WriteTests(a.stdout, results, verbose)
			if fail > 0 {
				return &exitErr{code: exitFindings}
			}
			if pass == 0 {
				return usageErr(fmt.Errorf("policy test: no tests found"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every test, not only failures")
	cmd.Flags().StringVar(&run, "run", "", "only tests whose name matches this regular expression")
	cmd.Flags().BoolVar(&noBuiltin, "no-builtin", false, "test DIRs without the built-in pack")
	return cmd
}

// tableOrJSON writes with table or with json, as --format says.
func tableOrJSON(format string, table, json func() error) error {
	switch format {
	case "json":
		return json()
	case "table":
		return table()
	}
	return usageErr(fmt.Errorf("--format: unknown format %q (want table or json)", format))
}
