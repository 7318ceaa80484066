// Package engine compiles Rego policies once and evaluates snapshots into findings: each
// resource only against the policies for its type, in parallel, in a deterministic order.
//
// How a resource is evaluated, fastest first:
//   - rules that read no input are folded into their values when the engine is built
//     (fold.go), and helper functions marked memo: true keep their results across
//     resources (memo.go);
//   - each type's query is planned by OPA into its IR and run natively by irvm;
//   - whatever irvm cannot finish (a built-in error, a timeout, `with`) is evaluated again
//     by OPA's topdown, and a failing resource's policies one by one, so that errors are
//     reported exactly as before.
//
// The Rego is never changed for users: `opa test` runs the pack as written, and
// Config.Baseline evaluates everything with topdown alone. Tests hold the decisions of
// both paths to be the same.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/warden-sec/warden/engine/internal/irvm"
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
	Only []string
	// EvalTimeout bounds one evaluation of one resource (all its policies at once, and
	// each policy alone after a failure): a policy that runs longer gets an eval error on
	// that resource. 0 means DefaultEvalTimeout; negative, no deadline.
	EvalTimeout time.Duration
	// MemoryLimit is the Go heap size, in bytes, past which the longest-running
	// evaluation is aborted with an eval error. 0 means DefaultMemoryLimit; negative,
	// no limit.
	MemoryLimit int64
	// MaxAborts is how many resources of one scan a policy may be aborted on (deadline
	// or memory limit) before it is no longer run in that scan; its remaining resources
	// get an eval error each. 0 means DefaultMaxAborts; negative, no such cut-off.
	MaxAborts int
	// Actions is the catalog of remediation actions (the remediator registry's, with
	// their params): when set, every policy's action must be in it or be notify or
	// manual, and declare in custom.remediation.params each param the action requires.
	// A violation's own "action" field is checked at evaluation.
	Actions map[string][]ActionParam
	// Baseline evaluates as the engine did before it learnt to reuse and compile: every
	// resource by OPA's topdown evaluator, with no folded constants (fold.go), no memo
	// (memo.go) and no planned programs (irvm). Decisions are the same either way; it
	// exists to measure what the rest saves, and as a way around a suspected fault.
	Baseline bool
	Logger   *slog.Logger
}

// Engine holds compiled policies, ready to evaluate resources. It is safe for concurrent use.
type Engine struct {
	policies  []*Policy
	byType    map[string]*typeEval
	workers   int
	log       *slog.Logger
	store     storage.Store
	compiler  *ast.Compiler
	settings  []Setting
	timeout   time.Duration // <= 0: none
	memLimit  int64         // <= 0: none
	maxAborts int           // <= 0: none
	// actions is the catalog policies were checked against; nil when none was given.
	actions map[string][]ActionParam
	version string
	memo    *memo // nil: no function is memoized
	// prepMu serialises preparing and planning queries, done lazily by workers: rego
	// sets options on the shared compiler as it prepares.
	prepMu sync.Mutex
	data   ast.Value
	// irFallbacks counts evaluations irvm could not finish, done again by topdown.
	irFallbacks atomic.Int64
}

// typeEval is what runs for one resource type: every applicable policy in one query.
type typeEval struct {
	typ      string
	policies []*Policy
	index    []int // of each policy in Engine.policies
	all      rego.PreparedEvalQuery

	// prog is the same query planned and run by irvm, nil when it could not be
	// planned; an evaluation it cannot finish falls back to all. It is planned on the
	// first resource of the type (planning every type costs ~0.3 s of CPU).
	planOnce sync.Once
	planned  bool
	prog     *irvm.Program

	once   sync.Once
	single []rego.PreparedEvalQuery // per policy, prepared on first need to isolate an error
	err    error
}

// program is te's planned query, planned on first use; nil when te is evaluated by
// topdown only.
func (e *Engine) program(ctx context.Context, te *typeEval) *irvm.Program {
	if te.planned {
		return nil
	}
	te.planOnce.Do(func() {
		prog, err := e.planProgram(context.WithoutCancel(ctx), "data."+aggregatePackage(te.typ)+".results")
		if err != nil {
			e.log.Debug("policies of a type are evaluated by topdown only", "type", te.typ, "reason", err)
			return
		}
		te.prog = prog
	})
	return te.prog
}

// findingsOf turns values of a type's results (sets of [policy index, violation]) into
// findings.
func (ev *evaluation) findingsOf(te *typeEval, res *snapshot.Resource, vals []any) ([]findings.Finding, []findings.EvalError) {
	var out []findings.Finding
	var errs []findings.EvalError
	for _, v := range vals {
		pairs, _ := v.([]any)
		for _, pv := range pairs {
			pair, _ := pv.([]any)
			if len(pair) != 2 {
				continue
			}
			idx, _ := pair[0].(json.Number).Int64()
			f, err := ev.e.makeFinding(te.policies[idx], res, pair[1])
			if err != nil {
				errs = append(errs, *err)
				continue
			}
			out = append(out, f)
		}
	}
	return dedupe(out), errs
}

// orDefault is v, or def when v is zero; a negative v (none) stays negative.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func (e *Engine) prepare(ctx context.Context, query string) (rego.PreparedEvalQuery, error) {
	e.prepMu.Lock()
	defer e.prepMu.Unlock()
	opts := []func(*rego.Rego){
		rego.Query(query),
		rego.Compiler(e.compiler),
		rego.Store(e.store),
		rego.SetRegoVersion(ast.RegoV1),
		// A built-in that fails (1/0, to_number("abc"), a malformed time) is an error
		// recorded against its policy, never an undefined value that hides a violation.
		rego.StrictBuiltinErrors(true),
	}
	if e.memo != nil {
		opts = append(opts, e.memo.options()...)
	}
	return rego.New(opts...).PrepareForEval(ctx)
}

// engineModuleDir is where the generated per-type modules are filed.
const engineModuleDir = "warden-engine/"

// enginePackage is the root of the generated per-type modules.
const enginePackage = "warden_engine"

func aggregatePackage(typ string) string {
	return enginePackage + ".t_" + strings.NewReplacer(".", "_", "-", "_").Replace(typ)
}

// Version names the policy pack the engine runs: "sha256:" and the hex digest of every
// compiled module's file name and source, in file name order. Test files are left out:
// they change no finding. The audit log records it when it changes.
func (e *Engine) Version() string { return e.version }

func packVersion(mods []*Module) string {
	sorted := slices.SortedFunc(slices.Values(mods), func(a, b *Module) int { return strings.Compare(a.File, b.File) })
	h := sha256.New()
	for _, m := range sorted {
		// Lengths first: no file name and source can run into the next pair.
		fmt.Fprintf(h, "%d:%s%d:", len(m.File), m.File, len(m.Source))
		h.Write(m.Source)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
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

// evaluation is one Scan or Evaluate call: its guard, its time, and how often each
// policy was aborted in it.
type evaluation struct {
	e      *Engine
	guard  *guard
	now    time.Time
	aborts []atomic.Int32 // by index in Engine.policies
}

func (e *Engine) newEvaluation(ctx context.Context, slots int, now time.Time) *evaluation {
	return &evaluation{e: e, guard: newGuard(ctx, slots, e.timeout, e.memLimit), now: now, aborts: make([]atomic.Int32, len(e.policies))}
}

func (ev *evaluation) close() { ev.guard.close() }

// tripped reports whether the policy was aborted on too many resources to run again.
func (ev *evaluation) tripped(policyIndex int) bool {
	return ev.e.maxAborts > 0 && int(ev.aborts[policyIndex].Load()) >= ev.e.maxAborts
}

// resource evaluates one resource, given as an OPA input value, in worker slot slot, and
// returns its findings and the policies that failed on it. The error is ctx's: a
// cancelled evaluation has no result, not a partial one.
func (ev *evaluation) resource(ctx context.Context, slot int, te *typeEval, res *snapshot.Resource, input ast.Value) ([]findings.Finding, []findings.EvalError, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(te.index, ev.tripped) {
		if prog := ev.e.program(ctx, te); prog != nil {
			vals, err := ev.guard.evalIR(ctx, slot, prog, input, ev.now, ev.e.data, ev.e.compiler.Capabilities())
			if err == nil {
				out, errs := ev.findingsOf(te, res, vals)
				return out, errs, nil
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			ev.e.irFallbacks.Add(1)
		}
		rs, err := ev.guard.eval(ctx, slot, te.all, input, ev.now)
		if err == nil {
			var vals []any
			for _, r := range rs {
				for _, ex := range r.Expressions {
					vals = append(vals, ex.Value)
				}
			}
			out, errs := ev.findingsOf(te, res, vals)
			return out, errs, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	return ev.each(ctx, slot, te, res, input)
}

// each evaluates the type's policies one by one, after the combined query failed, so
// that one broken policy costs only its own result, and its error names its own file
// and line rather than the generated module's.
func (ev *evaluation) each(ctx context.Context, slot int, te *typeEval, res *snapshot.Resource, input ast.Value) ([]findings.Finding, []findings.EvalError, error) {
	te.once.Do(func() {
		// Prepared once for the engine: a scan's cancellation must not spoil it.
		pctx := context.WithoutCancel(ctx)
		for _, p := range te.policies {
			q, err := ev.e.prepare(pctx, "data."+p.Package+".deny")
			if err != nil {
				te.err = err
				return
			}
			te.single = append(te.single, q)
		}
	})
	if te.err != nil {
		return nil, []findings.EvalError{{Resource: res.UID, Error: te.err.Error()}}, nil
	}
	var out []findings.Finding
	var errs []findings.EvalError
	for i, q := range te.single {
		p := te.policies[i]
		if ev.tripped(te.index[i]) {
			errs = append(errs, findings.EvalError{Policy: p.ID, Resource: res.UID,
				Error: fmt.Sprintf("not evaluated: the policy was aborted on %d resources of this scan (%s)", ev.e.maxAborts, ev.guard.limits())})
			continue
		}
		rs, err := ev.guard.eval(ctx, slot, q, input, ev.now)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			if ae, ok := err.(*abortError); ok && ae.reason != abortCancelled {
				ev.aborts[te.index[i]].Add(1)
			}
			errs = append(errs, findings.EvalError{Policy: p.ID, Resource: res.UID, Error: err.Error()})
			continue
		}
		for _, r := range rs {
			for _, ex := range r.Expressions {
				vs, _ := ex.Value.([]any)
				for _, v := range vs {
					f, ferr := ev.e.makeFinding(p, res, v)
					if ferr != nil {
						errs = append(errs, *ferr)
						continue
					}
					out = append(out, f)
				}
			}
		}
	}
	return dedupe(out), errs, nil
}

// makeFinding turns one element of a deny set into a finding. A violation that lacks a
// param its action requires is an evaluation error of the policy on the resource: a
// finding the planner could not fix as declared must not pass for a fixable one.
func (e *Engine) makeFinding(p *Policy, res *snapshot.Resource, v any) (findings.Finding, *findings.EvalError) {
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
			case "risk":
				// Read below, with the action it goes with.
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
	if e.actions != nil && f.Remediation.Action != p.Remediation.Action && !slices.Contains(notices, f.Remediation.Action) {
		if _, ok := e.actions[f.Remediation.Action]; !ok {
			return f, &findings.EvalError{Policy: p.ID, Resource: res.UID,
				Error: fmt.Sprintf("violation %q names the unknown action %q", f.Message, f.Remediation.Action)}
		}
	}
	if f.Remediation.Action != p.Remediation.Action {
		return e.ownAction(p, res, f, v)
	}
	if len(p.Params) > 0 {
		fields, _ := v.(map[string]any)
		for _, name := range p.Params {
			val, ok := fields[name]
			if !ok || val == nil {
				if e.required(f.Remediation.Action, name) {
					return f, &findings.EvalError{Policy: p.ID, Resource: res.UID,
						Error: fmt.Sprintf("violation %q lacks %q, a param its action %s requires", f.Message, name, f.Remediation.Action)}
				}
				continue
			}
			if f.Remediation.Params == nil {
				f.Remediation.Params = map[string]any{}
			}
			f.Remediation.Params[name] = val
		}
	}
	return f, nil
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
