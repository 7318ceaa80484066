package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/collect"
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
		return nil, usageErr(err)
	}
	if rf.now, err = parseNow(rf.nowFlag); err != nil {
		return nil, err
	}
	cfg, err := loadConfig(rf.pf.configFile)
	if err != nil {
		return nil, err
	}
	o := env.Options{Config: cfg, Policies: rf.pf.options(a.log), Targets: rf.tf.targets(cfg), Sim: rf.tf.sim, Actor: who, Logger: a.log}
	if needDB {
		if o.DB, err = historyDSN(rf.dbPath, cfg); err != nil {
			return nil, err
		}
	}
	e, err := env.Open(cmd.Context(), o)
	if err != nil {
		return nil, usageErr(err)
	}
	return e, nil
}

// makePlan scans (a snapshot file, or a live collection into a private file) and plans.
func (a *app) makePlan(ctx context.Context, e *env.Env, rf *remediationFlags) (*remediate.Plan, error) {
	req := remediate.ScanRequest{Snapshot: rf.snapPath, Collect: a.collectOptions(nil),
		Plan: remediate.ScanPlanOptions{Registry: e.Registry, Gates: e.Config.Gates, Actor: e.Actor}}
	if rf.snapPath == "" {
		cs, err := collect.Resolve(e.Targets, a.log)
		if errors.Is(err, collect.ErrNoTargets) {
			return nil, usageErr(errors.New("plan needs --snapshot FILE or live targets (--aws, --aws-org, --gcp-project P, --sim WORLD, or targets: in --config)"))
		}
		if err != nil {
			return nil, usageErr(err)
		}
		req.Collectors = cs
	}
	ws, err := loadWaivers(rf.waiverFile, e.Config)
	if err != nil {
		return nil, err
	}
	req.Scan = scan.Request{Engine: e.Engine, Waivers: ws, Now: rf.now, Version: version()}
	tuneGC()
	p, err := remediate.ScanAndPlan(ctx, req)
	if err != nil {
		return nil, usageErr(err)
	}
	return p, nil
}

func readPlan(path string) (*remediate.Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr(fmt.Errorf("read plan: %w", err))
	}
	var p remediate.Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, usageErr(fmt.Errorf("read plan %s: %w", path, err))
	}
	if err := p.Check(); err != nil {
		return nil, usageErr(fmt.Errorf("read plan %s: %w", path, err))
	}
	return &p, nil
}
