package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"go.yaml.in/yaml/v3"
)

// tfModule is one Terraform module as HCL's own parser reads it: the blocks of every .tf
// file of its directory.
type tfModule struct {
	dir       string
	variables map[string]*hclsyntax.Block
	outputs   map[string]*hclsyntax.Block
	locals    map[string]hcl.Expression
	resources []*hclsyntax.Block // labels: type, name
	calls     map[string]*hclsyntax.Block
}

// parseModule parses every .tf file of dir in fsys with hclparse; any diagnostic, a
// block Terraform does not have, or a name declared twice is an error.
func parseModule(fsys fs.FS, dir string) (*tfModule, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read the module %s: %w", dir, err)
	}
	m := &tfModule{dir: dir, variables: map[string]*hclsyntax.Block{}, outputs: map[string]*hclsyntax.Block{},
		locals: map[string]hcl.Expression{}, calls: map[string]*hclsyntax.Block{}}
	parser := hclparse.NewParser()
	var errs []error
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tf") {
			continue
		}
		name := path.Join(dir, e.Name())
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		f, diags := parser.ParseHCL(src, name)
		if len(diags) > 0 {
			errs = append(errs, diags)
			continue
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if err := m.add(b); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", b.DefRange(), err))
			}
		}
	}
	return m, errors.Join(errs...)
}

// add files one top-level block.
func (m *tfModule) add(b *hclsyntax.Block) error {
	named := func(into map[string]*hclsyntax.Block) error {
		if _, dup := into[b.Labels[0]]; dup {
			return fmt.Errorf("%s %q declared twice", b.Type, b.Labels[0])
		}
		into[b.Labels[0]] = b
		return nil
	}
	switch b.Type {
	case "terraform":
		return nil
	case "variable":
		return named(m.variables)
	case "output":
		return named(m.outputs)
	case "module":
		return named(m.calls)
	case "resource":
		m.resources = append(m.resources, b)
		return nil
	case "locals":
		for name, a := range b.Body.Attributes {
			if _, dup := m.locals[name]; dup {
				return fmt.Errorf("local %q declared twice", name)
			}
			m.locals[name] = a.Expr
		}
		return nil
	}
	return fmt.Errorf("unexpected block %q", b.Type)
}

// tfPlan is a module's resources as a plan sees them: each instance ("type.name",
// "type.name[0]", `type.name["key"]`) with its attributes, unknown where they come from
// another resource or a module call.
type tfPlan map[string]map[string]cty.Value

// plan evaluates the module with its variables set to inputs, as `terraform plan` would:
// variables (type, default, validations), locals, then each resource's count or for_each
// and attributes, its preconditions checked. Resources, data sources and module calls are
// unknown, as before they are created; a file() reads fsys.
func (m *tfModule) plan(fsys fs.FS, inputs map[string]cty.Value) (tfPlan, error) {
	vars, err := m.variableValues(inputs)
	if err != nil {
		return nil, err
	}
	scope := map[string]cty.Value{
		"var":  cty.ObjectVal(vars),
		"path": cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(m.dir)}),
	}
	unknown := map[string]map[string]cty.Value{"module": {}}
	for name := range m.calls {
		unknown["module"][name] = cty.DynamicVal
	}
	for _, r := range m.resources {
		if unknown[r.Labels[0]] == nil {
			unknown[r.Labels[0]] = map[string]cty.Value{}
		}
		unknown[r.Labels[0]][r.Labels[1]] = cty.DynamicVal
	}
	for k, v := range unknown {
		scope[k] = cty.ObjectVal(v)
	}
	ctx := &hcl.EvalContext{Variables: scope, Functions: terraformFunctions(fsys)}
	for _, b := range m.variables {
		if err := checkAll(ctx, b.Body, "validation", "validation of var."+b.Labels[0]); err != nil {
			return nil, err
		}
	}
	if err := m.evalLocals(ctx); err != nil {
		return nil, err
	}
	p := tfPlan{}
	for _, r := range m.resources {
		if err := p.addResource(ctx, r); err != nil {
			return nil, err
		}
	}
	// Outputs and module calls' arguments, so that a reference to nothing or an unknown
	// function in them fails here, as in terraform validate.
	for name, b := range m.outputs {
		v, diags := b.Body.Attributes["value"].Expr.Value(ctx)
		if diags.HasErrors() {
			return nil, fmt.Errorf("output %q of %s: %w", name, m.dir, diags)
		}
		p["output."+name] = map[string]cty.Value{"value": v}
	}
	for name, b := range m.calls {
		for arg, a := range b.Body.Attributes {
			if _, diags := a.Expr.Value(ctx); diags.HasErrors() {
				return nil, fmt.Errorf("module %q of %s: %s: %w", name, m.dir, arg, diags)
			}
		}
	}
	return p, nil
}

// variableValues are the module's variables: inputs converted to their declared types,
// or their defaults. An input the module does not declare, or a variable without a
// default left out, is an error.
func (m *tfModule) variableValues(inputs map[string]cty.Value) (map[string]cty.Value, error) {
	vals := map[string]cty.Value{}
	for name := range inputs {
		if m.variables[name] == nil {
			return nil, fmt.Errorf("%s has no variable %q", m.dir, name)
		}
	}
	for name, b := range m.variables {
		ty := cty.DynamicPseudoType
		if a := b.Body.Attributes["type"]; a != nil {
			t, diags := typeexpr.TypeConstraint(a.Expr)
			if diags.HasErrors() {
				return nil, diags
			}
			ty = t
		}
		v, ok := inputs[name]
		if !ok {
			def := b.Body.Attributes["default"]
			if def == nil {
				return nil, fmt.Errorf("variable %q of %s is required", name, m.dir)
			}
			var diags hcl.Diagnostics
			if v, diags = def.Expr.Value(nil); diags.HasErrors() {
				return nil, diags
			}
		}
		cv, err := convert.Convert(v, ty)
		if err != nil {
			return nil, fmt.Errorf("variable %q of %s: %w", name, m.dir, err)
		}
		vals[name] = cv
	}
	return vals, nil
}

// evalLocals evaluates the locals in the order their references allow, into
// ctx.Variables["local"].
func (m *tfModule) evalLocals(ctx *hcl.EvalContext) error {
	done := map[string]cty.Value{}
	for len(done) < len(m.locals) {
		var last hcl.Diagnostics
		progress := false
		for name, expr := range m.locals {
			if _, ok := done[name]; ok {
				continue
			}
			ctx.Variables["local"] = cty.ObjectVal(done)
			v, diags := expr.Value(ctx)
			if diags.HasErrors() {
				last = diags
				continue
			}
			done[name], progress = v, true
		}
		if !progress {
			return fmt.Errorf("locals of %s: %w", m.dir, last)
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(done)
	return nil
}

// addResource adds the instances of resource r, each with its attributes, after
// checking its preconditions.
func (p tfPlan) addResource(ctx *hcl.EvalContext, r *hclsyntax.Block) error {
	addr := r.Labels[0] + "." + r.Labels[1]
	type instance struct {
		key string
		ctx *hcl.EvalContext
	}
	instances := []instance{{addr, ctx}}
	if a := r.Body.Attributes["count"]; a != nil {
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			return diags
		}
		var n int
		if err := gocty(v, &n); err != nil {
			return fmt.Errorf("count of %s: %w", addr, err)
		}
		instances = nil
		for i := range n {
			c := ctx.NewChild()
			c.Variables = map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(i))})}
			instances = append(instances, instance{fmt.Sprintf("%s[%d]", addr, i), c})
		}
	}
	if a := r.Body.Attributes["for_each"]; a != nil {
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			return diags
		}
		if !v.IsWhollyKnown() || v.IsNull() {
			return fmt.Errorf("for_each of %s is not known before apply", addr)
		}
		instances = nil
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			if v.Type().IsSetType() {
				k = ev
			}
			c := ctx.NewChild()
			c.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k, "value": ev})}
			instances = append(instances, instance{fmt.Sprintf("%s[%q]", addr, k.AsString()), c})
		}
	}
	for _, in := range instances {
		attrs := map[string]cty.Value{}
		for name, a := range r.Body.Attributes {
			if name == "count" || name == "for_each" {
				continue
			}
			v, diags := a.Expr.Value(in.ctx)
			if diags.HasErrors() {
				return fmt.Errorf("%s.%s: %w", in.key, name, diags)
			}
			attrs[name] = v
		}
		for _, b := range r.Body.Blocks {
			if b.Type == "lifecycle" {
				if err := checkAll(in.ctx, b.Body, "precondition", "precondition of "+in.key); err != nil {
					return err
				}
			}
		}
		p[in.key] = attrs
	}
	return nil
}

// checkAll evaluates the condition of every block of kind in body (validation,
// precondition): one that is false is an error with its error_message.
func checkAll(ctx *hcl.EvalContext, body *hclsyntax.Body, kind, what string) error {
	for _, b := range body.Blocks {
		if b.Type != kind {
			continue
		}
		cond, diags := b.Body.Attributes["condition"].Expr.Value(ctx)
		if diags.HasErrors() {
			return fmt.Errorf("%s: %w", what, diags)
		}
		if cond.IsKnown() && !cond.IsNull() && cond.False() {
			msg, _ := b.Body.Attributes["error_message"].Expr.Value(nil)
			return fmt.Errorf("%s failed: %s", what, msg.AsString())
		}
	}
	return nil
}

// gocty decodes a known cty value into a Go value through JSON.
func gocty(v cty.Value, into any) error {
	if !v.IsWhollyKnown() {
		return errors.New("not known before apply")
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// terraformFunctions are the functions of Terraform's language the modules call, with
// Terraform's meaning; file reads fsys.
func terraformFunctions(fsys fs.FS) map[string]function.Function {
	str := func(name string) function.Parameter { return function.Parameter{Name: name, Type: cty.String} }
	return map[string]function.Function{
		"file": function.New(&function.Spec{Params: []function.Parameter{str("path")}, Type: function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				b, err := fs.ReadFile(fsys, path.Clean(args[0].AsString()))
				return cty.StringVal(string(b)), err
			}}),
		"yamldecode": function.New(&function.Spec{Params: []function.Parameter{str("src")},
			Type: func(args []cty.Value) (cty.Type, error) {
				v, err := yamlDecode(args[0])
				return v.Type(), err
			},
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) { return yamlDecode(args[0]) }}),
		"startswith": function.New(&function.Spec{Params: []function.Parameter{str("string"), str("prefix")},
			Type: function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return cty.BoolVal(strings.HasPrefix(args[0].AsString(), args[1].AsString())), nil
			}}),
		"one": function.New(&function.Spec{Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
			Type: func(args []cty.Value) (cty.Type, error) {
				if args[0].LengthInt() > 1 {
					return cty.NilType, errors.New("one: more than one element")
				}
				return cty.DynamicPseudoType, nil
			},
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				if args[0].LengthInt() == 0 {
					return cty.NullVal(cty.DynamicPseudoType), nil
				}
				return args[0].Index(cty.NumberIntVal(0)), nil
			}}),
		"jsondecode": stdlib.JSONDecodeFunc, "keys": stdlib.KeysFunc, "merge": stdlib.MergeFunc,
		"setproduct": stdlib.SetProductFunc, "lookup": stdlib.LookupFunc, "length": stdlib.LengthFunc,
		"contains": stdlib.ContainsFunc, "concat": stdlib.ConcatFunc,
	}
}

// yamlDecode is Terraform's yamldecode for the documents' YAML: mappings become objects,
// sequences tuples, as JSON's would.
func yamlDecode(src cty.Value) (cty.Value, error) {
	if !src.IsKnown() {
		return cty.DynamicVal, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(src.AsString()), &v); err != nil {
		return cty.NilVal, fmt.Errorf("yamldecode: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return cty.NilVal, fmt.Errorf("yamldecode: %w", err)
	}
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NilVal, err
	}
	return ctyjson.Unmarshal(b, ty)
}

// sortedKeys are the plan's instance addresses that start with prefix, sorted.
func (p tfPlan) sortedKeys(prefix string) []string {
	var out []string
	for k := range p {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
