package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// Source is a tree of .rego files: the embedded pack, or a directory of the user's.
type Source struct {
	FS fs.FS
	// Prefix is prepended to paths in errors and listings (e.g. "policies" or the
	// directory the user named).
	Prefix string

	// libraryOnly keeps, of the built-in pack, only its shared library (lib/, without
	// its tests): see BuiltinLibrary.
	libraryOnly bool
}

// Builtin is the built-in pack: its policies, their shared library and their tests.
func Builtin() Source { return Source{FS: policies.FS, Prefix: "policies"} }

// BuiltinLibrary is the built-in pack's shared library (data.warden.lib) without its
// policies: what --no-builtin keeps. A user policy may import the library but no user
// module may define it (the namespace is reserved), so leaving it out would make such
// a policy's rules undefined, and the policy would silently find nothing.
func BuiltinLibrary() Source { return Source{FS: policies.FS, Prefix: "policies", libraryOnly: true} }

// Policy is one loaded policy: its metadata and where it lives.
type Policy struct {
	ID            string               `json:"id"`
	Title         string               `json:"title"`
	Description   string               `json:"description"`
	Severity      findings.Severity    `json:"severity"`
	ResourceTypes []string             `json:"resource_types"`
	Frameworks    map[string][]string  `json:"frameworks,omitempty"`
	Remediation   findings.Remediation `json:"remediation"`
	// Prowler lists the Prowler checks the policy implements (custom.prowler), so that
	// the coverage table (docs/coverage.md) is generated from the pack and cannot drift.
	Prowler []string `json:"prowler,omitempty"`
	// Params are the violation fields that carry the action's params
	// (custom.remediation.params).
	Params  []string `json:"params,omitempty"`
	Package string   `json:"package"`
	File    string   `json:"file"`
	// line, col locate the METADATA block, for errors found after loading.
	line, col int
}

// Module is one parsed Rego file.
type Module struct {
	File   string
	Source []byte
	Parsed *ast.Module
	Test   bool // a _test.rego file
}

// PolicyError is a problem in a policy file, located by file, line and column.
type PolicyError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *PolicyError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Frameworks are the compliance framework ids policies may map controls of.
var Frameworks = []string{"cis-aws-3.0", "cis-gcp-2.0", "nist-800-53-r5", "pci-dss-4.0", "soc2", "iso-27001-2022"}

var risks = []string{"none", "low", "medium", "high", "critical"}

// LoadModules parses every .rego file of the sources, tests included.
func LoadModules(sources ...Source) ([]*Module, error) {
	var mods []*Module
	var errs []error
	// Modules are compiled by file name: a second file of the same name (--policies
	// policies, from the repository's root) would silently replace the first, and with it
	// a built-in policy.
	seen := map[string]string{}
	for _, src := range sources {
		err := fs.WalkDir(src.FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if src.libraryOnly && d.IsDir() && p != "." && p != "lib" {
				return fs.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".rego") || (src.libraryOnly && strings.HasSuffix(p, "_test.rego")) {
				return nil
			}
			b, err := fs.ReadFile(src.FS, p)
			if err != nil {
				return err
			}
			name := path.Join(src.Prefix, p)
			if prev, dup := seen[name]; dup {
				errs = append(errs, &PolicyError{File: name, Msg: fmt.Sprintf("loaded twice, from %s and from %s: a policy directory may not shadow another (is the built-in pack given again with --policies?)", prev, sourceName(src))})
				return nil
			}
			seen[name] = sourceName(src)
			m, err := ast.ParseModuleWithOpts(name, string(b), ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
			if err != nil {
				errs = append(errs, regoErrors(name, err)...)
				return nil
			}
			mods = append(mods, &Module{File: name, Source: b, Parsed: m, Test: strings.HasSuffix(p, "_test.rego")})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("load policies from %s: %w", src.Prefix, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return mods, nil
}

// sourceName says where a source comes from, for errors.
func sourceName(src Source) string {
	if isBuiltinSource(src) {
		return "the built-in pack"
	}
	return "--policies " + src.Prefix
}

// regoErrors turns OPA's parse and compile errors into PolicyErrors.
func regoErrors(file string, err error) []error {
	var astErrs ast.Errors
	if errors.As(err, &astErrs) {
		out := make([]error, 0, len(astErrs))
		for _, e := range astErrs {
			pe := &PolicyError{File: file, Msg: e.Message}
			if e.Location != nil {
				if e.Location.File != "" {
					pe.File = e.Location.File
				}
				pe.Line, pe.Col = e.Location.Row, e.Location.Col
			}
			out = append(out, pe)
		}
		return out
	}
	return []error{&PolicyError{File: file, Msg: err.Error()}}
}

// policyOf reads a module's package metadata. It returns nil for a module without a deny
// rule (a library), and an error naming the field when the metadata is incomplete.
func policyOf(m *Module) (*Policy, error) {
	hasDeny := false
	for _, r := range m.Parsed.Rules {
		if r.Head.Name.Equal(ast.Var("deny")) || (len(r.Head.Reference) > 0 && r.Head.Reference[0].Value.Compare(ast.Var("deny")) == 0) {
			hasDeny = true
			// Any other shape (deny := "x", deny[k] := v, deny.sub contains x) would be
			// read as no violation at all, silently.
			if len(r.Head.Ref()) != 1 || r.Head.Key == nil || r.Head.Value != nil {
				return nil, locErr(m.File, r.Location, "deny must be a set rule: deny contains violation if { … }")
			}
		}
	}
	if !hasDeny {
		return nil, nil
	}
	pkgLoc := m.Parsed.Package.Location
	fail := func(field, msg string) error {
		line, col := 0, 0
		if pkgLoc != nil {
			line, col = pkgLoc.Row, pkgLoc.Col
		}
		return &PolicyError{File: m.File, Line: line, Col: col, Msg: fmt.Sprintf("METADATA %s: %s", field, msg)}
	}
	var ann *ast.Annotations
	for _, a := range m.Parsed.Annotations {
		if a.Scope == "package" {
			ann = a
			break
		}
	}
	if ann == nil {
		return nil, fail("", "a policy (a package with a deny rule) needs a # METADATA block before its package, with custom.id, severity, resource_types")
	}
	if ann.Location != nil {
		pkgLoc = ann.Location
	}
	p := &Policy{Title: ann.Title, Description: ann.Description, File: m.File,
		Package: strings.TrimPrefix(m.Parsed.Package.Path.String(), "data.")}
	c := ann.Custom
	id, _ := c["id"].(string)
	if id == "" {
		return nil, fail("custom.id", "is required (e.g. ACME-AWS-IAM-001)")
	}
	p.ID = id
	if p.Title == "" {
		return nil, fail("title", "is required")
	}
	sev, _ := c["severity"].(string)
	s, err := findings.ParseSeverity(sev)
	if err != nil {
		return nil, fail("custom.severity", err.Error())
	}
	p.Severity = s
	types, ok := stringList(c["resource_types"])
	if !ok || len(types) == 0 {
		return nil, fail("custom.resource_types", "is required: a list of resource types such as [aws.iam.user]")
	}
	for _, t := range types {
		if !snapshot.KnownType(t) {
			msg := fmt.Sprintf("unknown resource type %q", t)
			if sg := snapshot.SuggestType(t); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			return nil, fail("custom.resource_types", msg)
		}
	}
	p.ResourceTypes = types
	if fw, ok := c["frameworks"]; ok {
		obj, ok := fw.(map[string]any)
		if !ok {
			return nil, fail("custom.frameworks", "must map framework ids to lists of control ids")
		}
		p.Frameworks = map[string][]string{}
		for k, v := range obj {
			if !slices.Contains(Frameworks, k) {
				msg := fmt.Sprintf("unknown framework %q", k)
				if sg := snapshot.Suggest(k, Frameworks); sg != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sg)
				}
				return nil, fail("custom.frameworks", msg)
			}
			ctl, ok := stringList(v)
			if !ok {
				return nil, fail("custom.frameworks."+k, "must be a list of control ids")
			}
			p.Frameworks[k] = ctl
		}
	}
	if raw, ok := c["prowler"]; ok {
		ids, ok := stringList(raw)
		if !ok || len(ids) == 0 {
			return nil, fail("custom.prowler", "must be a list of Prowler check ids, e.g. [iam_root_mfa_enabled]")
		}
		for _, id := range ids {
			if !validCheckID(id) {
				return nil, fail("custom.prowler", fmt.Sprintf("%q is not a Prowler check id (lower case letters, digits and underscores)", id))
			}
		}
		p.Prowler = ids
	}
	rem, _ := c["remediation"].(map[string]any)
	if rem == nil {
		return nil, fail("custom.remediation", "is required: {action: <remediator or notify>, risk: <none|low|medium|high|critical>}")
	}
	p.Remediation.Action, _ = rem["action"].(string)
	riskName, _ := rem["risk"].(string)
	if p.Remediation.Action == "" {
		return nil, fail("custom.remediation.action", "is required (notify when no fix is automated)")
	}
	if !slices.Contains(risks, riskName) {
		return nil, fail("custom.remediation.risk", fmt.Sprintf("%q is not one of none, low, medium, high, critical", riskName))
	}
	p.Remediation.Risk, _ = findings.ParseRisk(riskName)
	if raw, ok := rem["params"]; ok {
		params, ok := stringList(raw)
		if !ok {
			return nil, fail("custom.remediation.params", "must be a list of violation field names, e.g. [role, member]")
		}
		p.Params = params
	}
	for k := range rem {
		if k != "action" && k != "risk" && k != "params" {
			return nil, fail("custom.remediation."+k, "is not a remediation field (action, risk, params)")
		}
	}
	if pkgLoc != nil {
		p.line, p.col = pkgLoc.Row, pkgLoc.Col
	}
	return p, nil
}

// validCheckID reports whether id has the shape of a Prowler check id
// (iam_root_mfa_enabled).
func validCheckID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, fmt.Sprint(s))
		}
		return out, true
	}
	return nil, false
}
