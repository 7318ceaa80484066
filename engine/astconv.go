package engine

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/valyala/fastjson"
)

// toAST converts a parsed JSON value straight into an OPA value, skipping the
// map[string]any that OPA would otherwise build and convert again.
func toAST(v *fastjson.Value) ast.Value {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		kvs := make([][2]*ast.Term, 0, o.Len())
		o.Visit(func(k []byte, fv *fastjson.Value) {
			kvs = append(kvs, [2]*ast.Term{ast.StringTerm(string(k)), ast.NewTerm(toAST(fv))})
		})
		return ast.NewObject(kvs...)
	case fastjson.TypeArray:
		a, _ := v.Array()
		terms := make([]*ast.Term, len(a))
		for i, e := range a {
			terms[i] = ast.NewTerm(toAST(e))
		}
		return ast.NewArray(terms...)
	case fastjson.TypeString:
		return ast.String(v.GetStringBytes())
	case fastjson.TypeNumber:
		return ast.Number(v.String())
	case fastjson.TypeTrue:
		return ast.Boolean(true)
	case fastjson.TypeFalse:
		return ast.Boolean(false)
	default:
		return ast.Null{}
	}
}
