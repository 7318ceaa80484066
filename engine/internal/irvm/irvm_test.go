package irvm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/ir"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/warden-sec/warden/engine/internal/irvm"
)

// The tests plan queries through a rego target of their own, as the engine does.
const target = "irvm-test"

type sinkKey struct{}

type capture struct{}

func (capture) IsTarget(t string) bool { return t == target }

func (capture) PrepareForEval(ctx context.Context, p *ir.Policy, _ ...rego.PrepareOption) (rego.TargetPluginEval, error) {
	*ctx.Value(sinkKey{}).(**ir.Policy) = p
	return nil, nil
}

func init() { rego.RegisterPlugin(target, capture{}) }

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const input = `{
	"name": "web-1",
	"tags": {"env": "prod", "team": "core", "z": "last", "a": "first"},
	"rules": [
		{"port": 22, "cidr": "0.0.0.0/0", "proto": "tcp"},
		{"port": 443, "cidr": "10.0.0.0/8", "proto": "tcp"},
		{"port": 53, "cidr": "0.0.0.0/0", "proto": "udp"},
		{"port": 22, "cidr": "192.168.1.0/24", "proto": "tcp"}
	],
	"ports": [22, 80, 443, 8080],
	"nested": {"a": {"b": {"c": [1, 2, {"d": "deep"}]}}},
	"text": "héllo wörld",
	"empty": [],
	"nothing": null,
	"flag": false,
	"num": 2.5
}`

// Each case is a module of package t whose rule p is compared between topdown and irvm.
var cases = []struct{ name, module string }{
	{"complete with else", `p := "a" if { input.flag } else := "b" if { input.num > 3 } else := "c"`},
	{"partial set over arrays", `p contains r.port if { some r in input.rules; r.cidr == "0.0.0.0/0" }
p contains 1000 if { count(input.empty) == 0 }`},
	{"object iteration order", `p := [sprintf("%s=%s", [k, v]) | some k, v in input.tags]`},
	{"set iteration", `s := {x | some r in input.rules; x := r.proto}
p := [x | some x in s]`},
	{"object comprehension", `p := {r.proto: count([1 | some q in input.rules; q.proto == r.proto]) | some r in input.rules}`},
	{"functions, several definitions", `f(x) := "ssh" if x == 22
f(x) := "dns" if x == 53
f(x) := "web" if x in {80, 443, 8080}
p := [[r.port, f(r.port)] | some r in input.rules]`},
	{"function undefined on some args", `g(x) := x * 2 if x > 30
p := [g(x) | some x in input.ports]`},
	{"not and nested not", `bad(r) if { r.cidr == "0.0.0.0/0"; not r.proto == "udp" }
p := [r.port | some r in input.rules; not bad(r)]`},
	{"every", `p if { every r in input.rules { r.port > 10 } }
q if { every r in input.rules { r.port > 30 } }
default q := false`},
	{"default", `default p := "none"
p := input.missing.value`},
	{"object.get and types", `p := [object.get(input, "missing", "dflt"), object.get(input.nested, ["a", "b", "c"], 0), is_string(input.name), is_number(input.num), is_null(input.nothing)]`},
	{"deep refs and arrays", `p := input.nested.a.b.c[2].d`},
	{"array index out of range", `p := input.ports[10]`},
	{"negative and arithmetic", `p := [y | some x in input.ports; x * 2 > 100; y := x - 100]`},
	{"strings", `p := [count(input.text), upper(input.text), substring(input.text, 1, 4), startswith(input.name, "web"), split("a-b-c", "-")]`},
	{"sprintf of composites", `p := sprintf("%v %v %v", [input.tags, {1, 3, 2}, input.rules[0]])`},
	{"membership", `p := [22 in input.ports, 23 in input.ports, "env" in object.keys(input.tags)]`},
	{"some with key", `p := [i | some i, r in input.rules; r.port == 22]`},
	{"sets of objects", `p := {{"p": r.port, "c": r.cidr} | some r in input.rules; r.proto == "tcp"}`},
	{"data document", `p := data.config.limit + 1`},
	{"time", `p := time.now_ns()`},
	{"net builtins", `p := [net.cidr_contains("10.0.0.0/8", "10.1.2.3"), count(net.cidr_contains_matches({"0.0.0.0/0", "10.0.0.0/8"}, "10.0.0.1"))]`},
	{"regex", `p := [regex.match("^web-[0-9]+$", input.name), regex.replace(input.name, "[0-9]", "N")]`},
	{"chained rules", `a := {r.port | some r in input.rules}
b := {p | some p in a; p < 100}
p := sort([x | some x in b])`},
	{"undefined body", `p if { input.nothing.x == 1 }`},
	{"multiple outputs conflict", `f(x) := 1 if x > 0
f(x) := 2 if x > 1
p := f(input.num)`},
	{"complete conflict", `p := 1 if input.num > 0
p := 2 if input.num > 1`},
	{"object rule", `p[r.proto] := r.port if { some r in input.rules; r.cidr == "10.0.0.0/8" }`},
	{"nested comprehension with break", `p := [x | some x in input.ports; count([y | some y in input.ports; y > x]) > 1]`},
}

func TestProgram_sameAsTopdown(t *testing.T) {
	var in any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		t.Fatal(err)
	}
	inVal, err := ast.InterfaceToValue(in)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{"config": map[string]any{"limit": 41}}
	dataVal, err := ast.InterfaceToValue(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			module := "package t\n\n" + tc.module
			opts := []func(*rego.Rego){rego.Module("t.rego", module), rego.Query("x = data.t.p"), rego.SetRegoVersion(ast.RegoV1), rego.StrictBuiltinErrors(true)}

			var want any
			pq, err := rego.New(append(opts, rego.Store(inmem.NewFromObject(data)))...).PrepareForEval(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rs, tdErr := pq.Eval(ctx, rego.EvalInput(in), rego.EvalTime(now))
			if tdErr == nil && len(rs) == 1 {
				want = rs[0].Bindings["x"]
			}

			var pol *ir.Policy
			if _, err := rego.New(append(opts, rego.Target(target))...).PrepareForEval(context.WithValue(ctx, sinkKey{}, &pol)); err != nil {
				t.Fatal(err)
			}
			prog, err := irvm.New(pol, "eval", nil)
			if err != nil {
				t.Fatal(err)
			}
			res, vmErr := prog.Eval(ctx, inVal, irvm.Options{Data: dataVal, Time: ast.NumberTerm(json.Number(strconv.FormatInt(now.UnixNano(), 10)))})
			if (tdErr != nil) != (vmErr != nil) {
				t.Fatalf("topdown error %v, irvm error %v", tdErr, vmErr)
			}
			if tdErr != nil {
				return
			}
			var got any
			if len(res) > 1 {
				t.Fatalf("irvm gave %d results", len(res))
			}
			if len(res) == 1 {
				v := res[0].Value.(ast.Object).Get(ast.StringTerm("x"))
				if v != nil {
					j, err := ast.JSONWithOpt(v.Value, ast.JSONOpt{})
					if err != nil {
						t.Fatal(err)
					}
					got = normal(t, j)
				}
			}
			want = normal(t, want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("irvm gave\n%v\ntopdown gave\n%v", got, want)
			}
		})
	}
}

// normal makes rego's and irvm's JSON comparable: numbers as json.Number either way.
func normal(t *testing.T, v any) any {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProgram_refusesWith(t *testing.T) {
	ctx := context.Background()
	var pol *ir.Policy
	module := "package t\n\nq := input.a\n\np := v if {\n\tv := q with input.a as 1\n}\n"
	if _, err := rego.New(rego.Module("t.rego", module), rego.Query("x = data.t.p"), rego.Target(target)).PrepareForEval(context.WithValue(ctx, sinkKey{}, &pol)); err != nil {
		t.Fatal(err)
	}
	prog, err := irvm.New(pol, "eval", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prog.Eval(ctx, ast.NewObject(), irvm.Options{}); !errors.Is(err, irvm.ErrUnsupported) {
		t.Fatalf("Eval = %v, want ErrUnsupported", err)
	}
}
