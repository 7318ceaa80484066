package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/env"
	"github.com/warden-sec/warden/scan"
)

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
	who, err := actor()
	if err != nil {
		return nil, err
	}
	if rf.now, err = parseNow(rf.nowFlag); err != nil {
		return nil, err
	}
	cfg, err := config.LoadOptional(rf.pf.configFile)
	if err != nil {
		return nil, err
	}
	o := env.Options{Config: cfg, Policies: rf.pf.options(a.log), Targets: rf.tf.targets(cfg), Sim: rf.tf.sim, Actor: who, Logger: a.log}
	if needDB {
		if o.DB, err = cfg.DSN(rf.dbPath); err != nil {
			return nil, err
		}
	}
	return env.Open(cmd.Context(), o)
}

// makePlan scans (a snapshot file, or a live collection into a private file) and plans.
func (a *app) makePlan(ctx context.Context, e *env.Env, rf *remediationFlags) (*remediate.Plan, error) {
	req := remediate.ScanRequest{Snapshot: rf.snapPath, Collect: a.collectOptions(nil),
		Plan: remediate.ScanPlanOptions{Registry: e.Registry, Gates: e.Config.Gates, Actor: e.Actor}}
	if rf.snapPath == "" {
		cs, err := collect.Resolve(e.Targets, a.log)
		if errors.Is(err, collect.ErrNoTargets) {
			return nil, errors.New("plan needs --snapshot FILE or live targets (--aws, --aws-org, --gcp-project P, --sim WORLD, or targets: in --config)")
		}
		if err != nil {
			return nil, err
		}
		req.Collectors = cs
	}
	ws, err := e.Config.LoadWaivers(rf.waiverFile)
	if err != nil {
		return nil, err
	}
	req.Scan = scan.Request{Engine: e.Engine, Waivers: ws, Now: rf.now, Version: version()}
	scan.TuneGC()
	return remediate.ScanAndPlan(ctx, req)
}
