// Package irvm evaluates Rego compiled by OPA's planner (the IR of package
// github.com/open-policy-agent/opa/v1/ir) directly in Go, over OPA's own values and
// built-in functions.
//
// OPA's topdown evaluator interprets the Rego AST with unification, backtracking and a
// binding trail for every step; the planner has already turned each rule into plain
// statements over numbered locals (loops, lookups, calls, breaks), the form OPA compiles to
// WebAssembly. Running that form natively avoids both topdown's per-step machinery and the
// JSON round trips of Wasm. The semantics follow OPA's Wasm backend statement by statement
// (internal/compiler/wasm), and the built-ins are topdown's own, so a program gives what
// topdown gives. What this package does not implement (`with`, dynamic calls) is an error,
// never a guess: the caller then evaluates with topdown.
package irvm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/ir"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
)

// Func is a built-in supplied by the caller: it returns the result, nil for undefined.
type Func func(bctx topdown.BuiltinContext, args []*ast.Term) (*ast.Term, error)

// Program is one planned query, ready to evaluate any number of times, concurrently.
type Program struct {
	states   sync.Pool // of *state, with frames to reuse
	plan     *ir.Plan
	nlocals  int
	strings  []*ast.Term
	numbers  []*ast.Term // MakeNumberRef by string index, nil where not a number
	funcs    map[string]*function
	builtins map[string]topdown.BuiltinFunc
	extra    map[string]Func
	nfuncs   int
	code     []code // the plan's blocks, compiled
}

type function struct {
	f       *ir.Func
	params  []int
	code    []code // its blocks, compiled
	nlocals int
	index   int
	memo    bool // only input and data as parameters: one result per evaluation
}

// ErrUnsupported marks a statement this package does not evaluate.
var ErrUnsupported = errors.New("irvm: unsupported statement")

// New prepares the plan named plan of p. Every built-in the policy calls must be one of
// topdown's or in extra.
func New(p *ir.Policy, plan string, extra map[string]Func) (*Program, error) {
	prog := &Program{funcs: map[string]*function{}, builtins: map[string]topdown.BuiltinFunc{}, extra: extra}
	if p.Plans != nil {
		for _, pl := range p.Plans.Plans {
			if pl.Name == plan {
				prog.plan = pl
			}
		}
	}
	if prog.plan == nil {
		return nil, fmt.Errorf("irvm: no plan %q", plan)
	}
	if p.Static != nil {
		for _, s := range p.Static.Strings {
			prog.strings = append(prog.strings, ast.StringTerm(s.Value))
			var num *ast.Term
			if n, err := strconv.Atoi(s.Value); err == nil {
				num = ast.InternedTerm(n)
			} else if _, err := strconv.ParseFloat(s.Value, 64); err == nil {
				num = ast.NewTerm(ast.Number(s.Value))
			}
			prog.numbers = append(prog.numbers, num)
		}
		for _, b := range p.Static.BuiltinFuncs {
			if _, ok := extra[b.Name]; ok {
				continue
			}
			f := topdown.GetBuiltin(b.Name)
			if f == nil {
				return nil, fmt.Errorf("irvm: built-in %s: %w", b.Name, ErrUnsupported)
			}
			prog.builtins[b.Name] = f
		}
	}
	if p.Funcs != nil {
		for i, f := range p.Funcs.Funcs {
			fn := &function{f: f, nlocals: maxLocal(f.Blocks, f.Params, f.Return) + 1, index: i, memo: len(f.Params) == 2}
			for _, p := range f.Params {
				fn.params = append(fn.params, int(p))
			}
			prog.funcs[f.Name] = fn
		}
		prog.nfuncs = len(p.Funcs.Funcs)
	}
	prog.nlocals = maxLocal(prog.plan.Blocks, nil, 0) + 1
	// Every function exists before any is compiled: a call compiles to its callee.
	c := &compiler{p: prog}
	for _, f := range prog.funcs {
		f.code = c.blocks(f.f.Blocks)
	}
	prog.code = c.blocks(prog.plan.Blocks)
	return prog, nil
}

// maxLocal is the highest local a function or plan uses. Statements are read by
// reflection, so that a statement type added to OPA cannot hide a local.
func maxLocal(blocks []*ir.Block, params []ir.Local, ret ir.Local) int {
	m := max(int(ret), 1)
	for _, p := range params {
		m = max(m, int(p))
	}
	for _, b := range blocks {
		m = max(m, maxLocalIn(reflect.ValueOf(b)))
	}
	return m
}

var (
	localType   = reflect.TypeFor[ir.Local]()
	operandType = reflect.TypeFor[ir.Operand]()
)

func maxLocalIn(v reflect.Value) int {
	m := 0
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			m = maxLocalIn(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			m = max(m, maxLocalIn(v.Index(i)))
		}
	case reflect.Struct:
		if v.Type() == operandType {
			if l, ok := v.Interface().(ir.Operand).Value.(ir.Local); ok {
				return int(l)
			}
			return 0
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				m = max(m, maxLocalIn(v.Field(i)))
			}
		}
	default:
		if v.Type() == localType {
			m = int(v.Int())
		}
	}
	return m
}

// Options are what one evaluation may need besides its input.
type Options struct {
	Data   ast.Value
	Time   *ast.Term // time.now_ns() (a number of nanoseconds)
	Cancel topdown.Cancel
	// Capabilities are what the built-ins may do (json.match_schema and the net
	// built-ins read AllowNet from them): the compiler's, as topdown passes them.
	Capabilities *ast.Capabilities
}

// Eval runs the plan on input and returns the values it added to its result set, in order.
func (p *Program) Eval(ctx context.Context, input ast.Value, opts Options) ([]*ast.Term, error) {
	st, _ := p.states.Get().(*state)
	if st == nil {
		st = &state{p: p, memo: make([]*ast.Term, p.nfuncs), memoSet: make([]bool, p.nfuncs), frames: make([][]*ast.Term, p.nfuncs), busy: make([]bool, p.nfuncs)}
		st.out = func(t *ast.Term) error { st.res = t; return nil }
	}
	defer p.release(st)
	st.bctx = topdown.BuiltinContext{
		Context:      ctx,
		Metrics:      metrics.NoOp(),
		Time:         opts.Time,
		Cancel:       opts.Cancel,
		Cache:        builtins.Cache{},
		Capabilities: opts.Capabilities,
	}
	st.cancel = opts.Cancel
	frame := make([]*ast.Term, p.nlocals)
	frame[0] = ast.NewTerm(input)
	data := opts.Data
	if data == nil {
		data = ast.NewObject()
	}
	frame[1] = ast.NewTerm(data)
	for _, b := range p.code {
		if _, err := run(st, frame, b); err != nil {
			return nil, err
		}
	}
	return st.results, nil
}

// release readies st for the next evaluation: nothing of this one may leak into it.
func (p *Program) release(st *state) {
	clear(st.memo)
	clear(st.memoSet)
	st.results = nil
	st.steps = 0
	st.bctx = topdown.BuiltinContext{}
	st.cancel = nil
	st.res = nil
	clear(st.stack)
	st.stack = st.stack[:0]
	p.states.Put(st)
}

type state struct {
	p       *Program
	bctx    topdown.BuiltinContext
	cancel  topdown.Cancel
	memo    []*ast.Term
	memoSet []bool
	results []*ast.Term
	steps   int

	// frames[i] is function i's frame, kept between calls and evaluations: Rego has no
	// recursion, so a function is active at most once; busy guards that anyway.
	frames [][]*ast.Term
	busy   []bool
	stack  []*ast.Term // arguments of the calls in progress
	ret    *ast.Term   // the value of the last ReturnLocalStmt
	res    *ast.Term   // the output of the last built-in call
	out    func(*ast.Term) error
}

// errReturned unwinds nested blocks to the function being run, whose value is st.ret.
var errReturned = errors.New("irvm: return")

// Levels: a block's outcome is how many enclosing blocks to leave, as a Wasm br index:
// fell through = -1; undefined statement or break 0 = 0 (leave this block); break n = n.
const fellThrough = -1

func (st *state) tick() error {
	st.steps++
	if st.steps&1023 == 0 && st.cancel != nil && st.cancel.Cancelled() {
		return &topdown.Error{Code: topdown.CancelErr, Message: "caller cancelled query execution"}
	}
	return nil
}

func dot(src, key *ast.Term) *ast.Term {
	if src == nil || key == nil {
		return nil
	}
	switch c := src.Value.(type) {
	case ast.Object:
		return c.Get(key)
	case *ast.Array:
		n, ok := key.Value.(ast.Number)
		if !ok {
			return nil
		}
		i, ok := n.Int()
		if !ok || i < 0 || i >= c.Len() {
			return nil
		}
		return c.Elem(i)
	case ast.Set:
		if c.Contains(key) {
			return key
		}
	}
	return nil
}

func length(t *ast.Term) (int, bool) {
	if t == nil {
		return 0, false
	}
	switch c := t.Value.(type) {
	case *ast.Array:
		return c.Len(), true
	case ast.Object:
		return c.Len(), true
	case ast.Set:
		return c.Len(), true
	case ast.String:
		return len([]rune(string(c))), true
	}
	return 0, false
}

func isArray(t *ast.Term) bool  { _, ok := t.Value.(*ast.Array); return ok }
func isObject(t *ast.Term) bool { _, ok := t.Value.(ast.Object); return ok }
func isSet(t *ast.Term) bool    { _, ok := t.Value.(ast.Set); return ok }

func conflict(loc ir.Location, msg string) error {
	return &topdown.Error{Code: topdown.ConflictErr, Message: msg, Location: location(loc)}
}

func location(l ir.Location) *ast.Location {
	if l.Row == 0 {
		return nil
	}
	return &ast.Location{Row: l.Row, Col: l.Col, File: fmt.Sprint(l.File)}
}
