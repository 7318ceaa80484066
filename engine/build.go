package engine

// How New builds an Engine: one function a step, in the order New takes them.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// New loads, checks and compiles the policies of cfg. A policy that does not parse or
// compile, or whose metadata is incomplete, is an error naming file:line:col; so is a
// user module that calls a side-effecting built-in (see deniedBuiltins) or declares a
// namespace reserved for the built-in pack. Settings that no policy reads, or of
// another type than the policy's default, are a *SettingsError.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	e := newEngine(cfg)
	src, err := loadSources(cfg.Sources)
	if err != nil {
		return nil, err
	}
	p, err := admitModules(src, cfg.Only, cfg.Actions)
	if err != nil {
		return nil, err
	}
	e.policies, e.actions = p.policies, cfg.Actions
	if e.byType, err = p.aggregateByType(); err != nil {
		return nil, err
	}
	c, err := compile(p.modules)
	if err != nil {
		return nil, err
	}
	// Settings are read through the rules as written: the memo's rewrite below hides the
	// functions it wraps behind a built-in call.
	e.settings = settingsSchema(c)
	memoRefs, merrs := memoCandidates(c)
	if len(merrs) > 0 {
		return nil, errors.Join(merrs...)
	}
	settings, err := e.storeSettings(cfg.Settings)
	if err != nil {
		return nil, err
	}
	if !cfg.Baseline {
		if c, err = e.reuseAcrossResources(ctx, c, p.modules, memoRefs); err != nil {
			return nil, err
		}
	}
	e.compiler = c
	if err := e.prepareTypes(ctx, cfg.Baseline); err != nil {
		return nil, err
	}
	if !cfg.Baseline {
		if err := e.planFastPath(ctx, settings); err != nil {
			return nil, err
		}
	}
	e.version = packVersion(p.packed)
	e.log.Debug("policies compiled", "policies", len(e.policies), "types", len(e.byType), "settings", len(e.settings))
	return e, nil
}

// newEngine is an Engine with cfg's limits and defaults, and nothing loaded.
func newEngine(cfg Config) *Engine {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return &Engine{workers: workers, log: log,
		timeout: orDefault(cfg.EvalTimeout, DefaultEvalTimeout), memLimit: orDefault(cfg.MemoryLimit, DefaultMemoryLimit),
		maxAborts: orDefault(cfg.MaxAborts, DefaultMaxAborts)}
}

// sources are the modules of every source, in order, and which of them are the built-in
// pack's.
type sources struct {
	modules []*Module
	builtin map[*Module]bool
	// builtinPkgs are the built-in policies' packages, reserved for them.
	builtinPkgs []string
}

// loadSources parses every module of every source. A file name loaded twice is an
// error: compiled modules are keyed by name, so one would hide the other.
func loadSources(srcs []Source) (sources, error) {
	out := sources{builtin: map[*Module]bool{}}
	var errs []error
	loadedFrom := map[string]string{} // file name → its source
	for _, src := range srcs {
		ms, err := LoadModules(src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range ms {
			if prev, dup := loadedFrom[m.File]; dup {
				errs = append(errs, &PolicyError{File: m.File, Msg: fmt.Sprintf("loaded twice, from %s and from %s: a policy directory may not shadow another (is the built-in pack given again with --policies?)", prev, sourceName(src))})
			}
			loadedFrom[m.File] = sourceName(src)
		}
		out.modules = append(out.modules, ms...)
		if !isBuiltinSource(src) {
			continue
		}
		for _, m := range ms {
			out.builtin[m] = true
			if p, err := policyOf(m); err == nil && p != nil && !m.Test {
				out.builtinPkgs = append(out.builtinPkgs, p.Package)
			}
		}
	}
	if len(errs) > 0 {
		return sources{}, errors.Join(errs...)
	}
	return out, nil
}

// pack is what New compiles: the modules by file name (the generated ones too, once
// aggregateByType has run), the same loaded modules in load order, and the policies
// among them that are run.
type pack struct {
	modules  map[string]*ast.Module
	packed   []*Module
	policies []*Policy // sorted by id
}

// admitModules keeps the modules that may be compiled and the policies that are run:
// a user module must stay out of the namespaces reserved for the built-in pack (a user
// module there could inject findings under built-in ids or break built-in policies), a
// policy's metadata must be complete, its id and package its own, and its action in the
// catalog when one is given. Test modules are left out; only, when set, keeps just the
// policies with those ids.
func admitModules(src sources, only []string, actions map[string][]ActionParam) (pack, error) {
	p := pack{modules: map[string]*ast.Module{}}
	var errs []error
	byID := map[string]*Policy{}
	byPkg := map[string]*Policy{}
	res := newReserved(src.builtinPkgs)
	for _, m := range src.modules {
		if m.Test {
			continue
		}
		if !src.builtin[m] {
			if rerrs := res.check(m); len(rerrs) > 0 {
				errs = append(errs, rerrs...)
				continue
			}
		}
		p.modules[m.File] = m.Parsed
		p.packed = append(p.packed, m)
		pol, err := policyOf(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if pol == nil || (len(only) > 0 && !slices.Contains(only, pol.ID)) {
			continue
		}
		if prev, ok := byID[pol.ID]; ok {
			errs = append(errs, &PolicyError{File: pol.File, Msg: fmt.Sprintf("policy id %s is already used by %s", pol.ID, prev.File)})
			continue
		}
		if prev, ok := byPkg[pol.Package]; ok {
			errs = append(errs, &PolicyError{File: pol.File, Msg: fmt.Sprintf("package %s is already used by %s: give each policy its own package", pol.Package, prev.File)})
			continue
		}
		byID[pol.ID], byPkg[pol.Package] = pol, pol
		p.policies = append(p.policies, pol)
	}
	if actions != nil {
		errs = append(errs, checkActions(p.policies, actions)...)
	}
	if len(errs) > 0 {
		return pack{}, errors.Join(errs...)
	}
	slices.SortFunc(p.policies, func(a, b *Policy) int { return strings.Compare(a.ID, b.ID) })
	return p, nil
}

// aggregateByType generates one module per resource type, which gathers the deny sets
// of every policy for that type, so that a resource costs one evaluation, not one per
// policy. The modules join the pack; the answer is what runs for each type.
func (p *pack) aggregateByType() (map[string]*typeEval, error) {
	types := map[string][]int{}
	for i, pol := range p.policies {
		for _, t := range pol.ResourceTypes {
			types[t] = append(types[t], i)
		}
	}
	byType := map[string]*typeEval{}
	for t, idx := range types {
		te := &typeEval{typ: t, index: idx}
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\n", aggregatePackage(t))
		for i, pi := range idx {
			pol := p.policies[pi]
			te.policies = append(te.policies, pol)
			fmt.Fprintf(&b, "results contains [%d, v] if {\n\tsome v in data.%s.deny\n}\n\n", i, pol.Package)
		}

		file := engineModuleDir + t + ".rego"
		m, err := ast.ParseModuleWithOpts(file, b.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			return nil, fmt.Errorf("generate evaluation module for %s: %w", t, err)
		}
		p.modules[file] = m
		byType[t] = te
	}
	return byType, nil
}

// compile compiles the pack as written, in the sandbox's capabilities.
func compile(modules map[string]*ast.Module) (*ast.Compiler, error) {
	c := ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1).WithCapabilities(capabilities())
	c.Compile(modules)
	if c.Failed() {
		for _, ce := range c.Errors {
			deniedBuiltinError(ce)
		}
		return nil, errors.Join(regoErrors("", c.Errors)...)
	}
	return c, nil
}

// storeSettings checks the settings against what the policies read and stores them
// as data.warden.config; nil settings are none. The answer is the settings stored.
func (e *Engine) storeSettings(settings map[string]any) (map[string]any, error) {
	if settings == nil {
		settings = map[string]any{}
	}
	if serrs := e.CheckSettings(settings); len(serrs) > 0 {
		return nil, &SettingsError{Errors: serrs}
	}
	e.store = inmem.NewFromObject(map[string]any{"warden": map[string]any{"config": settings}})
	return settings, nil
}

// reuseAcrossResources folds the values of rules that read no input (fold.go) and
// memoizes the functions marked memo (memo.go). Both need the pack compiled again from
// rewritten modules: the answer is that compiler, or c when nothing was rewritten.
func (e *Engine) reuseAcrossResources(ctx context.Context, c *ast.Compiler, modules map[string]*ast.Module, memoRefs []ast.Ref) (*ast.Compiler, error) {
	consts, err := foldConstants(ctx, c, e.store)
	if err != nil {
		return nil, fmt.Errorf("fold constant rules: %w", err)
	}
	rewritten := foldInto(modules, consts)
	var memoFuncs []*memoFunc
	var memoDecls map[string]*ast.Builtin
	if len(memoRefs) > 0 {
		rewritten, memoFuncs, memoDecls, err = rewriteForMemo(rewritten, memoRefs)
		if err != nil {
			return nil, err
		}
	}
	if len(consts) > 0 || len(memoFuncs) > 0 {
		c = ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1).WithCapabilities(capabilities()).WithBuiltins(memoDecls)
		c.Compile(rewritten)
		if c.Failed() {
			return nil, fmt.Errorf("compile the pack with its constants folded and memo: %w", errors.Join(regoErrors("", c.Errors)...))
		}
	}
	if len(memoFuncs) > 0 {
		m, err := newMemo(c, e.store, memoFuncs, memoDecls)
		if err != nil {
			return nil, err
		}
		e.memo = m
	}
	e.log.Debug("reuse across resources", "folded_rules", len(consts), "memo_functions", len(memoFuncs))
	return c, nil
}

// prepareTypes prepares each type's query for topdown. Under baseline there is
// nothing to plan for irvm.
func (e *Engine) prepareTypes(ctx context.Context, baseline bool) error {
	for t, te := range e.byType {
		q, err := e.prepare(ctx, "data."+aggregatePackage(t)+".results")
		if err != nil {
			return fmt.Errorf("prepare policies for %s: %w", t, err)
		}
		te.all = q
		te.planned = baseline
	}
	return nil
}

// planFastPath readies what irvm runs with: the settings as its data, and a planned
// program for each memoized function that can be planned (one that cannot is
// evaluated by topdown). The types' queries are planned on first use.
func (e *Engine) planFastPath(ctx context.Context, settings map[string]any) error {
	data, err := ast.InterfaceToValue(map[string]any{"warden": map[string]any{"config": settings}})
	if err != nil {
		return fmt.Errorf("settings as data: %w", err)
	}
	e.data = data
	if e.memo == nil {
		return nil
	}
	e.memo.data = data
	for _, f := range e.memo.funcs {
		args := make([]string, f.arity)
		for i := range args {
			args[i] = fmt.Sprintf("input[%d]", i)
		}
		prog, err := e.planProgram(ctx, fmt.Sprintf("%s(%s)", f.impl, strings.Join(args, ", ")))
		if err != nil {
			e.log.Debug("a memoized function is evaluated by topdown", "function", f.ref, "reason", err)
			continue
		}
		f.prog = prog
	}
	return nil
}
