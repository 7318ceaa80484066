package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of the repository starts with.
const module = "github.com/warden-sec/warden/"

// TestArchitecture keeps docs/architecture.md true to the code: its table names every
// package of the repository and no other, each `pkg.Name` or `pkg.Type.Method` it
// mentions exists, and the import rules it states hold (the rules are listed again
// here, in forbidden, so that a change of either is seen in review).
func TestArchitecture(t *testing.T) {
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := goPackages(t, "..")
	listed := tablePackages(string(doc))
	for _, p := range sortedKeys(pkgs) {
		if !listed[p] {
			t.Errorf("architecture.md: package %s is not in the table: add a row saying its one job", p)
		}
	}
	for _, p := range sortedKeys(listed) {
		if pkgs[p] == nil {
			t.Errorf("architecture.md: the table names %s, which is no package of the repository", p)
		}
	}
	for _, ref := range symbolRefs(string(doc), pkgs) {
		if !ref.pkg.has(ref.names) {
			t.Errorf("architecture.md: `%s` names nothing in package %s", ref.text, ref.dir)
		}
	}
}

// forbidden are the import rules of DESIGN.md and architecture.md: a package matching
// the first pattern imports nothing matching the second. "x/..." is x and below it.
var forbidden = []struct{ from, to, why string }{
	{"collectors/...", "engine/...", "collectors read the world; judging it is the engine's"},
	{"collectors/...", "remediate/...", "collectors read, they never change"},
	{"collectors/...", "remediators/...", "collectors read, they never change"},
	{"snapshot", "engine/...", "the resource model is below everything"},
	{"engine/...", "remediators/...", "the engine judges; it knows no fix"},
	{"engine/...", "remediate/...", "the engine judges; it knows no fix"},
	{"engine/...", "store/...", "the engine keeps nothing"},
	{"findings", "engine/...", "findings are the engine's output type, below it"},
	{"remediators/...", "remediate/...", "a remediator only speaks to its cloud; the machine is remediate's"},
	{"gates", "remediate/...", "the gate decides; the machine asks it"},
	{"audit", "remediate/...", "the audit log records; it drives nothing"},
	{"store", "audit/...", "the store is below every owner of a table"},
	{"compliance/evidence", "reconcile", "evidence reads the daemon's state through its owner, not the daemon"},
}

// TestArchitecture_imports holds the rules of forbidden, and that nothing below
// cmd/warden imports report (the result model lives with its use case).
func TestArchitecture_imports(t *testing.T) {
	pkgs := goPackages(t, "..")
	match := func(pattern, pkg string) bool {
		if base, ok := strings.CutSuffix(pattern, "/..."); ok {
			return pkg == base || strings.HasPrefix(pkg, base+"/")
		}
		return pkg == pattern
	}
	for _, p := range sortedKeys(pkgs) {
		for _, imp := range pkgs[p].imports {
			for _, r := range forbidden {
				if match(r.from, p) && match(r.to, imp) {
					t.Errorf("%s imports %s: %s", p, imp, r.why)
				}
			}
			if imp == "report" && p != "cmd/warden" {
				t.Errorf("%s imports report: report writes results; the model it writes belongs to its use case (scan.Result)", p)
			}
		}
	}
}

// pkgInfo is what the tests need of one package: its non-test imports inside the
// module, and its exported names (methods as Type.Method).
type pkgInfo struct {
	dir     string
	imports []string
	names   map[string]bool
}

func (p *pkgInfo) has(names []string) bool { return p.names[strings.Join(names, ".")] }

// goPackages parses every package of the repository rooted at root (non-test files,
// testdata and hidden folders left out), keyed by folder relative to root.
func goPackages(t *testing.T, root string) map[string]*pkgInfo {
	t.Helper()
	out := map[string]*pkgInfo{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if isIgnored(f) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		p := out[rel]
		if p == nil {
			p = &pkgInfo{dir: rel, names: map[string]bool{}}
			out[rel] = p
		}
		for _, imp := range f.Imports {
			s, _ := strconv.Unquote(imp.Path.Value)
			if in, ok := strings.CutPrefix(s, module); ok && !slices.Contains(p.imports, in) {
				p.imports = append(p.imports, in)
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					name = recvName(d.Recv.List[0].Type) + "." + name
				}
				p.names[name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						p.names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.names[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isIgnored reports whether a file is left out of every build (//go:build ignore), as
// generators run with go run are.
func isIgnored(f *ast.File) bool {
	for _, c := range f.Comments {
		for _, l := range c.List {
			if strings.HasPrefix(l.Text, "//go:build") && strings.Contains(l.Text, "ignore") {
				return true
			}
		}
	}
	return false
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// tableRow is a row of architecture.md's package table: | `path` | job |.
var tableRow = regexp.MustCompile("(?m)^\\| `([a-z0-9_./-]+)` \\|")

func tablePackages(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range tableRow.FindAllStringSubmatch(doc, -1) {
		out[m[1]] = true
	}
	return out
}

// symbolRef is a `pkg.Name` mention in the text.
type symbolRef struct {
	text, dir string
	names     []string
	pkg       *pkgInfo
}

// codeSpan is one `…` span of the page.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// symbolRefs finds the code spans that name an exported identifier of a package:
// `remediate.NewPlan`, `remediate.Machine.Apply`, `reconcile/daemon.Daemon`. A package
// is named by its folder, or by its last element when that is unique.
func symbolRefs(doc string, pkgs map[string]*pkgInfo) []symbolRef {
	byLast := map[string][]string{}
	for dir := range pkgs {
		last := dir[strings.LastIndex(dir, "/")+1:]
		byLast[last] = append(byLast[last], dir)
	}
	ident := regexp.MustCompile(`^([a-z0-9_/]+)\.([A-Z]\w*)(?:\.([A-Z]\w*))?(?:\(\))?$`)
	var out []symbolRef
	for _, m := range codeSpan.FindAllStringSubmatch(doc, -1) {
		sm := ident.FindStringSubmatch(m[1])
		if sm == nil {
			continue
		}
		dir := sm[1]
		if pkgs[dir] == nil {
			if c := byLast[dir]; len(c) == 1 {
				dir = c[0]
			} else {
				continue // not a package of ours: a Go or SDK name, left to the reader
			}
		}
		names := []string{sm[2]}
		if sm[3] != "" {
			names = append(names, sm[3])
		}
		out = append(out, symbolRef{text: m[1], dir: dir, names: names, pkg: pkgs[dir]})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
