package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands the demo prints work as they stand: "warden" only when that is the
// running binary on the PATH; a stable binary elsewhere by its path; a 'go run' build
// (gone once the demo exits) with the hint to install warden first.
func TestInvocation_printsCommandsThatWork(t *testing.T) {
	tmp := t.TempDir()
	goRun := filepath.Join(tmp, "go-build123456", "b001", "exe", "warden")
	bin := filepath.Join(t.TempDir(), "bin", "warden")
	other := filepath.Join(t.TempDir(), "warden")
	for _, f := range []string{goRun, bin, other} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "warden")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	same := func(p string) string { return p }
	for _, tc := range []struct {
		name, exe, onPath string
		cmd               string
		hint              bool
	}{
		{"the warden on the PATH", bin, bin, "warden", false},
		{"the PATH's warden through a link", bin, link, "warden", false},
		{"go run, warden not installed", goRun, "", "warden", true},
		{"go run, another warden installed", goRun, other, "warden", true},
		{"a stable binary off the PATH", bin, "", bin, false},
		{"a stable binary, another warden on the PATH", bin, other, bin, false},
		{"unknown executable", "", other, "warden", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, hint := invocation(tc.exe, tc.onPath, []string{tmp}, same)
			if cmd != tc.cmd || (hint != "") != tc.hint {
				t.Fatalf("invocation(%q, %q) = %q, %q; want %q, hint %v", tc.exe, tc.onPath, cmd, hint, tc.cmd, tc.hint)
			}
			if tc.hint && !strings.Contains(hint, "go install ./cmd/warden") {
				t.Errorf("hint %q does not say how to install warden", hint)
			}
		})
	}
	// A path with a space is quoted for the shell.
	spaced := filepath.Join(t.TempDir(), "my bin", "warden")
	if cmd, _ := invocation(spaced, "", []string{tmp}, same); cmd != "'"+spaced+"'" {
		t.Errorf("a path with a space: %q", cmd)
	}
}
