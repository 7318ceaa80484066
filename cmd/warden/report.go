package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/publish/sinks"
)

func (a *app) reportCmd() *cobra.Command {
	var (
		pf         policyFlags
		framework  string
		format     string
		atFlag     string
		outFile    string
		dbPath     string
		waiverFile string
		list       bool
		to         string
	)
	cmd := &cobra.Command{
		Use:   "report --framework ID | --to securityhub|scc",
		Short: "Write a compliance report of a framework from the scan history or the daemon's state",
		Long: `Write a compliance report: every control of a framework (CIS AWS, CIS GCP, NIST
800-53, PCI DSS, SOC 2, ISO 27001) with its status — pass, fail, unknown, not covered,
manual — the policies and resources behind it, the waived findings with their owner,
reason and expiry, and around it the evidence an auditor asks for: the scan it stands
on, the audit checkpoint to verify it against ('warden audit verify'), the fixes
applied with their audit entries, the scopes that could not be read, the score's trend
over the last ` + strconv.Itoa(evidence.TrendScans) + ` scans and how long findings stayed open.

The report is made from what the store already holds, never from a new scan: the
history 'warden scan' records, or the state 'warden serve' keeps as it reconciles,
whichever read the cloud last by then. --at reports the posture as it was at that
time. --at takes an RFC 3339 time (2026-11-30T12:00:00Z) or a date (2026-11-30), which
means the end of that day in UTC (now, for today); without it, the report is of now. A
control whose policies ran over a scope that could not be read is unknown, not pass.

The policies (--policies, --no-builtin, --config policies:) must be the ones the history
was scanned with: the history records how many policies a scan ran, not which. The
settings and waivers are today's (--config, --waivers).

Formats: html (one self-contained page with charts, opens offline), csv (one row per
control and finding), json (the whole report), sarif (SARIF 2.1.0) and ocsf (OCSF
Compliance Findings, class 2003).

--to sends the findings instead, as they stand (the daemon's state, else the latest
scan), to AWS Security Hub or Google Security Command Center as the config's export:
section configures them: only what changed since the last time, a resolved finding
archived (docs/integrations.md).

Exit codes: 0 the report was written; 2 bad input (an unknown framework or format, a
time before the first scan or to come) or an error.`,
		Example: `  warden report --list
  warden report --framework cis-aws-3.0 --format html --out cis-aws.html
  warden report --framework soc2 --format csv --at 2026-11-30 --out soc2-november.csv
  warden report --framework pci-dss-4.0 --format ocsf --db postgres://warden@db/warden
  warden report --to securityhub --config warden.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if list || framework == "list" {
				return compliance.WriteFrameworks(a.stdout)
			}
			if to != "" {
				return sinks.Report(cmd.Context(), pf.configFile, dbPath, to, a.stdout)
			}
			if framework == "" {
				return usageErr(errors.New("--framework: name the framework to report on ('warden report --list' lists them)"))
			}
			fw, err := compliance.Lookup(framework)
			if err != nil {
				return usageErr(fmt.Errorf("--framework: %w", err))
			}
			w, err := render.New(format)
			if err != nil {
				return usageErr(fmt.Errorf("--format: %w", err))
			}
			var at time.Time
			if atFlag != "" {
				if at, err = evidence.ParseAt(atFlag, time.Now()); err != nil {
					return usageErr(fmt.Errorf("--at: %w", err))
				}
			}
			cfg, eng, err := a.loadPolicies(cmd, &pf)
			if err != nil {
				return err
			}
			ws, err := cfg.LoadWaivers(waiverFile)
			if err != nil {
				return err
			}
			// Reading the history never creates one: a misspelt --db is an error.
			st, err := cfg.OpenStore(cmd.Context(), dbPath, false)
			if err != nil {
				return err
			}
			defer st.Close()
			eo := evidence.ForEngine(eng, cfg.Settings, "warden "+version())
			eo.At, eo.Waivers = at, ws
			doc, err := evidence.Gather(cmd.Context(), st, audit.New(st, audit.Options{}), fw, eo)
			if err != nil {
				return err
			}
			return render.WriteFile(w, format, doc, outFile, a.stdout, a.stderr)
		},
	}
	pf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&framework, "framework", "", "the framework to report on, by id ('list' lists them)")
	f.BoolVar(&list, "list", false, "list the frameworks and exit")
	f.StringVar(&to, "to", "", "send the findings to securityhub or scc (the config's export: section) instead of writing a report")
	cmd.MarkFlagsMutuallyExclusive("to", "framework")
	f.StringVarP(&format, "format", "f", "html", "report format: "+strings.Join(render.Formats(), ", "))
	f.StringVar(&atFlag, "at", "", "report the posture as it was at this time: RFC 3339 (2026-11-30T12:00:00Z) or a date (2026-11-30, the end of that day in UTC); default now")
	f.StringVarP(&outFile, "out", "o", "", "write the report to this file (atomically, mode 0600) instead of standard output")
	f.StringVar(&dbPath, "db", "", "scan history: a SQLite file, a postgres:// URL or a PostgreSQL key=value DSN (default: the config's db:, else $XDG_STATE_HOME/warden/warden.db)")
	f.StringVar(&waiverFile, "waivers", "", "YAML file of waivers that also apply to the history's open findings (default: the config's waivers:)")
	return cmd
}
