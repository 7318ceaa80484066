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
	"slices"
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
	calls    map[*ir.CallStmt]callee // every call, resolved once
}

// callee is what a call statement calls: one of a planned function, a caller's
// built-in or one of topdown's.
type callee struct {
	fn      *function
	extra   Func
	builtin topdown.BuiltinFunc
}

type function struct {
	f       *ir.Func
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
			prog.funcs[f.Name] = &function{f: f, nlocals: maxLocal(f.Blocks, f.Params, f.Return) + 1, index: i, memo: len(f.Params) == 2}
		}
		prog.nfuncs = len(p.Funcs.Funcs)
	}
	prog.nlocals = maxLocal(prog.plan.Blocks, nil, 0) + 1
	prog.calls = map[*ir.CallStmt]callee{}
	resolve := &callResolver{p: prog}
	for _, b := range prog.plan.Blocks {
		_ = ir.Walk(resolve, b)
	}
	for _, f := range prog.funcs {
		for _, b := range f.f.Blocks {
			_ = ir.Walk(resolve, b)
		}
	}
	return prog, nil
}

type callResolver struct{ p *Program }

func (v *callResolver) Before(any) {}
func (v *callResolver) After(any)  {}
func (v *callResolver) Visit(x any) (ir.Visitor, error) {
	if c, ok := x.(*ir.CallStmt); ok {
		switch {
		case v.p.funcs[c.Func] != nil:
			v.p.calls[c] = callee{fn: v.p.funcs[c.Func]}
		case v.p.extra[c.Func] != nil:
			v.p.calls[c] = callee{extra: v.p.extra[c.Func]}
		case v.p.builtins[c.Func] != nil:
			v.p.calls[c] = callee{builtin: v.p.builtins[c.Func]}
		}
	}
	return v, nil
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
	for _, b := range p.plan.Blocks {
		if _, err := st.block(frame, b); err != nil {
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

// block runs the statements of b and returns its level (see above).
func (st *state) block(frame []*ast.Term, b *ir.Block) (int, error) {
	for _, s := range b.Stmts {
		lvl, err := st.stmt(frame, s)
		if err != nil {
			return 0, err
		}
		if lvl != fellThrough {
			return lvl, nil
		}
	}
	return fellThrough, nil
}

func (st *state) read(frame []*ast.Term, o ir.Operand) *ast.Term {
	switch v := o.Value.(type) {
	case ir.Local:
		return frame[v]
	case ir.Bool:
		return ast.InternedTerm(bool(v))
	case ir.StringIndex:
		return st.p.strings[v]
	}
	return nil
}

func (st *state) tick() error {
	st.steps++
	if st.steps&1023 == 0 && st.cancel != nil && st.cancel.Cancelled() {
		return &topdown.Error{Code: topdown.CancelErr, Message: "caller cancelled query execution"}
	}
	return nil
}

// stmt runs one statement; fellThrough means go on with the next one.
func (st *state) stmt(frame []*ast.Term, s ir.Stmt) (int, error) {
	switch s := s.(type) {
	case *ir.AssignVarStmt:
		frame[s.Target] = st.read(frame, s.Source)
	case *ir.AssignVarOnceStmt:
		v := st.read(frame, s.Source)
		if cur := frame[s.Target]; cur != nil {
			if ast.Compare(cur.Value, v.Value) != 0 {
				return 0, conflict(s.Location, "var assignment conflict")
			}
			return fellThrough, nil
		}
		frame[s.Target] = v
	case *ir.AssignIntStmt:
		frame[s.Target] = ast.InternedTerm(int(s.Value))
	case *ir.MakeNullStmt:
		frame[s.Target] = ast.InternedNullTerm
	case *ir.MakeNumberIntStmt:
		frame[s.Target] = ast.InternedTerm(int(s.Value))
	case *ir.MakeNumberRefStmt:
		n := st.p.numbers[s.Index]
		if n == nil {
			return 0, fmt.Errorf("irvm: %q is not a number", st.p.strings[s.Index].Value)
		}
		frame[s.Target] = n
	case *ir.MakeArrayStmt:
		frame[s.Target] = ast.NewTerm(ast.NewArrayWithCapacity(int(s.Capacity)))
	case *ir.MakeObjectStmt:
		frame[s.Target] = ast.NewTerm(ast.NewObject())
	case *ir.MakeSetStmt:
		frame[s.Target] = ast.NewTerm(ast.NewSet())
	case *ir.ResetLocalStmt:
		frame[s.Target] = nil
	case *ir.IsDefinedStmt:
		if frame[s.Source] == nil {
			return 0, nil
		}
	case *ir.IsUndefinedStmt:
		if frame[s.Source] != nil {
			return 0, nil
		}
	case *ir.IsArrayStmt:
		if v := st.read(frame, s.Source); v == nil || !isArray(v) {
			return 0, nil
		}
	case *ir.IsObjectStmt:
		if v := st.read(frame, s.Source); v == nil || !isObject(v) {
			return 0, nil
		}
	case *ir.IsSetStmt:
		if v := st.read(frame, s.Source); v == nil || !isSet(v) {
			return 0, nil
		}
	case *ir.EqualStmt:
		a, b := st.read(frame, s.A), st.read(frame, s.B)
		if a == nil || b == nil || ast.Compare(a.Value, b.Value) != 0 {
			return 0, nil
		}
	case *ir.NotEqualStmt:
		a, b := st.read(frame, s.A), st.read(frame, s.B)
		if a == nil || b == nil || ast.Compare(a.Value, b.Value) == 0 {
			return 0, nil
		}
	case *ir.DotStmt:
		src, ok := s.Source.Value.(ir.Local)
		if !ok {
			return 0, nil
		}
		v := dot(frame[src], st.read(frame, s.Key))
		if v == nil {
			return 0, nil
		}
		frame[s.Target] = v
	case *ir.LenStmt:
		n, ok := length(st.read(frame, s.Source))
		if !ok {
			return 0, fmt.Errorf("irvm: length of a value without one")
		}
		frame[s.Target] = ast.InternedTerm(n)
	case *ir.ArrayAppendStmt:
		arr, ok := frame[s.Array].Value.(*ast.Array)
		if !ok {
			return 0, fmt.Errorf("irvm: append to a non-array")
		}
		frame[s.Array] = ast.NewTerm(arr.Append(st.read(frame, s.Value)))
	case *ir.ObjectInsertStmt:
		obj, ok := frame[s.Object].Value.(ast.Object)
		if !ok {
			return 0, fmt.Errorf("irvm: insert into a non-object")
		}
		obj.Insert(st.read(frame, s.Key), st.read(frame, s.Value))
	case *ir.ObjectInsertOnceStmt:
		obj, ok := frame[s.Object].Value.(ast.Object)
		if !ok {
			return 0, fmt.Errorf("irvm: insert into a non-object")
		}
		k, v := st.read(frame, s.Key), st.read(frame, s.Value)
		if cur := obj.Get(k); cur != nil {
			if ast.Compare(cur.Value, v.Value) != 0 {
				return 0, conflict(s.Location, "object insert conflict")
			}
			return fellThrough, nil
		}
		obj.Insert(k, v)
	case *ir.ObjectMergeStmt:
		a, aok := frame[s.A].Value.(ast.Object)
		b, bok := frame[s.B].Value.(ast.Object)
		if !aok || !bok {
			return 0, fmt.Errorf("irvm: merge of non-objects: %w", ErrUnsupported)
		}
		m, ok := a.Merge(b)
		if !ok {
			return 0, fmt.Errorf("irvm: object merge conflict: %w", ErrUnsupported)
		}
		frame[s.Target] = ast.NewTerm(m)
	case *ir.SetAddStmt:
		set, ok := frame[s.Set].Value.(ast.Set)
		if !ok {
			return 0, fmt.Errorf("irvm: add to a non-set")
		}
		set.Add(st.read(frame, s.Value))
	case *ir.NopStmt:
	case *ir.ResultSetAddStmt:
		st.results = append(st.results, frame[s.Value])
	case *ir.ReturnLocalStmt:
		st.ret = frame[s.Source]
		return 0, errReturned
	case *ir.BreakStmt:
		return int(s.Index), nil
	case *ir.BlockStmt:
		for _, b := range s.Blocks {
			lvl, err := st.block(frame, b)
			if err != nil {
				return 0, err
			}
			if lvl > 0 {
				return lvl - 1, nil
			}
		}
	case *ir.NotStmt:
		lvl, err := st.block(frame, s.Block)
		if err != nil {
			return 0, err
		}
		switch {
		case lvl == fellThrough:
			return 0, nil // the negated block held: not is undefined
		case lvl > 0:
			return lvl - 1, nil
		}
	case *ir.ScanStmt:
		return st.scan(frame, s)
	case *ir.CallStmt:
		return st.call(frame, s)
	case *ir.CallDynamicStmt:
		return 0, fmt.Errorf("irvm: dynamic call: %w", ErrUnsupported)
	case *ir.WithStmt:
		return 0, fmt.Errorf("irvm: with: %w", ErrUnsupported)
	default:
		return 0, fmt.Errorf("irvm: %T: %w", s, ErrUnsupported)
	}
	return fellThrough, nil
}

// scan runs its block for each element of a collection. In OPA's Wasm the block is the
// body of a loop inside a block: level 0 goes on with the next element, 1 leaves the
// scan, n > 1 leaves n-2 blocks around it.
func (st *state) scan(frame []*ast.Term, s *ir.ScanStmt) (int, error) {
	src := frame[s.Source]
	if src == nil {
		return fellThrough, nil
	}
	lvl := fellThrough
	each := func(k, v *ast.Term) (bool, error) {
		if err := st.tick(); err != nil {
			return true, err
		}
		frame[s.Key], frame[s.Value] = k, v
		l, err := st.block(frame, s.Block)
		if err != nil {
			return true, err
		}
		if l >= 1 {
			if l >= 2 {
				lvl = l - 2
			}
			return true, nil
		}
		return false, nil
	}
	var err error
	switch c := src.Value.(type) {
	case *ast.Array:
		for i := 0; i < c.Len(); i++ {
			stop, e := each(ast.InternedTerm(i), c.Elem(i))
			if stop {
				err = e
				break
			}
		}
	case ast.Object:
		for _, k := range c.Keys() {
			stop, e := each(k, c.Get(k))
			if stop {
				err = e
				break
			}
		}
	case ast.Set:
		for _, x := range c.Slice() {
			stop, e := each(x, x)
			if stop {
				err = e
				break
			}
		}
	}
	if err != nil {
		return 0, err
	}
	return lvl, nil
}

func (st *state) call(frame []*ast.Term, s *ir.CallStmt) (int, error) {
	if err := st.tick(); err != nil {
		return 0, err
	}
	base := len(st.stack)
	for _, a := range s.Args {
		st.stack = append(st.stack, st.read(frame, a))
	}
	args := st.stack[base:len(st.stack):len(st.stack)]
	var res *ast.Term
	var err error
	c := st.p.calls[s]
	switch {
	case c.fn != nil:
		res, err = st.callFunc(c.fn, args)
	case c.extra != nil:
		res, err = c.extra(st.bctx, slices.Clone(args))
	case c.builtin != nil:
		st.res = nil
		err = c.builtin(st.bctx, args, st.out)
		res = st.res
		if err != nil {
			err = &topdown.Error{Code: topdown.BuiltinErr, Message: fmt.Sprintf("%s: %v", s.Func, err), Location: location(s.Location)}
		}
	default:
		err = fmt.Errorf("irvm: undefined function %s: %w", s.Func, ErrUnsupported)
	}
	clear(st.stack[base:])
	st.stack = st.stack[:base]
	if err != nil {
		return 0, err
	}
	if res == nil {
		return 0, nil
	}
	frame[s.Result] = res
	return fellThrough, nil
}

func (st *state) callFunc(f *function, args []*ast.Term) (*ast.Term, error) {
	if f.memo && st.memoSet[f.index] {
		return st.memo[f.index], nil
	}
	var frame []*ast.Term
	if st.busy[f.index] {
		frame = make([]*ast.Term, f.nlocals)
	} else {
		if st.frames[f.index] == nil {
			st.frames[f.index] = make([]*ast.Term, f.nlocals)
		}
		frame = st.frames[f.index]
		st.busy[f.index] = true
		defer func() {
			clear(frame)
			st.busy[f.index] = false
		}()
	}
	for i, p := range f.f.Params {
		frame[p] = args[i]
	}
	var ret *ast.Term
	for _, b := range f.f.Blocks {
		if _, err := st.block(frame, b); err != nil {
			if err == errReturned {
				ret, st.ret = st.ret, nil
				break
			}
			return nil, err
		}
	}
	if f.memo {
		st.memo[f.index], st.memoSet[f.index] = ret, true
	}
	return ret, nil
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
