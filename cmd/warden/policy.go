package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/report"
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
			if framework != "" && !slices.Contains(engine.Frameworks, framework) {
				return usageErr(fmt.Errorf("--framework: unknown framework %q (want one of %s)", framework, strings.Join(engine.Frameworks, ", ")))
			}
			var list []*engine.Policy
			for _, p := range eng.Policies() {
				if framework != "" && len(p.Frameworks[framework]) == 0 {
					continue
				}
				if typ != "" && !slices.Contains(p.ResourceTypes, typ) {
					continue
				}
				list = append(list, p)
			}
			switch format {
			case "json":
				if list == nil {
					list = []*engine.Policy{}
				}
				b, err := json.MarshalIndent(list, "", "  ")
				if err != nil {
					return err
				}
				_, err = a.stdout.Write(append(report.EscapeJSON(b), '\n'))
				return err
			case "table":
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSEVERITY\tTITLE\tRESOURCE TYPES\tFRAMEWORKS")
				for _, p := range list {
					var fws []string
					for _, fw := range engine.Frameworks {
						if c := p.Frameworks[fw]; len(c) > 0 {
							fws = append(fws, fw+" "+strings.Join(c, ","))
						}
					}
					// A user policy's metadata is text from a file: escaped for the terminal.
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", report.Escape(p.ID), p.Severity, report.Escape(p.Title), strings.Join(p.ResourceTypes, ","), report.Escape(strings.Join(fws, "; ")))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%d policies\n", len(list))
				return nil
			}
			return usageErr(fmt.Errorf("--format: unknown format %q (want table or json)", format))
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
			byFile := map[string]string{}
			for _, p := range eng.Policies() {
				byFile[p.File] = p.ID
			}
			type row struct {
				engine.Setting
				ReadBy []string `json:"read_by"`
				Value  any      `json:"value,omitempty"`
				Set    bool     `json:"set"`
			}
			var rows []row
			for _, s := range eng.SettingsSchema() {
				r := row{Setting: s}
				r.Value, r.Set = cfg.Settings[s.Name]
				for _, w := range s.Where {
					file, _, _ := strings.Cut(w, ":")
					by := file // a library file: the policies reach it through it
					if id, ok := byFile[file]; ok {
						by = id
					}
					if !slices.Contains(r.ReadBy, by) {
						r.ReadBy = append(r.ReadBy, by)
					}
				}
				rows = append(rows, r)
			}
			switch format {
			case "json":
				if rows == nil {
					rows = []row{}
				}
				b, err := json.MarshalIndent(rows, "", "  ")
				if err != nil {
					return err
				}
				_, err = a.stdout.Write(append(report.EscapeJSON(b), '\n'))
				return err
			case "table":
				compact := func(v any) string {
					b, err := json.Marshal(v)
					if err != nil {
						return fmt.Sprint(v)
					}
					return string(b)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SETTING\tDEFAULT\tIN EFFECT\tREAD BY")
				for _, r := range rows {
					effect := "(default)"
					if r.Set {
						effect = compact(r.Value)
					}
					// Names, defaults and values come from policy and config files: escaped
					// for the terminal.
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", report.Escape(r.Name), report.Escape(compact(r.Default)), report.Escape(effect), report.Escape(strings.Join(r.ReadBy, ", ")))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%d settings\n", len(rows))
				return nil
			}
			return usageErr(fmt.Errorf("--format: unknown format %q (want table or json)", format))
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
			sources := []engine.Source{engine.Builtin()}
			if noBuiltin {
				sources = []engine.Source{engine.BuiltinLibrary()}
			}
			for _, d := range dirs {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					return usageErr(fmt.Errorf("policy test: %s is not a directory", d))
				}
				sources = append(sources, engine.Source{FS: os.DirFS(d), Prefix: d})
			}
			if len(dirs) == 0 && noBuiltin {
				return usageErr(fmt.Errorf("policy test: --no-builtin needs at least one DIR"))
			}
			results, err := engine.Test(cmd.Context(), run, sources...)
			if err != nil {
				return usageErr(err)
			}
			pass, fail := 0, 0
			for _, r := range results {
				if r.Pass() {
					pass++
					if verbose {
						fmt.Fprintf(a.stdout, "PASS %s.%s (%s)\n", r.Package, r.Name, r.Duration)
					}
					continue
				}
				if r.Skip {
					continue
				}
				fail++
				loc := ""
				if r.Location != nil {
					loc = fmt.Sprintf("%s:%d: ", r.Location.File, r.Location.Row)
				}
				why := "FAIL"
				if r.Error != nil {
					why = "ERROR " + r.Error.Error()
				}
				fmt.Fprintf(a.stdout, "%s\n", report.EscapeLines(fmt.Sprintf("%s%s.%s: %s", loc, r.Package, r.Name, why)))
				if len(r.Output) > 0 {
					fmt.Fprintf(a.stdout, "  output: %s\n", report.EscapeLines(strings.TrimSpace(string(r.Output))))
				}
			}
			fmt.Fprintf(a.stdout, "%d passed, %d failed\n", pass, fail)
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
