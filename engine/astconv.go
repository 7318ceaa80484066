package engine

import (
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/valyala/fastjson"
)

// converter turns parsed JSON straight into OPA values, skipping the map[string]any that
// OPA would otherwise build and convert again. Object keys and short strings repeat across
// resources ("attributes", "Active", "0.0.0.0/0"), so it reuses one immutable term for
// each; this halves the allocations of a conversion. A converter belongs to one worker.
type converter struct {
	terms map[string]*ast.Term
}

const (
	maxInterned    = 1 << 16 // distinct strings kept per worker
	maxInternedLen = 40      // longer strings are rarely repeated (uids, ARNs)
)

func newConverter() *converter { return &converter{terms: make(map[string]*ast.Term, 1024)} }

func (c *converter) str(b []byte) *ast.Term {
	if len(b) > maxInternedLen {
		return ast.StringTerm(string(b))
	}
	if t, ok := c.terms[string(b)]; ok {
		return t
	}
	t := ast.StringTerm(string(b))
	if len(c.terms) < maxInterned {
		c.terms[string(b)] = t
	}
	return t
}

func (c *converter) term(v *fastjson.Value) *ast.Term {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		kvs := make([][2]*ast.Term, 0, o.Len())
		o.Visit(func(k []byte, fv *fastjson.Value) {
			kvs = append(kvs, [2]*ast.Term{c.str(k), c.term(fv)})
		})
		return ast.NewTerm(ast.NewObject(kvs...))
	case fastjson.TypeArray:
		a, _ := v.Array()
		terms := make([]*ast.Term, len(a))
		for i, e := range a {
			terms[i] = c.term(e)
		}
		return ast.NewTerm(ast.NewArray(terms...))
	case fastjson.TypeString:
		return c.str(v.GetStringBytes())
	case fastjson.TypeNumber:
		s := v.String()
		if n, err := strconv.Atoi(s); err == nil && ast.HasInternedIntNumberTerm(n) {
			return ast.InternedTerm(n)
		}
		return ast.NewTerm(ast.Number(s))
	case fastjson.TypeTrue:
		return ast.InternedTerm(true)
	case fastjson.TypeFalse:
		return ast.InternedTerm(false)
	default:
		return ast.NullTerm()
	}
}
