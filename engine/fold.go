package engine

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// A rule without arguments that reads no input (a set of port numbers, a setting with its
// default, a regex built from settings) has one value for every resource of a scan, but
// OPA computes it again in each resource's query, and a policy pack is full of them. The
// engine computes each once when it is built and compiles the value in place of the
// rule's body. Only what is pure by the memo's rule (impure) is folded, and only when it
// evaluates to a value: a rule that fails or is undefined stays as written, so that it
// fails or is undefined per resource as before.

// foldConstants evaluates every pure single-value rule without arguments of the compiled
// modules and returns their values by ref.
func foldConstants(ctx context.Context, c *ast.Compiler, store storage.Store) (map[string]*ast.Term, error) {
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Abort(ctx, txn)
	out := map[string]*ast.Term{}
	tried := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(c.Modules)) {
		if strings.HasPrefix(name, engineModuleDir) {
			continue
		}
		for _, r := range c.Modules[name].Rules {
			if len(r.Head.Args) > 0 || r.Head.RuleKind() != ast.SingleValue || !r.Head.Ref().IsGround() {
				continue
			}
			ref := r.Ref()
			if tried[ref.String()] {
				continue
			}
			tried[ref.String()] = true
			if !foldable(c, ref) || impure(c, ref) != "" {
				continue
			}
			x := ast.VarTerm("x")
			q := topdown.NewQuery(ast.NewBody(ast.Equality.Expr(x, ast.NewTerm(ref)))).
				WithCompiler(c).WithStore(store).WithTransaction(txn).WithStrictBuiltinErrors(true)
			rs, err := q.Run(ctx)
			if err != nil || len(rs) != 1 {
				continue
			}
			if v, ok := rs[0][ast.Var("x")]; ok && v.IsGround() {
				out[ref.String()] = v
			}
		}
	}
	return out, nil
}

// foldable reports whether every rule of ref is a single-value rule without arguments:
// a ref that is also a prefix of other rules (p := 1 and p.q := 2) is left alone.
func foldable(c *ast.Compiler, ref ast.Ref) bool {
	rules := c.GetRulesExact(ref)
	if len(rules) == 0 || len(c.GetRulesWithPrefix(ref)) != len(rules) {
		return false
	}
	for _, r := range rules {
		if len(r.Head.Args) > 0 || r.Head.RuleKind() != ast.SingleValue {
			return false
		}
	}
	return true
}

// foldInto replaces, in copies of the modules, the rules of each folded ref with one rule
// whose value is the folded value. The first module defining the ref gets the rule.
func foldInto(mods map[string]*ast.Module, consts map[string]*ast.Term) map[string]*ast.Module {
	if len(consts) == 0 {
		return mods
	}
	out := make(map[string]*ast.Module, len(mods))
	placed := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(mods)) {
		m := mods[name]
		touched := false
		for _, r := range m.Rules {
			if len(r.Head.Args) == 0 {
				if _, ok := consts[m.Package.Path.Extend(r.Head.Ref()).String()]; ok {
					touched = true
					break
				}
			}
		}
		if !touched {
			out[name] = m
			continue
		}
		cp := m.Copy()
		rules := cp.Rules[:0]
		for _, r := range cp.Rules {
			full := m.Package.Path.Extend(r.Head.Ref()).String()
			v, ok := consts[full]
			if len(r.Head.Args) > 0 || !ok {
				rules = append(rules, r)
				continue
			}
			if placed[full] {
				continue
			}
			placed[full] = true
			head := &ast.Head{Name: r.Head.Name, Reference: r.Head.Ref().Copy(), Value: v, Assign: true, Location: r.Head.Location}
			rules = append(rules, &ast.Rule{Head: head, Body: ast.NewBody(ast.NewExpr(ast.BooleanTerm(true))), Module: cp, Location: r.Location})
		}
		cp.Rules = rules
		out[name] = cp
	}
	return out
}
