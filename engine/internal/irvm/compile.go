package irvm

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/ir"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Statements are compiled once, when the Program is made, into Go closures: each knows
// its statement's type, operands and callee, so that running a plan no longer switches
// on the statement's type, looks its callee up in a map or reads an operand's kind at
// every step. A compiled statement returns a level as block does (fellThrough goes on).

// op is one compiled statement.
type op func(st *state, fr []*ast.Term) (int, error)

// code is a compiled block: its statements in order.
type code []op

// operand is a compiled ir.Operand: a local of the frame, or a constant term.
type operand struct {
	local int       // -1 for a constant
	term  *ast.Term // the constant; nil for an operand of no known kind (undefined)
}

func (o operand) get(fr []*ast.Term) *ast.Term {
	if o.local >= 0 {
		return fr[o.local]
	}
	return o.term
}

// run runs the statements of c and returns its level: fellThrough when every statement
// held, else how many enclosing blocks to leave.
func run(st *state, fr []*ast.Term, c code) (int, error) {
	for _, o := range c {
		lvl, err := o(st, fr)
		if err != nil {
			return 0, err
		}
		if lvl != fellThrough {
			return lvl, nil
		}
	}
	return fellThrough, nil
}

// compiler turns a Program's blocks into code.
type compiler struct{ p *Program }

func (c *compiler) blocks(bs []*ir.Block) []code {
	out := make([]code, len(bs))
	for i, b := range bs {
		out[i] = c.block(b)
	}
	return out
}

func (c *compiler) block(b *ir.Block) code {
	out := make(code, len(b.Stmts))
	for i, s := range b.Stmts {
		out[i] = c.stmt(s)
	}
	return out
}

func (c *compiler) operand(o ir.Operand) operand {
	switch v := o.Value.(type) {
	case ir.Local:
		return operand{local: int(v)}
	case ir.Bool:
		return operand{local: -1, term: ast.InternedTerm(bool(v))}
	case ir.StringIndex:
		return operand{local: -1, term: c.p.strings[v]}
	}
	return operand{local: -1}
}

// fails is a statement that stops the evaluation with err when it is reached: what this
// package does not run is an error only where a plan takes it.
func fails(err error) op {
	return func(*state, []*ast.Term) (int, error) { return 0, err }
}

// undefined is a statement that never holds.
func undefined(*state, []*ast.Term) (int, error) { return 0, nil }

func (c *compiler) stmt(s ir.Stmt) op {
	switch s := s.(type) {
	case *ir.AssignVarStmt:
		src, dst := c.operand(s.Source), int(s.Target)
		if src.local >= 0 {
			l := src.local
			return func(_ *state, fr []*ast.Term) (int, error) { fr[dst] = fr[l]; return fellThrough, nil }
		}
		return func(_ *state, fr []*ast.Term) (int, error) { fr[dst] = src.term; return fellThrough, nil }
	case *ir.AssignVarOnceStmt:
		src, dst, loc := c.operand(s.Source), int(s.Target), s.Location
		return func(_ *state, fr []*ast.Term) (int, error) {
			v := src.get(fr)
			if cur := fr[dst]; cur != nil {
				if ast.Compare(cur.Value, v.Value) != 0 {
					return 0, conflict(loc, "var assignment conflict")
				}
				return fellThrough, nil
			}
			fr[dst] = v
			return fellThrough, nil
		}
	case *ir.AssignIntStmt:
		return constant(int(s.Target), ast.InternedTerm(int(s.Value)))
	case *ir.MakeNullStmt:
		return constant(int(s.Target), ast.InternedNullTerm)
	case *ir.MakeNumberIntStmt:
		return constant(int(s.Target), ast.InternedTerm(int(s.Value)))
	case *ir.MakeNumberRefStmt:
		n := c.p.numbers[s.Index]
		if n == nil {
			return fails(fmt.Errorf("irvm: %q is not a number", c.p.strings[s.Index].Value))
		}
		return constant(int(s.Target), n)
	case *ir.MakeArrayStmt:
		dst, capacity := int(s.Target), int(s.Capacity)
		return func(_ *state, fr []*ast.Term) (int, error) {
			fr[dst] = ast.NewTerm(ast.NewArrayWithCapacity(capacity))
			return fellThrough, nil
		}
	case *ir.MakeObjectStmt:
		dst := int(s.Target)
		return func(_ *state, fr []*ast.Term) (int, error) {
			fr[dst] = ast.NewTerm(ast.NewObject())
			return fellThrough, nil
		}
	case *ir.MakeSetStmt:
		dst := int(s.Target)
		return func(_ *state, fr []*ast.Term) (int, error) {
			fr[dst] = ast.NewTerm(ast.NewSet())
			return fellThrough, nil
		}
	case *ir.ResetLocalStmt:
		return constant(int(s.Target), nil)
	case *ir.IsDefinedStmt:
		l := int(s.Source)
		return func(_ *state, fr []*ast.Term) (int, error) {
			if fr[l] == nil {
				return 0, nil
			}
			return fellThrough, nil
		}
	case *ir.IsUndefinedStmt:
		l := int(s.Source)
		return func(_ *state, fr []*ast.Term) (int, error) {
			if fr[l] != nil {
				return 0, nil
			}
			return fellThrough, nil
		}
	case *ir.IsArrayStmt:
		return c.is(s.Source, isArray)
	case *ir.IsObjectStmt:
		return c.is(s.Source, isObject)
	case *ir.IsSetStmt:
		return c.is(s.Source, isSet)
	case *ir.EqualStmt:
		return c.equal(s.A, s.B, true)
	case *ir.NotEqualStmt:
		return c.equal(s.A, s.B, false)
	case *ir.DotStmt:
		src, ok := s.Source.Value.(ir.Local)
		if !ok {
			return undefined
		}
		l, key, dst := int(src), c.operand(s.Key), int(s.Target)
		return func(_ *state, fr []*ast.Term) (int, error) {
			v := dot(fr[l], key.get(fr))
			if v == nil {
				return 0, nil
			}
			fr[dst] = v
			return fellThrough, nil
		}
	case *ir.LenStmt:
		src, dst := c.operand(s.Source), int(s.Target)
		return func(_ *state, fr []*ast.Term) (int, error) {
			n, ok := length(src.get(fr))
			if !ok {
				return 0, fmt.Errorf("irvm: length of a value without one")
			}
			fr[dst] = ast.InternedTerm(n)
			return fellThrough, nil
		}
	case *ir.ArrayAppendStmt:
		arr, val := int(s.Array), c.operand(s.Value)
		return func(_ *state, fr []*ast.Term) (int, error) {
			a, ok := fr[arr].Value.(*ast.Array)
			if !ok {
				return 0, fmt.Errorf("irvm: append to a non-array")
			}
			fr[arr] = ast.NewTerm(a.Append(val.get(fr)))
			return fellThrough, nil
		}
	case *ir.ObjectInsertStmt:
		obj, key, val := int(s.Object), c.operand(s.Key), c.operand(s.Value)
		return func(_ *state, fr []*ast.Term) (int, error) {
			o, ok := fr[obj].Value.(ast.Object)
			if !ok {
				return 0, fmt.Errorf("irvm: insert into a non-object")
			}
			o.Insert(key.get(fr), val.get(fr))
			return fellThrough, nil
		}
	case *ir.ObjectInsertOnceStmt:
		obj, key, val, loc := int(s.Object), c.operand(s.Key), c.operand(s.Value), s.Location
		return func(_ *state, fr []*ast.Term) (int, error) {
			o, ok := fr[obj].Value.(ast.Object)
			if !ok {
				return 0, fmt.Errorf("irvm: insert into a non-object")
			}
			k, v := key.get(fr), val.get(fr)
			if cur := o.Get(k); cur != nil {
				if ast.Compare(cur.Value, v.Value) != 0 {
					return 0, conflict(loc, "object insert conflict")
				}
				return fellThrough, nil
			}
			o.Insert(k, v)
			return fellThrough, nil
		}
	case *ir.ObjectMergeStmt:
		a, b, dst := int(s.A), int(s.B), int(s.Target)
		return func(_ *state, fr []*ast.Term) (int, error) {
			x, aok := fr[a].Value.(ast.Object)
			y, bok := fr[b].Value.(ast.Object)
			if !aok || !bok {
				return 0, fmt.Errorf("irvm: merge of non-objects: %w", ErrUnsupported)
			}
			m, ok := x.Merge(y)
			if !ok {
				return 0, fmt.Errorf("irvm: object merge conflict: %w", ErrUnsupported)
			}
			fr[dst] = ast.NewTerm(m)
			return fellThrough, nil
		}
	case *ir.SetAddStmt:
		set, val := int(s.Set), c.operand(s.Value)
		return func(_ *state, fr []*ast.Term) (int, error) {
			x, ok := fr[set].Value.(ast.Set)
			if !ok {
				return 0, fmt.Errorf("irvm: add to a non-set")
			}
			x.Add(val.get(fr))
			return fellThrough, nil
		}
	case *ir.NopStmt:
		return func(*state, []*ast.Term) (int, error) { return fellThrough, nil }
	case *ir.ResultSetAddStmt:
		l := int(s.Value)
		return func(st *state, fr []*ast.Term) (int, error) {
			st.results = append(st.results, fr[l])
			return fellThrough, nil
		}
	case *ir.ReturnLocalStmt:
		l := int(s.Source)
		return func(st *state, fr []*ast.Term) (int, error) {
			st.ret = fr[l]
			return 0, errReturned
		}
	case *ir.BreakStmt:
		n := int(s.Index)
		return func(*state, []*ast.Term) (int, error) { return n, nil }
	case *ir.BlockStmt:
		return c.blockStmt(s)
	case *ir.NotStmt:
		body := c.block(s.Block)
		return func(st *state, fr []*ast.Term) (int, error) {
			lvl, err := run(st, fr, body)
			if err != nil {
				return 0, err
			}
			switch {
			case lvl == fellThrough:
				return 0, nil // the negated block held: not is undefined
			case lvl > 0:
				return lvl - 1, nil
			}
			return fellThrough, nil
		}
	case *ir.ScanStmt:
		return c.scan(s)
	case *ir.CallStmt:
		return c.call(s)
	case *ir.CallDynamicStmt:
		return fails(fmt.Errorf("irvm: dynamic call: %w", ErrUnsupported))
	case *ir.WithStmt:
		return fails(fmt.Errorf("irvm: with: %w", ErrUnsupported))
	default:
		return fails(fmt.Errorf("irvm: %T: %w", s, ErrUnsupported))
	}
}

// constant sets a local to a term known when compiling (nil resets it).
func constant(dst int, t *ast.Term) op {
	return func(_ *state, fr []*ast.Term) (int, error) { fr[dst] = t; return fellThrough, nil }
}

func (c *compiler) is(src ir.Operand, kind func(*ast.Term) bool) op {
	o := c.operand(src)
	return func(_ *state, fr []*ast.Term) (int, error) {
		if v := o.get(fr); v == nil || !kind(v) {
			return 0, nil
		}
		return fellThrough, nil
	}
}

// equal compiles EqualStmt (want true) and NotEqualStmt (want false). A comparison with
// a constant string, the usual one (a field against a literal), compares strings first.
func (c *compiler) equal(x, y ir.Operand, want bool) op {
	a, b := c.operand(x), c.operand(y)
	if a.local < 0 && b.local >= 0 {
		a, b = b, a
	}
	if s, ok := constString(b); ok && a.local >= 0 {
		l := a.local
		return func(_ *state, fr []*ast.Term) (int, error) {
			v := fr[l]
			if v == nil {
				return 0, nil
			}
			vs, ok := v.Value.(ast.String) // a string equals only a string
			if (ok && vs == s) != want {
				return 0, nil
			}
			return fellThrough, nil
		}
	}
	return func(_ *state, fr []*ast.Term) (int, error) {
		u, v := a.get(fr), b.get(fr)
		if u == nil || v == nil || (ast.Compare(u.Value, v.Value) == 0) != want {
			return 0, nil
		}
		return fellThrough, nil
	}
}

func constString(o operand) (ast.String, bool) {
	if o.local >= 0 || o.term == nil {
		return "", false
	}
	s, ok := o.term.Value.(ast.String)
	return s, ok
}

func (c *compiler) blockStmt(s *ir.BlockStmt) op {
	blocks := c.blocks(s.Blocks)
	if len(blocks) == 1 {
		body := blocks[0]
		return func(st *state, fr []*ast.Term) (int, error) {
			lvl, err := run(st, fr, body)
			if err != nil {
				return 0, err
			}
			if lvl > 0 {
				return lvl - 1, nil
			}
			return fellThrough, nil
		}
	}
	return func(st *state, fr []*ast.Term) (int, error) {
		for _, b := range blocks {
			lvl, err := run(st, fr, b)
			if err != nil {
				return 0, err
			}
			if lvl > 0 {
				return lvl - 1, nil
			}
		}
		return fellThrough, nil
	}
}

// scan runs its block for each element of a collection. In OPA's Wasm the block is the
// body of a loop inside a block: level 0 goes on with the next element, 1 leaves the
// scan, n > 1 leaves n-2 blocks around it.
func (c *compiler) scan(s *ir.ScanStmt) op {
	src, key, val := int(s.Source), int(s.Key), int(s.Value)
	body := c.block(s.Block)
	// after is the scan's level once its block returned l.
	after := func(l int) (int, bool) {
		switch {
		case l >= 2:
			return l - 2, true
		case l == 1:
			return fellThrough, true
		}
		return 0, false
	}
	return func(st *state, fr []*ast.Term) (int, error) {
		coll := fr[src]
		if coll == nil {
			return fellThrough, nil
		}
		switch x := coll.Value.(type) {
		case *ast.Array:
			for i := 0; i < x.Len(); i++ {
				if err := st.tick(); err != nil {
					return 0, err
				}
				fr[key], fr[val] = ast.InternedTerm(i), x.Elem(i)
				l, err := run(st, fr, body)
				if err != nil {
					return 0, err
				}
				if lvl, stop := after(l); stop {
					return lvl, nil
				}
			}
		case ast.Object:
			// In the keys' order, as Keys would give them, without copying them or
			// looking each value up again. Nothing a plan runs inserts into a value
			// it scans: objects are built whole before they are read.
			var (
				err     error
				lvl     int
				stopped bool
			)
			x.Until(func(k, v *ast.Term) bool {
				if err = st.tick(); err != nil {
					return true
				}
				fr[key], fr[val] = k, v
				var l int
				if l, err = run(st, fr, body); err != nil {
					return true
				}
				lvl, stopped = after(l)
				return stopped
			})
			if err != nil {
				return 0, err
			}
			if stopped {
				return lvl, nil
			}
		case ast.Set:
			for _, e := range x.Slice() {
				if err := st.tick(); err != nil {
					return 0, err
				}
				fr[key], fr[val] = e, e
				l, err := run(st, fr, body)
				if err != nil {
					return 0, err
				}
				if lvl, stop := after(l); stop {
					return lvl, nil
				}
			}
		}
		return fellThrough, nil
	}
}

// call compiles a call to what the policy calls by name: a planned function, whose
// parameters are read straight into its frame, or a built-in, whose arguments go
// through the state's stack.
func (c *compiler) call(s *ir.CallStmt) op {
	args := make([]operand, len(s.Args))
	for i, a := range s.Args {
		args[i] = c.operand(a)
	}
	dst := int(s.Result)
	name, loc := s.Func, s.Location
	set := func(fr []*ast.Term, res *ast.Term, err error) (int, error) {
		if err != nil {
			return 0, err
		}
		if res == nil {
			return 0, nil
		}
		fr[dst] = res
		return fellThrough, nil
	}
	switch {
	case c.p.funcs[name] != nil:
		fn := c.p.funcs[name]
		return func(st *state, fr []*ast.Term) (int, error) {
			if err := st.tick(); err != nil {
				return 0, err
			}
			res, err := st.callFunc(fn, fr, args)
			return set(fr, res, err)
		}
	case c.p.extra[name] != nil:
		f := c.p.extra[name]
		return func(st *state, fr []*ast.Term) (int, error) {
			if err := st.tick(); err != nil {
				return 0, err
			}
			in := make([]*ast.Term, len(args)) // kept by the caller (a memo keeps its arguments)
			for i, a := range args {
				in[i] = a.get(fr)
			}
			res, err := f(st.bctx, in)
			return set(fr, res, err)
		}
	case c.p.builtins[name] != nil:
		b := c.p.builtins[name]
		return func(st *state, fr []*ast.Term) (int, error) {
			if err := st.tick(); err != nil {
				return 0, err
			}
			base := len(st.stack)
			for _, a := range args {
				st.stack = append(st.stack, a.get(fr))
			}
			in := st.stack[base:len(st.stack):len(st.stack)]
			st.res = nil
			err := b(st.bctx, in, st.out)
			res := st.res
			clear(st.stack[base:])
			st.stack = st.stack[:base]
			if err != nil {
				err = &topdown.Error{Code: topdown.BuiltinErr, Message: fmt.Sprintf("%s: %v", name, err), Location: location(loc)}
			}
			return set(fr, res, err)
		}
	}
	return func(st *state, _ []*ast.Term) (int, error) {
		if err := st.tick(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("irvm: undefined function %s: %w", name, ErrUnsupported)
	}
}

// callFunc runs a planned function with the arguments args, read from the caller's
// frame, and returns its value (nil: undefined).
func (st *state) callFunc(f *function, caller []*ast.Term, args []operand) (*ast.Term, error) {
	if f.memo && st.memoSet[f.index] {
		return st.memo[f.index], nil
	}
	// Rego has no recursion, so a function is active at most once and its frame is
	// kept between calls; busy guards that anyway.
	busy := st.busy[f.index]
	var frame []*ast.Term
	if busy {
		frame = make([]*ast.Term, f.nlocals)
	} else {
		frame = st.frames[f.index]
		if frame == nil {
			frame = make([]*ast.Term, f.nlocals)
			st.frames[f.index] = frame
		}
		st.busy[f.index] = true
	}
	for i, p := range f.params {
		frame[p] = args[i].get(caller)
	}
	var ret *ast.Term
	var err error
	for _, b := range f.code {
		if _, err = run(st, frame, b); err != nil {
			if err == errReturned {
				ret, st.ret, err = st.ret, nil, nil
			}
			break
		}
	}
	if !busy {
		clear(frame)
		st.busy[f.index] = false
	}
	if err != nil {
		return nil, err
	}
	if f.memo {
		st.memo[f.index], st.memoSet[f.index] = ret, true
	}
	return ret, nil
}
