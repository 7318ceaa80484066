// Package bench measures warden's evaluation against the targets of BENCHMARKS.md: a
// full pass over a large synthetic snapshot, the naive way side by side, and
// re-evaluating a few changed resources.
package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/snapshot"
)

// Timing is one measured pass.
type Timing struct {
	Resources int
	Findings  int
	Wall      time.Duration
}

// PerResource is the wall time per resource.
func (t Timing) PerResource() time.Duration {
	if t.Resources == 0 {
		return 0
	}
	return t.Wall / time.Duration(t.Resources)
}

// Naive evaluates resources the naive way: every policy prepared once, then every
// resource against every policy, one query at a time, on one goroutine, with OPA
// converting each input from Go values.
func Naive(ctx context.Context, mods []*engine.Module, pols []*engine.Policy, now time.Time, resources []snapshot.Resource) (Timing, error) {
	opts := []func(*rego.Rego){}
	for _, m := range mods {
		if !m.Test {
			opts = append(opts, rego.ParsedModule(m.Parsed))
		}
	}
	queries := make([]rego.PreparedEvalQuery, len(pols))
	for i, p := range pols {
		q, err := rego.New(append(opts, rego.Query("data."+p.Package+".deny"), rego.SetRegoVersion(ast.RegoV1))...).PrepareForEval(ctx)
		if err != nil {
			return Timing{}, fmt.Errorf("prepare %s: %w", p.ID, err)
		}
		queries[i] = q
	}
	start := time.Now()
	found := 0
	for i := range resources {
		input := map[string]any{"resource": doc(&resources[i])}
		for j, q := range queries {
			rs, err := q.Eval(ctx, rego.EvalInput(input), rego.EvalTime(now))
			if err != nil {
				return Timing{}, err
			}
			// Count only what the policy was written for, to compare with the engine.
			if !slices.Contains(pols[j].ResourceTypes, resources[i].Type) {
				continue
			}
			for _, r := range rs {
				if vs, ok := r.Expressions[0].Value.([]any); ok {
					found += len(vs)
				}
			}
		}
	}
	return Timing{Resources: len(resources), Findings: found, Wall: time.Since(start)}, nil
}

// Routed evaluates resources with the engine's in-memory path (type routing, one query
// per resource), on one goroutine: the same work as Naive, done warden's way.
func Routed(ctx context.Context, e *engine.Engine, now time.Time, resources []snapshot.Resource) (Timing, error) {
	start := time.Now()
	res, err := e.Evaluate(ctx, snapshot.Header{CollectedAt: now}, now, resources)
	if err != nil {
		return Timing{}, err
	}
	return Timing{Resources: len(resources), Findings: len(res.Findings), Wall: time.Since(start)}, nil
}

func doc(r *snapshot.Resource) map[string]any {
	d := map[string]any{"uid": r.UID, "type": r.Type, "name": r.Name, "account": r.Account, "region": r.Region, "scope": r.Scope}
	if r.Attributes != nil {
		d["attributes"] = r.Attributes
	}
	return d
}
