package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/termesc"
)

// Test runs the Rego unit tests whose names match run: the built-in pack's (its library
// alone with noBuiltin) and those of dirs, with their policies.
func Test(ctx context.Context, run string, dirs []string, noBuiltin bool) ([]*tester.Result, error) {
	sources := []engine.Source{engine.Builtin()}
	if noBuiltin {
		sources = []engine.Source{engine.BuiltinLibrary()}
	}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("policy test: %s is not a directory", d)
		}
		sources = append(sources, engine.Source{FS: os.DirFS(d), Prefix: d})
	}
	if len(dirs) == 0 && noBuiltin {
		return nil, errors.New("policy test: --no-builtin needs at least one DIR")
	}
	return engine.Test(ctx, run, sources...)
}

// WriteTests writes each failure with its location and output (each pass too when
// verbose), then the counts, and returns them.
func WriteTests(w io.Writer, results []*tester.Result, verbose bool) (pass, fail int) {
	for _, r := range results {
		if r.Pass() {
			pass++
			if verbose {
				fmt.Fprintf(w, "PASS %s.%s (%s)\n", r.Package, r.Name, r.Duration)
			}
			continue
		}
		if r.Skip {
			continue
		}
		fail++
		loc := ""
		if r.Location != nil {
			loc = fmt.Sprintf("%s:%d: ", r.Location.File, r.Location.Row)
		}
		why := "FAIL"
		if r.Error != nil {
			why = "ERROR " + r.Error.Error()
		}
		fmt.Fprintf(w, "%s\n", termesc.EscapeLines(fmt.Sprintf("%s%s.%s: %s", loc, r.Package, r.Name, why)))
		if len(r.Output) > 0 {
			fmt.Fprintf(w, "  output: %s\n", termesc.EscapeLines(strings.TrimSpace(string(r.Output))))
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", pass, fail)
	return pass, fail
}
