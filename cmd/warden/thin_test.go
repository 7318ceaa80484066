package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCommandLines bounds cmd/warden's non-test lines: the command layer holds flags,
// help and calls; a use case that grows here belongs in a package (STYLE.md, "cmd wires,
// packages work"; docs/architecture.md). The ledger: 2,500 when issue 28 thinned the
// layer (5,598 before); +50 for `warden access` (issue 29: a command's help, flags and
// one call). Raise it only for a new command, by what its wiring takes.
const maxCommandLines = 2550

// maxFuncLines bounds a function of cmd/warden that is not a command's flag wiring
// (one returning *cobra.Command, which holds its help text and flags).
const maxFuncLines = 60

// TestCommandLayer_staysThin holds cmd/warden to wiring: at most maxCommandLines
// non-test lines, and no function over maxFuncLines lines other than a command's
// constructor. Either failing means a use case moved into the command layer.
func TestCommandLayer_staysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total, nfiles := 0, 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		nfiles++
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || returnsCommand(fn) {
				continue
			}
			start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if n := end - start + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines (at most %d outside a command's flags and help): move its work into the package of its use case",
					name, start, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
	if total > maxCommandLines {
		t.Errorf("cmd/warden has %d non-test lines, over %d: a use case grew in the command layer; move it into its package", total, maxCommandLines)
	}
	t.Logf("cmd/warden: %d non-test lines in %d files", total, nfiles)
}

// returnsCommand reports whether fn builds a cobra command (its results are one
// *cobra.Command): the function that holds a command's help text and flags.
func returnsCommand(fn *ast.FuncDecl) bool {
	r := fn.Type.Results
	if r == nil || len(r.List) != 1 {
		return false
	}
	star, ok := r.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Command"
}
