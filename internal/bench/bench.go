// Package bench measures warden's evaluation against the targets of BENCHMARKS.md: a
// full pass over a large synthetic snapshot, the naive way side by side, and
// re-evaluating a few changed resources; and it reads the decisions of a scan's report,
// so that two engines' passes can be shown to decide the same. Run is `warden bench`.
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
	q, err := PrepareNaive(ctx, mods, pols)
	if err != nil {
		return Timing{}, err
	}
	return q.Run(ctx, now, resources)
}

// NaiveQueries are the policies prepared for the naive way: one query each, each
// compiling the whole pack (seconds for the built-in one). Prepare once, Run as often
// as needed.
type NaiveQueries struct {
	pols    []*engine.Policy
	queries []rego.PreparedEvalQuery
}

// PrepareNaive prepares the query of each policy over the non-test modules.
func PrepareNaive(ctx context.Context, mods []*engine.Module, pols []*engine.Policy) (*NaiveQueries, error) {
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
			return nil, fmt.Errorf("prepare %s: %w", p.ID, err)
		}
		queries[i] = q
	}
	return &NaiveQueries{pols: pols, queries: queries}, nil
}

// Policies is how many policies each resource is evaluated against.
func (n *NaiveQueries) Policies() int { return len(n.queries) }

// Run evaluates every resource against every policy, timed (the preparation is not).
func (n *NaiveQueries) Run(ctx context.Context, now time.Time, resources []snapshot.Resource) (Timing, error) {
	start := time.Now()
	found := 0
	for i := range resources {
		input := map[string]any{"resource": doc(&resources[i])}
		for j, q := range n.queries {
			rs, err := q.Eval(ctx, rego.EvalInput(input), rego.EvalTime(now))
			if err != nil {
				return Timing{}, err
			}
			// Count only what the policy was written for, to compare with the engine.
			if !slices.Contains(n.pols[j].ResourceTypes, resources[i].Type) {
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
