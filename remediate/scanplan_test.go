package remediate_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/collect"
	acmefixture "github.com/warden-sec/warden/fixtures/acme"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/scan"
)

const acmeSnapshot = "../fixtures/acme/snapshot.json"

// The plan of a scan carries, for each action, the state of its target as the snapshot
// holds it: the before-state its rollback relies on.
func TestPlanScan_readsTheTargetsBeforeStateFromTheSnapshot(t *testing.T) {
	ctx := context.Background()
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := remediatetest.Engine(t, reg, nil)
	res, err := scan.Run(ctx, scan.Request{Source: scan.File(acmeSnapshot), Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	p, err := remediate.PlanScan(ctx, acmeSnapshot, res, remediate.ScanPlanOptions{Registry: reg, Gates: gates.Config{}, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) == 0 || len(p.Notices) == 0 {
		t.Fatalf("plan of acme: %d actions, %d notices; want both", len(p.Actions), len(p.Notices))
	}
	if p.Snapshot != res.Scan.Snapshot || p.Actor != "alice" || time.Since(p.CreatedAt) > time.Minute {
		t.Errorf("plan header: snapshot %q actor %q created %s", p.Snapshot, p.Actor, p.CreatedAt)
	}
	for _, a := range p.Actions {
		if len(a.Before) == 0 {
			t.Errorf("%s (%s on %s) has no before-state", a.ID, a.Remediator, a.Target)
		}
	}
}

// Without a snapshot, the plan's scan is of a collection made for it, in a private file
// that does not outlive the plan.
func TestScanAndPlan_collectsWhenNoSnapshotIsNamed(t *testing.T) {
	ctx := context.Background()
	sim, err := collect.StartSimulatorFrom(acmefixture.World(), "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	cs, err := collect.Resolve(sim.Target(collect.Targets{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p, err := remediate.ScanAndPlan(ctx, remediate.ScanRequest{Collectors: cs, Scan: scan.Request{Engine: remediatetest.Engine(t, reg, nil)},
		Plan: remediate.ScanPlanOptions{Registry: reg, Actor: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) == 0 || !slices.Contains(p.Accounts, "111111111111") {
		t.Errorf("plan of the collected acme: %d actions, accounts %v", len(p.Actions), p.Accounts)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "warden-plan-*"))
	if len(left) > 0 {
		t.Errorf("the collection outlived the plan: %v", left)
	}
}
