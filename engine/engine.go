// Package engine compiles Rego policies once and evaluates snapshots into findings: each
// resource only against the policies for its type, in parallel, in a deterministic order.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// Config says which policies to load and how to run them.
type Config struct {
	// Sources are the policy trees: usually the embedded pack and the user's --policies dirs.
	Sources []Source
	// Settings become data.warden.config, the policies' thresholds.
	Settings map[string]any
	// Workers is the number of evaluating goroutines; 0 means one per core.
	Workers int
	// Only, when set, keeps just the policies with these ids.
	Only   []string
	Logger *slog.Logger
}

// Engine holds compiled policies, ready to evaluate resources. It is safe for concurrent use.
type Engine struct {
	policies []*Policy
	byType   map[string]*typeEval
	workers  int
	log      *slog.Logger
	store    storage.Store
	compiler *ast.Compiler
}

// typeEval is what runs for one resource type: every applicable policy in one query.
type typeEval struct {
	typ      string
	policies []*Policy
	all      rego.PreparedEvalQuery

	once   sync.Once
	single []rego.PreparedEvalQuery // per policy, prepared on first need to isolate an error
	err    error
}

// New loads, checks and compiles the policies of cfg. A policy that does not parse or
// compile, or whose metadata is incomplete, is an error naming file:line:col.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	mods, err := LoadModules(cfg.Sources...)
	if err != nil {
		return nil, err
	}
	e := &Engine{byType: map[string]*typeEval{}, workers: workers, log: log}
	byID := map[string]*Policy{}
	byPkg := map[string]*Policy{}
	compileMods := map[string]*ast.Module{}
	var errs []error
	for _, m := range mods {
		if m.Test {
			continue
		}
		compileMods[m.File] = m.Parsed
		p, err := policyOf(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p == nil || (len(cfg.Only) > 0 && !slices.Contains(cfg.Only, p.ID)) {
			continue
		}
		if prev, ok := byID[p.ID]; ok {
			errs = append(errs, &PolicyError{File: p.File, Msg: fmt.Sprintf("policy id %s is already used by %s", p.ID, prev.File)})
			continue
		}
		if prev, ok := byPkg[p.Package]; ok {
			errs = append(errs, &PolicyError{File: p.File, Msg: fmt.Sprintf("package %s is already used by %s: give each policy its own package", p.Package, prev.File)})
			continue
		}
		byID[p.ID], byPkg[p.Package] = p, p
		e.policies = append(e.policies, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(e.policies, func(a, b *Policy) int { return strings.Compare(a.ID, b.ID) })

	// One generated module per resource type gathers the deny sets of every policy for
	// that type, so that a resource costs one evaluation, not one per policy.
	types := map[string][]*Policy{}
	for _, p := range e.policies {
		for _, t := range p.ResourceTypes {
			types[t] = append(types[t], p)
		}
	}
	for t, ps := range types {
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\n", aggregatePackage(t))
		for i, p := range ps {
			fmt.Fprintf(&b, "results contains [%d, v] if {\n\tsome v in data.%s.deny\n}\n\n", i, p.Package)
		}

		file := "warden-engine/" + t + ".rego"
		m, err := ast.ParseModuleWithOpts(file, b.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			return nil, fmt.Errorf("generate evaluation module for %s: %w", t, err)
		}
		compileMods[file] = m
		e.byType[t] = &typeEval{typ: t, policies: ps}
	}

	c := ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1)
	c.Compile(compileMods)
	if c.Failed() {
		return nil, errors.Join(regoErrors("", c.Errors)...)
	}
	e.compiler = c
	settings := cfg.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	e.store = inmem.NewFromObject(map[string]any{"warden": map[string]any{"config": settings}})
	for t, te := range e.byType {
		q, err := e.prepare(ctx, "data."+aggregatePackage(t)+".results")
		if err != nil {
			return nil, fmt.Errorf("prepare policies for %s: %w", t, err)
		}
		te.all = q
	}
	log.Debug("policies compiled", "policies", len(e.policies), "types", len(e.byType))
	return e, nil
}

func (e *Engine) prepare(ctx context.Context, query string) (rego.PreparedEvalQuery, error) {
	return rego.New(
		rego.Query(query),
		rego.Compiler(e.compiler),
		rego.Store(e.store),
		rego.SetRegoVersion(ast.RegoV1),
	).PrepareForEval(ctx)
}

func aggregatePackage(typ string) string {
	return "warden_engine.t_" + strings.NewReplacer(".", "_", "-", "_").Replace(typ)
}

// Policies returns the loaded policies, sorted by id.
func (e *Engine) Policies() []*Policy { return e.policies }

// PoliciesFor returns the policies evaluated on a resource type.
func (e *Engine) PoliciesFor(typ string) []*Policy {
	if te := e.byType[typ]; te != nil {
		return te.policies
	}
	return nil
}

// evalResource evaluates one resource, given as an OPA input value, and returns its findings.
func (e *Engine) evalResource(ctx context.Context, te *typeEval, res *snapshot.Resource, input ast.Value, opts []rego.EvalOption) ([]findings.Finding, []findings.EvalError) {
	rs, err := te.all.Eval(ctx, append(opts, rego.EvalParsedInput(input))...)
	if err != nil {
		return e.evalEach(ctx, te, res, input, opts)
	}
	var out []findings.Finding
	for _, r := range rs {
		for _, ex := range r.Expressions {
			pairs, _ := ex.Value.([]any)
			for _, pv := range pairs {
				pair, _ := pv.([]any)
				if len(pair) != 2 {
					continue
				}
				idx, _ := pair[0].(json.Number).Int64()
				out = append(out, makeFinding(te.policies[idx], res, pair[1]))
			}
		}
	}
	return dedupe(out), nil
}

// evalEach evaluates the type's policies one by one, after the combined query failed,
// so that one broken policy costs only its own result.
func (e *Engine) evalEach(ctx context.Context, te *typeEval, res *snapshot.Resource, input ast.Value, opts []rego.EvalOption) ([]findings.Finding, []findings.EvalError) {
	te.once.Do(func() {
		for _, p := range te.policies {
			q, err := e.prepare(ctx, "data."+p.Package+".deny")
			if err != nil {
				te.err = err
				return
			}
			te.single = append(te.single, q)
		}
	})
	if te.err != nil {
		return nil, []findings.EvalError{{Resource: res.UID, Error: te.err.Error()}}
	}
	var out []findings.Finding
	var errs []findings.EvalError
	for i, q := range te.single {
		p := te.policies[i]
		rs, err := q.Eval(ctx, append(opts, rego.EvalParsedInput(input))...)
		if err != nil {
			errs = append(errs, findings.EvalError{Policy: p.ID, Resource: res.UID, Error: err.Error()})
			continue
		}
		for _, r := range rs {
			for _, ex := range r.Expressions {
				vs, _ := ex.Value.([]any)
				for _, v := range vs {
					out = append(out, makeFinding(p, res, v))
				}
			}
		}
	}
	return dedupe(out), errs
}

// makeFinding turns one element of a deny set into a finding.
func makeFinding(p *Policy, res *snapshot.Resource, v any) findings.Finding {
	f := findings.Finding{
		Policy: p.ID, Title: p.Title, Severity: p.Severity,
		Resource: res.UID, ResourceType: res.Type, Account: res.Account, Region: res.Region, Scope: res.Scope,
		Remediation: p.Remediation, Frameworks: p.Frameworks, Status: findings.StatusOpen,
	}
	switch x := v.(type) {
	case string:
		f.Message, f.Key = x, x
	case map[string]any:
		for k, val := range x {
			switch k {
			case "msg":
				f.Message = fmt.Sprint(val)
			case "key":
				f.Key = scalarString(val)
			case "target":
				f.Target = fmt.Sprint(val)
			case "action":
				f.Remediation.Action = fmt.Sprint(val)
			default:
				if f.Details == nil {
					f.Details = map[string]any{}
				}
				f.Details[k] = val
			}
		}
	default:
		f.Key = scalarString(v)
	}
	if f.Message == "" {
		f.Message = p.Title
	}
	f.Fingerprint = findings.Fingerprint(p.ID, res.Account, res.UID, f.Key)
	return f
}

func scalarString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// dedupe drops findings whose fingerprint repeats within one resource's results.
func dedupe(fs []findings.Finding) []findings.Finding {
	if len(fs) < 2 {
		return fs
	}
	seen := make(map[string]bool, len(fs))
	out := fs[:0]
	for _, f := range fs {
		if !seen[f.Fingerprint] {
			seen[f.Fingerprint] = true
			out = append(out, f)
		}
	}
	return out
}
