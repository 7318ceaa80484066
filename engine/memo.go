package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/warden-sec/warden/engine/internal/irvm"
)

// A helper function annotated
//
//	# METADATA
//	# custom:
//	#   memo: true
//
// is evaluated once per distinct argument list across the resources of a scan, not once
// per resource: OPA caches a function's result only within one query, and a scan runs one
// query per resource, while the same AWS-managed policy document, trust template or rule
// shape comes back thousands of times. The function must be pure: neither it nor anything
// it calls may read input, call a non-deterministic built-in or use `with`; New refuses
// the annotation otherwise, so that a reused result is always the one evaluation would
// give. The Rego stays as written (`opa test` runs it unchanged); only the engine's
// compiled copy calls through the memo.
const memoKey = "memo"

// memoMaxEntries bounds one function's memo; when it is full it starts again empty, so
// that a snapshot without repetition holds little and a long scan adapts.
const memoMaxEntries = 1 << 14

// memoFunc is one memoized function: its original rules renamed to impl, a generated
// rule of the original name calling builtin, and the results seen so far.
type memoFunc struct {
	ref     ast.Ref // data.…f
	impl    ast.Ref // data.…f__impl
	builtin string
	arity   int
	query   ast.Body      // x = impl(input[0], …), compiled
	prog    *irvm.Program // the same, planned; nil: topdown only
	memo    *memo

	mu      sync.RWMutex
	entries map[int][]memoEntry
	size    int

	hits, misses atomic.Int64
	// The current window's calls and hits, the calls still to bypass, and how many were.
	window, windowHits, paused atomic.Int64
	bypassed                   atomic.Int64
}

type memoEntry struct {
	args    []*ast.Term
	result  *ast.Term // nil: undefined
	defined bool
}

// memo is the engine's set of memoized functions.
type memo struct {
	funcs    []*memoFunc
	store    storage.Store
	compiler *ast.Compiler
	builtins map[string]*topdown.Builtin
	data     ast.Value // the store's data, for irvm
}

// MemoStat is how often a memoized function's result was reused.
type MemoStat struct {
	Function     string
	Hits, Misses int64
	// Bypassed counts calls evaluated without the memo while it paused for a low
	// hit rate.
	Bypassed int64
}

// Fallbacks is how many resource evaluations since the engine was built irvm could not
// finish (a built-in error, a timeout, a statement it does not run) and topdown did
// again: 0 on the pack, which a test holds it to.
func (e *Engine) Fallbacks() int64 { return e.irFallbacks.Load() }

// MemoStats reports each memoized function's hits and misses since the engine was built,
// in function order; empty when the memo is off.
func (e *Engine) MemoStats() []MemoStat {
	if e.memo == nil {
		return nil
	}
	out := make([]MemoStat, 0, len(e.memo.funcs))
	for _, f := range e.memo.funcs {
		out = append(out, MemoStat{Function: f.ref.String(), Hits: f.hits.Load(), Misses: f.misses.Load(), Bypassed: f.bypassed.Load()})
	}
	return out
}

// memoCandidates lists the functions of the compiled modules annotated memo: true, by
// ref, and checks that each is pure. An annotation on a rule that is not a function, or on
// an impure one, is an error naming where it is.
func memoCandidates(c *ast.Compiler) ([]ast.Ref, []error) {
	var refs []ast.Ref
	var errs []error
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(c.Modules)) {
		m := c.Modules[name]
		for _, r := range m.Rules {
			if !annotatedMemo(r) {
				continue
			}
			ref := r.Ref().GroundPrefix()
			if len(r.Head.Args) == 0 {
				errs = append(errs, &PolicyError{File: r.Location.File, Line: r.Location.Row, Col: r.Location.Col, Msg: fmt.Sprintf("%s: memo: true needs a function (a rule with arguments): a rule without arguments is computed once per resource already", ref)})
				continue
			}
			if seen[ref.String()] {
				continue
			}
			seen[ref.String()] = true
			if why := impure(c, ref); why != "" {
				errs = append(errs, &PolicyError{File: r.Location.File, Line: r.Location.Row, Col: r.Location.Col, Msg: fmt.Sprintf("%s cannot be memo: true: %s, so its result may differ between resources with the same arguments", ref, why)})
				continue
			}
			refs = append(refs, ref)
		}
	}
	return refs, errs
}

func annotatedMemo(r *ast.Rule) bool {
	for _, a := range r.Annotations {
		if v, ok := a.Custom[memoKey].(bool); ok && v {
			return true
		}
	}
	return false
}

// impure says why the function at ref, or a rule it depends on, may give different
// results for the same arguments; "" when it cannot.
func impure(c *ast.Compiler, ref ast.Ref) string {
	nondeterministic := map[string]*ast.Builtin{}
	for _, b := range capabilities().Builtins {
		if b.Nondeterministic {
			nondeterministic[b.Name] = b
		}
	}
	visited := map[*ast.Rule]bool{}
	var why string
	var visit func(r *ast.Rule)
	visit = func(r *ast.Rule) {
		if why != "" || visited[r] {
			return
		}
		visited[r] = true
		for cur := r; cur != nil; cur = cur.Else {
			where := fmt.Sprintf("%s:%d", cur.Location.File, cur.Location.Row)
			ast.WalkRefs(cur, func(x ast.Ref) bool {
				if why == "" && x[0].Equal(ast.InputRootDocument) {
					why = fmt.Sprintf("%s reads input at %s", r.Ref(), where)
				}
				return why != ""
			})
			ast.WalkExprs(cur, func(x *ast.Expr) bool {
				if why != "" {
					return true
				}
				if len(x.With) > 0 {
					why = fmt.Sprintf("%s uses with at %s", r.Ref(), where)
					return true
				}
				if x.IsCall() {
					if b, ok := nondeterministic[x.Operator().String()]; ok {
						why = fmt.Sprintf("%s calls the non-deterministic %s at %s", r.Ref(), b.Name, where)
					}
				}
				return false
			})
		}
		for dep := range c.Graph.Dependencies(r) {
			if d, ok := dep.(*ast.Rule); ok {
				visit(d)
			}
		}
	}
	for _, r := range c.GetRulesExact(ref) {
		visit(r)
	}
	return why
}

const memoImplSuffix = "__memo_impl"

// rewriteForMemo returns copies of the modules that define the functions of refs, with
// each function renamed to …__memo_impl and a rule of its old name calling its memo
// built-in in its place; the other modules are returned as they are. The built-ins are
// declared in decls.
func rewriteForMemo(mods map[string]*ast.Module, refs []ast.Ref) (map[string]*ast.Module, []*memoFunc, map[string]*ast.Builtin, error) {
	out := make(map[string]*ast.Module, len(mods))
	decls := map[string]*ast.Builtin{}
	var funcs []*memoFunc
	want := map[string]ast.Ref{}
	for _, r := range refs {
		want[r.String()] = r
	}
	for _, name := range slices.Sorted(maps.Keys(mods)) {
		m := mods[name]
		var cp *ast.Module
		done := map[string]bool{}
		for i, r := range m.Rules {
			full := m.Package.Path.Extend(r.Head.Ref()).GroundPrefix()
			if _, ok := want[full.String()]; !ok || len(r.Head.Args) == 0 {
				continue
			}
			if cp == nil {
				cp = m.Copy()
			}
			rule := cp.Rules[i]
			local := rule.Head.Ref()
			implLocal := local.Copy()
			implLocal[len(implLocal)-1] = ast.VarTerm(string(local[len(local)-1].Value.(ast.Var)) + memoImplSuffix)
			if _, isVar := local[len(local)-1].Value.(ast.Var); !isVar {
				return nil, nil, nil, fmt.Errorf("memo: %s: the function's name must end in a plain name", full)
			}
			for cur := rule; cur != nil; cur = cur.Else {
				cur.Head.Reference = implLocal.Copy()
				cur.Head.Name = implLocal[len(implLocal)-1].Value.(ast.Var)
			}
			if done[full.String()] {
				continue
			}
			done[full.String()] = true
			f := &memoFunc{
				ref:     full,
				impl:    m.Package.Path.Extend(implLocal),
				builtin: fmt.Sprintf("warden_memo_%d", len(funcs)),
				arity:   len(rule.Head.Args),
				entries: map[int][]memoEntry{},
			}
			funcs = append(funcs, f)
			args := make([]string, f.arity)
			for j := range args {
				args[j] = fmt.Sprintf("a%d", j)
			}
			src := fmt.Sprintf("package %s\n\n%s(%s) := r if {\n\tr := %s(%s)\n}\n", strings.TrimPrefix(m.Package.Path.String(), "data."), local, strings.Join(args, ", "), f.builtin, strings.Join(args, ", "))
			wm, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				return nil, nil, nil, fmt.Errorf("memo: generate the wrapper of %s: %w", full, err)
			}
			w := wm.Rules[0]
			w.Module = cp
			w.SetLoc(rule.Location)
			cp.Rules = append(cp.Rules, w)
			anys := make([]types.Type, f.arity)
			for j := range anys {
				anys[j] = types.A
			}
			decls[f.builtin] = &ast.Builtin{Name: f.builtin, Decl: types.NewFunction(anys, types.A)}
		}
		if cp != nil {
			out[name] = cp
		} else {
			out[name] = m
		}
	}
	return out, funcs, decls, nil
}

// newMemo prepares the evaluation of each function's impl in the compiled pack.
func newMemo(c *ast.Compiler, store storage.Store, funcs []*memoFunc, decls map[string]*ast.Builtin) (*memo, error) {
	m := &memo{funcs: funcs, store: store, compiler: c, builtins: map[string]*topdown.Builtin{}}
	for _, f := range funcs {
		f.memo = m
		args := make([]*ast.Term, f.arity)
		for j := range args {
			args[j] = ast.RefTerm(ast.InputRootDocument, ast.InternedTerm(j))
		}
		call := ast.NewExpr(append([]*ast.Term{ast.NewTerm(f.impl)}, append(args, ast.VarTerm("x"))...))
		q, err := c.QueryCompiler().WithUnsafeBuiltins(nil).Compile(ast.NewBody(call))
		if err != nil {
			return nil, fmt.Errorf("memo: prepare %s: %w", f.ref, err)
		}
		f.query = q
		m.builtins[f.builtin] = &topdown.Builtin{Decl: decls[f.builtin], Func: f.topdown}
	}
	return m, nil
}

// options registers the memo built-ins with a prepared query.
func (m *memo) options() []func(*rego.Rego) {
	var opts []func(*rego.Rego)
	for _, f := range m.funcs {
		opts = append(opts, rego.FunctionDyn(&rego.Function{Name: f.builtin, Decl: m.builtins[f.builtin].Decl.Decl}, f.call))
	}
	return opts
}

func (f *memoFunc) topdown(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
	t, err := f.call(rego.BuiltinContext(bctx), operands)
	if err != nil || t == nil {
		return err
	}
	return iter(t)
}

// call returns the function's result for args: the remembered one, or the impl's,
// evaluated now and remembered. nil is undefined. An error is not remembered.
func (f *memoFunc) call(bctx rego.BuiltinContext, args []*ast.Term) (*ast.Term, error) {
	if !f.trial() {
		f.bypassed.Add(1)
		res, _, err := f.eval(bctx, args)
		return res, err
	}
	h := 0
	for _, a := range args {
		h = h*31 + a.Hash()
	}
	f.mu.RLock()
	for _, e := range f.entries[h] {
		if termsEqual(e.args, args) {
			f.mu.RUnlock()
			f.hits.Add(1)
			f.windowHits.Add(1)
			if !e.defined {
				return nil, nil
			}
			return e.result, nil
		}
	}
	f.mu.RUnlock()
	f.misses.Add(1)
	res, defined, err := f.eval(bctx, args)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.size >= memoMaxEntries {
		f.entries, f.size = map[int][]memoEntry{}, 0
	}
	f.entries[h] = append(f.entries[h], memoEntry{args: slices.Clone(args), result: res, defined: defined})
	f.size++
	f.mu.Unlock()
	return res, nil
}

// Where arguments do not repeat (a snapshot whose documents are all different) the memo
// costs a hash, an insert and a bigger heap for the GC to walk, and saves nothing: after
// each window of memoWindow calls, a function that hit less than memoMinHitRate of them
// stops remembering for memoPause calls, and then tries again.
const (
	memoWindow     = 4096
	memoMinHitRate = 0.3
	memoPause      = 1 << 16
)

// trial reports whether this call goes through the memo, and closes windows.
func (f *memoFunc) trial() bool {
	if f.paused.Load() > 0 {
		if f.paused.Add(-1) > 0 {
			return false
		}
		return true // the pause is over: a new window starts
	}
	if n := f.window.Add(1); n == memoWindow {
		hits := f.windowHits.Swap(0)
		f.window.Store(0)
		if float64(hits) < memoMinHitRate*memoWindow {
			f.mu.Lock()
			f.entries, f.size = map[int][]memoEntry{}, 0
			f.mu.Unlock()
			f.paused.Store(memoPause)
		}
	}
	return true
}

func termsEqual(a, b []*ast.Term) bool {
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// eval runs the impl on args in a query of its own. The impl reads no input, so the
// arguments travel as input.
func (f *memoFunc) eval(bctx rego.BuiltinContext, args []*ast.Term) (*ast.Term, bool, error) {
	ctx := bctx.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if f.prog != nil {
		rs, err := f.prog.Eval(ctx, ast.NewArray(args...), irvm.Options{Time: bctx.Time, Cancel: bctx.Cancel, Capabilities: bctx.Capabilities, Data: f.memo.data})
		if err == nil {
			vals, err := irTerms(rs)
			if err == nil && len(vals) <= 1 {
				if len(vals) == 0 {
					return nil, false, nil
				}
				return vals[0], true, nil
			}
		}
		// Whatever irvm cannot do, topdown does below.
	}
	m := f.memo
	txn, err := m.store.NewTransaction(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("memo: %s: open the store: %w", f.ref, err)
	}
	defer m.store.Abort(ctx, txn)
	q := topdown.NewQuery(f.query).
		WithCompiler(m.compiler).
		WithStore(m.store).
		WithTransaction(txn).
		WithInput(ast.ArrayTerm(args...)).
		WithBuiltins(m.builtins).
		WithStrictBuiltinErrors(true).
		WithCancel(bctx.Cancel).
		WithPrintHook(bctx.PrintHook)
	var out *ast.Term
	n := 0
	err = q.Iter(ctx, func(qr topdown.QueryResult) error {
		n++
		for v, t := range qr {
			if v.Equal(ast.Var("x")) || strings.HasPrefix(string(v), "x") {
				out = t
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if n == 0 || out == nil {
		return nil, false, nil
	}
	return out, true, nil
}
