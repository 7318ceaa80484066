package remediate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/valyala/fastjson"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
)

// ScanPlanOptions say how the fixes of a scan's findings are planned.
type ScanPlanOptions struct {
	Registry *remediators.Registry
	Gates    gates.Config
	// Actor requests the fixes.
	Actor string
	// Now stamps the plan; zero means time.Now.
	Now time.Time
}

// PlanScan plans the fixes of a scan's open findings; path is the snapshot file the scan
// read, where the resources those findings are on are read again. It is the plan of
// `warden plan`, `warden apply` and `warden demo`, as reconcile.Plan is the daemon's: both
// end in NewPlan.
func PlanScan(ctx context.Context, path string, res *scan.Result, o ScanPlanOptions) (*Plan, error) {
	resources, err := resourcesOf(ctx, path, res)
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	return NewPlan(PlanInput{
		Header: res.Header, Name: res.Scan.Snapshot, Findings: res.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { x, ok := resources[uid]; return x, ok },
		Complete: scan.Completeness(res.Header), Registry: o.Registry, Gates: o.Gates, Actor: o.Actor, Now: now,
	})
}

// ScanRequest is a scan to plan from: a snapshot file, or a collection made for the plan.
type ScanRequest struct {
	// Snapshot is the snapshot file to scan; empty collects Collectors into a private
	// file first (closing them once read), removed when the plan is made.
	Snapshot   string
	Collectors []collectors.Collector
	Collect    collect.Options
	// Scan is the scan's request; its Source is set to the snapshot.
	Scan scan.Request
	Plan ScanPlanOptions
}

// ScanAndPlan scans the snapshot (collected first, when the request names none) and plans
// the fixes of its open findings.
func ScanAndPlan(ctx context.Context, r ScanRequest) (*Plan, error) {
	path := r.Snapshot
	if path == "" {
		dir, err := os.MkdirTemp("", "warden-plan-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if path, err = collectInto(ctx, filepath.Join(dir, "snapshot.json"), r.Collectors, r.Collect); err != nil {
			return nil, err
		}
	}
	req := r.Scan
	req.Source = scan.File(path)
	res, err := scan.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	return PlanScan(ctx, path, res, r.Plan)
}

// collectInto collects into a new file at path and closes the collectors.
func collectInto(ctx context.Context, path string, cs []collectors.Collector, o collect.Options) (string, error) {
	defer func() {
		for _, c := range cs {
			if cl, ok := c.(io.Closer); ok {
				_ = cl.Close()
			}
		}
	}()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := collect.Run(ctx, f, cs, o); err != nil {
		f.Close()
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// resourcesOf reads again, from the snapshot file, the resources the open findings are on.
func resourcesOf(ctx context.Context, path string, res *scan.Result) (map[string]snapshot.Resource, error) {
	want := map[string]bool{}
	for _, f := range res.Findings {
		want[f.Resource] = true
	}
	out := map[string]snapshot.Resource{}
	if len(want) == 0 {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := snapshot.NewReader(f, path, snapshot.WithContext(ctx))
	p := snapshot.NewParser(path)
	var fp fastjson.Parser
	for {
		el, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		// The scan checked every resource already: only those with findings are decoded
		// (checked again) here, the others are skipped on their uid.
		if v, err := fp.ParseBytes(el.Data); err == nil {
			if uid := v.GetStringBytes("uid"); uid != nil && !want[string(uid)] {
				continue
			}
		}
		r, err := p.Decode(el)
		if err != nil {
			return nil, err
		}
		if want[r.UID] {
			out[r.UID] = r
		}
	}
}
