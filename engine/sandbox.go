package engine

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/warden-sec/warden/policies"
)

// deniedBuiltins are the OPA built-ins a warden policy may not call: a policy judges the
// snapshot it is given, so the same snapshot must always give the same findings, and
// evaluating it must not reach anything outside. time.now_ns stays: the engine fixes it
// at the snapshot's time (rego.EvalTime) for the whole scan. print and trace stay too:
// the engine compiles print calls away and installs no tracer, so they write nothing
// during a scan, and they help under warden policy test.
var deniedBuiltins = map[string]string{
	"http.send":              "it reaches the network",
	"net.lookup_ip_addr":     "it reaches the network (DNS)",
	"opa.runtime":            "it reads the process environment",
	"rand.intn":              "it is random",
	"uuid.rfc4122":           "it is random",
	"io.jwt.encode_sign":     "it is random (signatures use fresh randomness)",
	"io.jwt.encode_sign_raw": "it is random (signatures use fresh randomness)",
}

// capabilities are what policies are compiled against: this OPA's built-ins but the
// denied ones, and no network for anything (json.match_schema's remote $refs included).
func capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		_, denied := deniedBuiltins[b.Name]
		return denied
	})
	caps.AllowNet = []string{}
	return caps
}

// deniedBuiltinError rewrites the compiler's "undefined function" for a denied built-in
// into why it is refused.
func deniedBuiltinError(e *ast.Error) {
	name, ok := strings.CutPrefix(e.Message, "undefined function ")
	if !ok {
		return
	}
	if why := deniedBuiltins[name]; why != "" {
		e.Message = fmt.Sprintf("%s is not allowed in warden policies: %s", name, why)
	}
}

// isBuiltinSource reports whether src is the embedded pack, the only source allowed to
// declare the reserved namespaces.
func isBuiltinSource(src Source) bool {
	// Interfaces compare by dynamic type first: a map-backed fs.FS is never compared
	// as a map, so this cannot panic.
	return src.FS == fs.FS(policies.FS)
}

// reserved is what only the built-in pack may define: the engine's generated modules,
// the shared library, the settings document, and the package of every built-in policy.
type reserved struct {
	paths []ast.Ref
}

func newReserved(builtinPolicyPkgs []string) *reserved {
	r := &reserved{paths: []ast.Ref{
		ast.MustParseRef("data." + enginePackage),
		ast.MustParseRef("data.warden.lib"),
		ast.MustParseRef("data.warden.config"),
	}}
	for _, p := range builtinPolicyPkgs {
		r.paths = append(r.paths, ast.MustParseRef("data."+p))
	}
	return r
}

// within returns the reserved path that ref lies in, or nil.
func (r *reserved) within(ref ast.Ref) ast.Ref {
	for _, p := range r.paths {
		if ref.HasPrefix(p) {
			return p
		}
	}
	return nil
}

// overlap returns the reserved path that ref lies in, or that lies in ref (a document
// defined at ref would then contain it), or nil.
func (r *reserved) overlap(ref ast.Ref) ast.Ref {
	if p := r.within(ref); p != nil {
		return p
	}
	for _, p := range r.paths {
		if p.HasPrefix(ref) {
			return p
		}
	}
	return nil
}

// check refuses a user module that declares a package in a reserved path, or a rule
// whose document lands in one or would contain one (a rule head may be a ref: package
// warden, lib.net.x := …; a rule with a variable key could produce any key).
func (r *reserved) check(m *Module) []error {
	pkg := m.Parsed.Package
	if p := r.within(pkg.Path); p != nil {
		return []error{locErr(m.File, pkg.Location, fmt.Sprintf("package %s is reserved for warden's built-in pack (%s): choose a package of your own",
			refName(pkg.Path), refName(p)))}
	}
	var errs []error
	for _, rule := range m.Parsed.Rules {
		path := pkg.Path.Extend(rule.Head.Ref().GroundPrefix())
		if p := r.overlap(path); p != nil {
			errs = append(errs, locErr(m.File, rule.Location, fmt.Sprintf("rule %s is in %s, reserved for warden's built-in pack: choose a package of your own",
				refName(path), refName(p))))
		}
	}
	return errs
}

func refName(r ast.Ref) string { return strings.TrimPrefix(r.String(), "data.") }

func locErr(file string, loc *ast.Location, msg string) error {
	pe := &PolicyError{File: file, Msg: msg}
	if loc != nil {
		pe.Line, pe.Col = loc.Row, loc.Col
	}
	return pe
}
