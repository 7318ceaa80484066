package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
)

// Test runs the Rego unit tests (test_* rules in *_test.rego files) of the sources, as
// `opa test` would, and returns one result per test. filter, when not empty, is a regular
// expression over test names.
func Test(ctx context.Context, filter string, sources ...Source) ([]*tester.Result, error) {
	mods, err := LoadModules(sources...)
	if err != nil {
		return nil, err
	}
	modules := make(map[string]*ast.Module, len(mods))
	for _, m := range mods {
		modules[m.File] = m.Parsed
	}
	// Policies are tested in the sandbox scans use: a denied built-in does not compile.
	// Built-in errors are not raised (scans raise them), as under the stock opa test:
	// the pack's tests still expect some to read as undefined.
	compiler := ast.NewCompiler().WithDefaultRegoVersion(ast.RegoV1).WithCapabilities(capabilities()).WithEnablePrintStatements(true)
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(inmem.New()).
		SetDefaultRegoVersion(ast.RegoV1).
		CapturePrintOutput(true).
		Filter(filter)
	ch, err := runner.Run(ctx, modules)
	if err != nil {
		var astErrs ast.Errors
		if errors.As(err, &astErrs) {
			for _, e := range astErrs {
				deniedBuiltinError(e)
			}
		}
		return nil, fmt.Errorf("run policy tests: %w", compileErr(err))
	}
	var out []*tester.Result
	for r := range ch {
		out = append(out, r)
	}
	return out, nil
}

// compileErr turns OPA compile errors into PolicyErrors (file:line:col).
func compileErr(err error) error {
	errs := regoErrors("", err)
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
