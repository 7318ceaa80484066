package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/env"
	"github.com/warden-sec/warden/remediate/show"
	"github.com/warden-sec/warden/scan"
)

func (a *app) planCmd() *cobra.Command {
	var (
		rf     remediationFlags
		out    string
		format string
	)
	cmd := &cobra.Command{
		Use:   "plan [targets | --snapshot FILE] [--out plan.json]",
		Short: "Turn open findings into the fixes apply would make",
		Long: `Turn open findings into a plan of fixes, without changing anything.

Each action fixes the smallest part that carries the problem: one attachment of a
managed policy, one inline policy, one security-group rule, one binding member, one key.
Findings that are waived, carried over as unknown, or in a scope that was not read
completely get no action. The plan records each target's observed state (the
before-state its rollback relies on), the approvals the gates ask for, and a hash over
its actions: a plan saved with --out is what 'warden apply PLAN' executes, and what
approvals bind to.`,
		Example: `  warden plan --snapshot fixtures/acme/snapshot.json
  warden plan --aws --gcp-project acme-prod --config warden.yaml --out plan.json
  warden plan --snapshot snap.json --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return usageErr(fmt.Errorf("--format: want table or json, not %q", format))
			}
			r, err := a.openRemediation(cmd, &rf, false)
			if err != nil {
				return err
			}
			defer r.Close()
			p, err := a.makePlan(cmd.Context(), r, &rf)
			if err != nil {
				return err
			}
			// The plan file (--out) is the JSON; without --out, JSON goes to standard output.
			if out != "" || format == "json" {
				if err := atomicfile.WriteOr(out, a.stdout, func(w io.Writer) error { return show.PlanJSON(w, p) }); err != nil || format == "json" {
					return err
				}
			}
			show.Plan(a.stdout, p, r.Config.Gates.Approvers)
			if out != "" {
				fmt.Fprintf(a.stdout, "\nsaved to %s: warden apply %s shows what it would do; add --confirm to apply\n", out, out)
			}
			return nil
		},
	}
	rf.register(cmd)
	cmd.Flags().StringVarP(&out, "out", "o", "", "save the plan to this file, for warden apply")
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}

func (a *app) applyCmd() *cobra.Command {
	var (
		rf         remediationFlags
		confirm    bool
		format     string
		maxActions int
		maxPerAcct int
	)
	cmd := &cobra.Command{
		Use:   "apply [PLAN_FILE | targets] [--confirm]",
		Short: "Apply a plan's fixes behind the approval gates (a dry run without --confirm)",
		Long: `Apply a plan's fixes. Without --confirm this is a dry run: it says what would happen and
makes no write, to the cloud or to the database.

With --confirm the gates decide each action: risks in gates.auto run, others become
approval requests (printed with their ids; 'warden approve ID' decides them), refused
ones never run. Running apply again executes what has since been approved. Each action
re-reads its target first: if it no longer matches the plan's before-state the action
and its approvals are voided and a fresh plan is needed. Then its intent is recorded, the
cloud is called, the target is read again and the policy re-evaluated: the finding must be
gone. A run killed at any point loses nothing and repeats nothing: the next apply
resolves what it left by observing the cloud.

Safety: at most --max-actions per run and --max-per-account per account; a circuit
breaker stops after 5 consecutive failures or more than 20% failed once 5 ran; a
remediator with more than 10 actions goes in waves, a canary first; 'warden pause'
stops everything. Every step is in the audit log ('warden audit verify').

The live targets (--aws, --gcp-project, endpoints) say where to re-read and fix: a plan
file holds uids, not credentials.

Exit codes: 0 nothing failed (actions may wait for approval, or over a cap for the next
run); 2 an action failed, the run was stopped, remediation is paused, or bad input.`,
		Example: `  warden plan --aws --out plan.json && warden apply plan.json --aws
  warden apply plan.json --aws --confirm
  WARDEN_ACTOR=bob warden approve apr-1a2b3c4d5e6f
  warden apply plan.json --aws --confirm      # runs what was approved`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return usageErr(fmt.Errorf("--format: want table or json, not %q", format))
			}
			rf.dryRun = !confirm
			r, err := a.openRemediation(cmd, &rf, true)
			if err != nil {
				return err
			}
			defer r.Close()
			r.Notice(a.stderr)
			var p *remediate.Plan
			if len(args) == 1 {
				if p, err = remediate.ReadPlan(args[0]); err != nil {
					return err
				}
			} else if p, err = a.makePlan(cmd.Context(), r, &rf); err != nil {
				return err
			}
			mo := r.MachineOptions(a.log)
			mo.Limits = remediate.Limits{MaxActions: maxActions, MaxPerAccount: maxPerAcct}
			res, err := remediate.New(mo).Apply(cmd.Context(), p, confirm)
			if errors.Is(err, remediate.ErrPaused) {
				return err
			} else if err != nil {
				return fmt.Errorf("apply: %w", err)
			}
			if format == "json" {
				if err := show.ApplyJSON(a.stdout, res); err != nil {
					return err
				}
			} else {
				show.Apply(a.stdout, res)
			}
			return res.Err()
		},
	}
	rf.register(cmd)
	f := cmd.Flags()
	f.BoolVar(&confirm, "confirm", false, "really apply: without it, apply is a dry run that writes nothing")
	f.StringVarP(&format, "format", "f", "table", "output format: table or json")
	f.IntVar(&maxActions, "max-actions", 25, "blast-radius cap: the most actions one run applies")
	f.IntVar(&maxPerAcct, "max-per-account", 10, "blast-radius cap: the most actions one run applies in one account")
	return cmd
}

// remediationFlags are shared by plan and apply: where the findings come from (a
// snapshot or live targets), the policies, the waivers and the database.
type remediationFlags struct {
	pf         policyFlags
	tf         targetFlags
	snapPath   string
	waiverFile string
	dbPath     string
	nowFlag    string
	now        time.Time // --now, parsed by openRemediation
	dryRun     bool      // apply without --confirm: a missing database is not created
	action     string    // rollback: the recorded action, whose cloud is opened
}

func (rf *remediationFlags) register(cmd *cobra.Command) {
	rf.pf.register(cmd)
	rf.tf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&rf.snapPath, "snapshot", "s", "", "plan from this snapshot file instead of collecting the targets")
	f.StringVar(&rf.waiverFile, "waivers", "", "YAML file of waivers: waived findings are not fixed")
	f.StringVar(&rf.dbPath, "db", "", "warden's database (default the config's db:, else $XDG_STATE_HOME/warden/warden.db)")
	f.StringVar(&rf.nowFlag, "now", "", "evaluate as of this RFC 3339 time instead of the snapshot's collected_at")
}

// openRemediation opens what plan and apply work with, as the flags say; needDB opens
// the database too.
func (a *app) openRemediation(cmd *cobra.Command, rf *remediationFlags, needDB bool) (*env.Env, error) {
	who, err := audit.CurrentActor()
	if err != nil {
		return nil, err
	}
	if rf.now, err = scan.ParseNow(rf.nowFlag); err != nil {
		return nil, err
	}
	cfg, err := config.LoadOptional(rf.pf.configFile)
	if err != nil {
		return nil, err
	}
	o := env.Options{Config: cfg, Policies: rf.pf.options(a.log), Targets: rf.tf.targets(cfg), Sim: rf.tf.sim, Actor: who, Logger: a.log, DryRun: rf.dryRun, Action: rf.action}
	if needDB {
		if o.DB, err = cfg.DSN(rf.dbPath); err != nil {
			return nil, err
		}
	}
	return env.Open(cmd.Context(), o)
}

// makePlan scans (a snapshot file, or a live collection into a private file) and plans.
func (a *app) makePlan(ctx context.Context, e *env.Env, rf *remediationFlags) (*remediate.Plan, error) {
	p, err := e.Plan(ctx, env.PlanRequest{Snapshot: rf.snapPath, Waivers: rf.waiverFile, Now: rf.now, Version: version(),
		Collect: a.collectOptions(nil), Logger: a.log})
	if errors.Is(err, collect.ErrNoTargets) {
		return nil, errors.New("plan needs --snapshot FILE or live targets (--aws, --aws-org, --gcp-project P, --sim WORLD, or targets: in --config)")
	}
	return p, err
}
