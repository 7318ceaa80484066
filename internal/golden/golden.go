// Package golden compares a test's output with a file under testdata, or rewrites the
// file when the test runs with -update: one place for the golden files of every package.
//
// The -update flag is golden's own: a test binary that imports golden accepts it, so
//
//	go test ./report -update
//
// rewrites report's golden files. Check reads the flag itself; a test that compares in
// its own way (metrics by their meaning, not their bytes) asks Update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the -update flag. Registered when the test binary starts, like the testing
// package's own flags, and only read afterwards.
var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Update reports whether the test runs with -update: golden files are to be rewritten
// from what the test produces, not compared with it.
func Update() bool { return *update }

// Check compares got with the file at path, byte for byte; with -update it writes got
// there instead (creating testdata/ if need be). A difference fails t with the first
// line that differs and accept, the command that rewrites the file.
func Check(t testing.TB, path string, got []byte, accept string) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s creates it)", err, accept)
	}
	if bytes.Equal(got, want) {
		return
	}
	n, g, w := firstDiff(string(got), string(want))
	t.Errorf("%s differs at line %d (%s to accept):\n got: %s\nwant: %s", path, n, accept, g, w)
}

// firstDiff is the number of the first line where a and b differ, and that line of each.
func firstDiff(a, b string) (int, string, string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		x, y := at(al, i), at(bl, i)
		if x != y {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}
