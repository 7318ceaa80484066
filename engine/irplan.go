package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/ir"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/warden-sec/warden/engine/internal/irvm"
)

// irTarget is the rego target under which OPA hands the engine the planned IR of a query
// (see irvm): OPA plans a query for a target plugin and passes it the plan, which is how
// the engine obtains it without OPA's internal planner package.
const irTarget = "warden-ir"

type planSinkKey struct{}

// planSink receives the plan of one PrepareForEval through its context.
type planSink struct{ policy *ir.Policy }

type planCapture struct{}

func (planCapture) IsTarget(t string) bool { return t == irTarget }

func (planCapture) PrepareForEval(ctx context.Context, p *ir.Policy, _ ...rego.PrepareOption) (rego.TargetPluginEval, error) {
	s, ok := ctx.Value(planSinkKey{}).(*planSink)
	if !ok {
		return nil, errors.New("warden-ir: prepared without a plan sink")
	}
	s.policy = p
	return planOnly{}, nil
}

type planOnly struct{}

func (planOnly) Eval(context.Context, *rego.EvalContext, ast.Value) (ast.Value, error) {
	return nil, errors.New("warden-ir: a plan is evaluated by the engine, not through rego")
}

func init() { rego.RegisterPlugin(irTarget, planCapture{}) }

// irQueryVar binds the value of a planned query.
const irQueryVar = "x"

// planProgram plans the query "x = ref" against the engine's compiled pack and prepares it
// for irvm.
func (e *Engine) planProgram(ctx context.Context, ref string) (*irvm.Program, error) {
	sink := &planSink{}
	opts := []func(*rego.Rego){
		rego.Query(irQueryVar + " = " + ref),
		rego.Compiler(e.compiler),
		rego.Store(e.store),
		rego.SetRegoVersion(ast.RegoV1),
		rego.Target(irTarget),
	}
	extra := map[string]irvm.Func{}
	if e.memo != nil {
		opts = append(opts, e.memo.options()...)
		for _, f := range e.memo.funcs {
			extra[f.builtin] = func(bctx topdown.BuiltinContext, args []*ast.Term) (*ast.Term, error) {
				return f.call(rego.BuiltinContext(bctx), args)
			}
		}
	}
	e.prepMu.Lock()
	_, err := rego.New(opts...).PrepareForEval(context.WithValue(ctx, planSinkKey{}, sink))
	e.prepMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", ref, err)
	}
	if sink.policy == nil {
		return nil, fmt.Errorf("plan %s: OPA gave no plan", ref)
	}
	return irvm.New(sink.policy, "eval", extra)
}

// irTerms is the values bound to x in the result set of a planned "x = …" query.
func irTerms(rs []*ast.Term) ([]*ast.Term, error) {
	var out []*ast.Term
	for _, r := range rs {
		obj, ok := r.Value.(ast.Object)
		if !ok {
			return nil, fmt.Errorf("warden-ir: result %v is not a binding object", r)
		}
		if v := obj.Get(ast.InternedTerm(irQueryVar)); v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// irResults turns the result set of a planned "x = ref" query into what rego's ResultSet
// holds for ref: its value as JSON-like Go values, numbers as json.Number.
func irResults(rs []*ast.Term) ([]any, error) {
	terms, err := irTerms(rs)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, v := range terms {
		j, err := ast.JSONWithOpt(v.Value, ast.JSONOpt{})
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

func nowTerm(now time.Time) *ast.Term {
	return ast.NumberTerm(json.Number(strconv.FormatInt(now.UnixNano(), 10)))
}
