package env

import (
	"context"
	"log/slog"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/scan"
)

// PlanRequest says where a plan's findings come from.
type PlanRequest struct {
	// Snapshot is the snapshot file to plan from; empty collects the environment's
	// targets into a private file (collect.ErrNoTargets when it has none).
	Snapshot string
	// Waivers is the waiver file a --waivers flag names, else the config's waivers:.
	Waivers string
	// Now evaluates as of this time instead of the snapshot's collected_at (zero: that).
	Now time.Time
	// Version is warden's, recorded with the scan.
	Version string
	// Collect are the options of the collection (how it reports itself).
	Collect collect.Options
	Logger  *slog.Logger
}

// Plan scans the findings of r's snapshot, or of a collection of the targets, and plans
// their fixes as the environment's actor, through the registry and the gates: what
// warden plan and warden apply do before anything else.
func (e *Env) Plan(ctx context.Context, r PlanRequest) (*remediate.Plan, error) {
	req := remediate.ScanRequest{Snapshot: r.Snapshot, Collect: r.Collect,
		Plan: remediate.ScanPlanOptions{Registry: e.Registry, Gates: e.Config.Gates, Actor: e.Actor}}
	if r.Snapshot == "" {
		cs, err := collect.Resolve(e.Targets, r.Logger)
		if err != nil {
			return nil, err
		}
		req.Collectors = cs
	}
	ws, err := e.Config.LoadWaivers(r.Waivers)
	if err != nil {
		return nil, err
	}
	req.Scan = scan.Request{Engine: e.Engine, Waivers: ws, Now: r.Now, Version: r.Version}
	scan.TuneGC()
	return remediate.ScanAndPlan(ctx, req)
}
