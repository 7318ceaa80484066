package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/bytesize"
	"github.com/warden-sec/warden/internal/progress"
	"github.com/warden-sec/warden/internal/tty"
	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// policyFlags are the flags that choose policies, shared by scan and policy list.
type policyFlags struct {
	configFile string
	policyDirs []string
	noBuiltin  bool
	baseline   bool // set by scan only: see engine.Config.Baseline
	// limits, when set, bound each evaluation (scan registers them; policy list does not).
	limits *config.EvalLimits
}

func (pf *policyFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&pf.configFile, "config", "", "YAML config: policy settings, extra policy dirs, waivers, db")
	cmd.Flags().StringArrayVar(&pf.policyDirs, "policies", nil, "directory of extra Rego policies (repeatable)")
	cmd.Flags().BoolVar(&pf.noBuiltin, "no-builtin", false, "leave out the built-in policies (their library, data.warden.lib, stays for yours)")
}

// loadPolicies reads the config (if any) and compiles the policies it and the flags name.
func (a *app) loadPolicies(cmd *cobra.Command, pf *policyFlags) (*config.Config, *engine.Engine, error) {
	cfg, err := config.LoadOptional(pf.configFile)
	if err != nil {
		return nil, nil, err
	}
	e, err := cfg.Engine(cmd.Context(), pf.options(a.log))
	return cfg, e, err
}

// options are the policy flags as the config's policy options.
func (pf *policyFlags) options(log *slog.Logger) config.PolicyOptions {
	return config.PolicyOptions{Dirs: pf.policyDirs, NoBuiltin: pf.noBuiltin, Baseline: pf.baseline, Limits: pf.limits, Logger: log}
}

// limitFlags bound what one scan may read and spend: the snapshot reader's value and
// resource sizes, and each policy evaluation's time and the process's heap.
type limitFlags struct {
	maxValue, maxResource bytesize.Flag
	eval                  config.EvalLimits
}

func (lf *limitFlags) register(cmd *cobra.Command) {
	d := snapshot.DefaultLimits()
	lf.maxValue, lf.maxResource = bytesize.Flag(d.MaxValue), bytesize.Flag(d.MaxResource)
	lf.eval = config.EvalLimits{EvalTimeout: engine.DefaultEvalTimeout, MemoryLimit: engine.DefaultMemoryLimit}
	f := cmd.Flags()
	f.Var(&lf.maxValue, "max-value-size", "refuse a snapshot holding a single string or number larger than this")
	f.Var(&lf.maxResource, "max-resource-size", "refuse a snapshot holding a resource larger than this")
	f.DurationVar(&lf.eval.EvalTimeout, "eval-timeout", lf.eval.EvalTimeout, "stop one policy evaluation on one resource after this long and record it as an eval error")
	f.Var((*bytesize.Flag)(&lf.eval.MemoryLimit), "memory-limit", "heap above which the longest-running policy evaluation is stopped and recorded as an eval error")
}

func (a *app) scanCmd() *cobra.Command {
	var (
		pf         policyFlags
		tf         targetFlags
		snapPath   string
		waiverFile string
		format     string
		failOn     string
		dbPath     string
		noDB       bool
		outFile    string
		nowFlag    string
		noProgress bool
		lf         limitFlags
	)
	cmd := &cobra.Command{
		Use:   "scan --snapshot FILE",
		Short: "Evaluate a snapshot against the policies and report findings",
		Long: `Evaluate a snapshot against the policies and report findings.

Every resource is evaluated against the policies for its type, in parallel. Ages (key
age, certificate expiry) are measured at the snapshot's collected_at, so a scan of the
same snapshot always says the same thing; a collected_at more than a day ahead of this
machine's clock is refused unless --now gives the evaluation time. Waivers suppress
findings until they expire; an expired waiver is reported. Each scan is recorded in the
history (a SQLite file, or PostgreSQL) so that 'warden findings diff' can show what
changed; findings in scopes that could not be read, or of policies that failed on their
resource, are carried over as unknown, never resolved.

Exit codes: 0 nothing open at or above --fail-on, everything read and judged; 1
findings at or above it; 2 bad input, an error, or an incomplete scan: a policy
evaluation failed (whatever was found; the report still lists it, plus the errors), or
nothing at or above --fail-on was found but a scope could not be read in full; 130 interrupted by SIGINT (143 by SIGTERM): no
report, nothing recorded.`,
		Example: `  warden scan --snapshot fixtures/acme/snapshot.json
  warden scan --sim fixtures/acme/world.yaml
  warden scan --aws-org --gcp-project acme-prod --fail-on critical
  warden scan --snapshot snap.json --waivers waivers.yaml --fail-on high
  warden scan --snapshot snap.json --policies ./our-policies --format sarif -o warden.sarif
  warden synth --resources 1000 | warden scan --snapshot - --no-db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, eng, err := a.loadPolicies(cmd, &pf)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("fail-on") && cfg.FailOn != "" {
				failOn = cfg.FailOn // the flag, when given, wins over the config
			}
			threshold, err := findings.ParseSeverity(failOn)
			if err != nil {
				return usageErr(fmt.Errorf("--fail-on: %w", err))
			}
			w, err := report.New(format, outFile == "" && tty.Colour(a.stdout))
			if err != nil {
				return usageErr(fmt.Errorf("--format: %w", err))
			}
			now, err := scan.ParseNow(nowFlag)
			if err != nil {
				return err
			}
			ws, err := cfg.LoadWaivers(waiverFile)
			if err != nil {
				return err
			}
			src, stop, err := a.scanSource(snapPath, &tf, cfg, noProgress, now)
			if err != nil {
				return err
			}
			defer stop()
			req := scan.Request{Source: src, Engine: eng, Waivers: ws, Now: now, Version: version(),
				Limits: snapshot.Limits{MaxValue: lf.maxValue.Int(), MaxResource: lf.maxResource.Int()}}
			if !noDB {
				if req.Store, req.Recorded, err = a.scanHistory(cmd.Context(), dbPath, cfg, eng); err != nil {
					return err
				}
				defer req.Store.Close()
			}
			scan.TuneGC()
			var prog *progress.Line
			if !noProgress {
				prog = progress.New(a.stderr, "evaluated")
			}
			req.Progress = prog.Update
			res, err := scan.Run(cmd.Context(), req)
			prog.Done()
			if err != nil {
				return err // exit 2, or run reports the interruption and its exit code
			}
			if err := atomicfile.WriteOr(outFile, a.stdout, func(out io.Writer) error { return w.Write(out, res) }); err != nil {
				return err
			}
			a.log.Info("scan done", "resources", res.Scan.Resources, "findings", res.Summary.Findings, "eval_errors", res.Summary.EvalErrors, "duration_ms", res.Scan.DurationMS)
			return verdictErr(res.Verdict(threshold))
		},
	}
	pf.register(cmd)
	tf.register(cmd)
	lf.register(cmd)
	pf.limits = &lf.eval
	f := cmd.Flags()
	f.StringVarP(&snapPath, "snapshot", "s", "", "snapshot file to evaluate, or - for standard input")
	f.StringVar(&waiverFile, "waivers", "", "YAML file of waivers (policy, resource glob, reason, owner, expires)")
	f.StringVarP(&format, "format", "f", "table", "output format: table, json or sarif")
	f.StringVar(&failOn, "fail-on", "high", "exit 1 when an open finding is at or above this severity: critical, high, medium, low, info")
	f.StringVar(&dbPath, "db", "", "scan history: a SQLite file, a postgres:// URL or a PostgreSQL key=value DSN (default $XDG_STATE_HOME/warden/warden.db)")
	f.BoolVar(&noDB, "no-db", false, "do not record the scan in the history")
	f.StringVarP(&outFile, "output", "o", "", "write the report to this file instead of standard output")
	f.StringVar(&nowFlag, "now", "", "evaluate as of this RFC 3339 time instead of the snapshot's collected_at (needed when collected_at is ahead of the clock)")
	f.BoolVar(&noProgress, "no-progress", false, "do not draw progress on the terminal")
	f.BoolVar(&pf.baseline, "baseline", false, "evaluate as before issue 13: topdown only, no folded constants, no memo, no planned programs (for measuring: the findings are the same)")
	_ = f.MarkHidden("baseline")
	return cmd
}

// verdictErr is a scan's verdict as the command's exit: nil when clean.
func verdictErr(v scan.Verdict) error {
	if v.Code == scan.ExitClean {
		return nil
	}
	var reason error
	if v.Reason != "" {
		reason = errors.New(v.Reason)
	}
	return &exitErr{code: v.Code, err: reason}
}

// scanSource is what scan reads: a snapshot file, standard input (-), or the live targets
// as they are collected; stop ends the --sim simulator (clock from now, if set) after.
func (a *app) scanSource(snapPath string, tf *targetFlags, cfg *config.Config, noProgress bool, now time.Time) (src scan.Source, stop func(), err error) {
	if snapPath != "" {
		return scan.Path(snapPath, a.stdin), func() {}, nil
	}
	cs, stop, err := collect.ResolveSim(tf.targets(cfg), tf.sim, now, a.log)
	if errors.Is(err, collect.ErrNoTargets) {
		return nil, nil, usageErr(fmt.Errorf("scan needs --snapshot FILE (or - for standard input), or live targets (--aws, --aws-org, --gcp-project P, --tls HOST:PORT, --sim WORLD, or targets: in --config)"))
	}
	if err != nil {
		return nil, nil, err
	}
	var prog *progress.Line
	if !noProgress {
		prog = progress.New(a.stderr, "collected")
	}
	return scan.Live(cs, a.collectOptions(prog)), stop, nil
}

// scanHistory opens the history a scan is recorded in, and what records it in the audit
// log, as the person running warden.
func (a *app) scanHistory(ctx context.Context, dbPath string, cfg *config.Config, eng *engine.Engine) (*store.Store, func(context.Context, *store.Tx, store.ScanRecord, findings.Diff) error, error) {
	who, err := audit.CurrentActor()
	if err != nil {
		return nil, nil, err
	}
	st, err := cfg.OpenStore(ctx, dbPath, true)
	if err != nil {
		return nil, nil, err
	}
	return st, scan.Audit(audit.New(st, audit.Options{}), who, scan.VersionEvents(eng, cfg.File, cfg.Version)...), nil
}
