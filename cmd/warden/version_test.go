package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	dbuildinfo "debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/buildinfo"
)

func TestVersionCmd(t *testing.T) {
	// The test binary is stamped like any build: its own information is what the command
	// must print, whatever this machine's toolchain and flags.
	want := readBuildInfo()
	tests := []struct {
		name  string
		args  []string
		code  int
		check func(t *testing.T, stdout, stderr string)
	}{
		{"text", []string{"version"}, 0, func(t *testing.T, stdout, _ string) {
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if lines[0] != "warden "+want.Version {
				t.Errorf("first line %q, want %q", lines[0], "warden "+want.Version)
			}
			for _, l := range []string{"go:          " + runtime.Version(), "platform:    " + runtime.GOOS + "/" + runtime.GOARCH} {
				if !slices.Contains(lines, l) {
					t.Errorf("no line %q in:\n%s", l, stdout)
				}
			}
			hasRevision := slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "revision:") })
			if hasRevision != (want.Revision != "") {
				t.Errorf("revision line present: %v, but the build's revision is %q:\n%s", hasRevision, want.Revision, stdout)
			}
		}},
		{"json", []string{"version", "--format", "json"}, 0, func(t *testing.T, stdout, _ string) {
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			for k, v := range map[string]string{"version": want.Version, "go_version": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH} {
				if got[k] != v {
					t.Errorf("%s = %v, want %q", k, got[k], v)
				}
			}
		}},
		{"the root's --version agrees", []string{"--version"}, 0, func(t *testing.T, stdout, _ string) {
			if !strings.Contains(stdout, want.Version) {
				t.Errorf("--version printed %q, want it to name %q", stdout, want.Version)
			}
		}},
		{"unknown format", []string{"version", "--format", "yaml"}, exitError, func(t *testing.T, stdout, stderr string) {
			if stdout != "" || !strings.Contains(stderr, `unknown format "yaml"`) {
				t.Errorf("stdout %q, stderr %q", stdout, stderr)
			}
		}},
		{"no arguments", []string{"version", "extra"}, exitError, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "unknown command") && !strings.Contains(stderr, "accepts 0 arg") {
				t.Errorf("stderr %q", stderr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := warden(t, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			tt.check(t, stdout, stderr)
		})
	}
}

// TestBuild_reproducible builds warden twice as the Dockerfile does (-trimpath,
// -buildvcs=false, CGO_ENABLED=0, the version through -ldflags) from two copies of the
// source at different paths, into different output paths and with different GOFLAGS,
// and wants the same bytes. The build cache is shared: with -trimpath the go command
// leaves the source directory out of its cache keys, so what this proves beyond the
// go command's own promise is the link (deterministic, no timestamp), the ldflags, and
// that no path of the build machine reaches the binary.
func TestBuild_reproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds warden twice (about 30 s with a warm build cache)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	start := time.Now()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// Read once, written twice: the two copies are the same source even if the tree
	// changes meanwhile.
	src := readFiles(t, root, sourceFiles(t, goBin, root))
	tmp := t.TempDir()
	builds := []struct{ src, out, goflags string }{
		{filepath.Join(tmp, "a", "warden"), filepath.Join(tmp, "out-a", "warden"), "-mod=readonly"},
		{filepath.Join(tmp, "b", "elsewhere", "src"), filepath.Join(tmp, "out-b", "bin", "warden-copy"), "-mod=readonly -p=1"},
	}
	// A cold cache must not run into the package's test timeout, which would end every
	// other test of the package with it.
	budget := 5 * time.Minute
	if d, ok := t.Deadline(); ok {
		budget = min(budget, time.Until(d)-time.Minute)
	}
	ctx, cancel := context.WithTimeout(t.Context(), budget)
	defer cancel()
	var sums []string
	for _, b := range builds {
		writeFiles(t, b.src, src)
		cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -X main.buildVersion=v0.0.0-repro -X main.buildRevision=0000000",
			"-o", b.out, "./cmd/warden")
		cmd.Dir = b.src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS="+b.goflags, "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				// What was compiled stays in the cache: the next run goes on from there.
				t.Skipf("go build did not finish within %v: the build cache has no -trimpath CGO_ENABLED=0 build of the dependencies yet (the first takes minutes)", budget)
			}
			t.Fatalf("go build in %s: %v\n%s", b.src, err, out)
		}
		bin, err := os.ReadFile(b.out)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{b.src, root, tmp} {
			if bytes.Contains(bin, []byte(p)) {
				t.Errorf("%s holds the build path %s: -trimpath did not hold", b.out, p)
			}
		}
		bi, err := dbuildinfo.ReadFile(b.out)
		if err != nil {
			t.Fatal(err)
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if settings["-trimpath"] != "true" || settings["CGO_ENABLED"] != "0" || settings["vcs.revision"] != "" {
			t.Errorf("%s: build settings %v: want -trimpath, CGO_ENABLED=0 and no VCS stamp", b.out, settings)
		}
		sum := sha256.Sum256(bin)
		sums = append(sums, hex.EncodeToString(sum[:]))
	}
	if sums[0] != sums[1] {
		t.Errorf("two builds of the same source differ: sha256 %s (%s) and %s (%s)", sums[0], builds[0].src, sums[1], builds[1].src)
	}
	// The ldflags reach the command: the binary says what it was given.
	out, err := exec.Command(builds[1].out, "version", "--format", "json").Output()
	if err != nil {
		t.Fatalf("warden version: %v", err)
	}
	var got buildinfo.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("warden version --format json: %v\n%s", err, out)
	}
	if got.Version != "v0.0.0-repro" || got.Revision != "0000000" || got.Module != "github.com/warden-sec/warden" {
		t.Errorf("warden version printed %+v", got)
	}
	t.Logf("sha256 %s, both builds in %v", sums[0], time.Since(start).Round(time.Second))
}

// sourceFiles lists, relative to root, the files a build of ./cmd/warden reads from the
// main module: go.mod, go.sum, and each package's Go and embedded files.
func sourceFiles(t *testing.T, goBin, root string) []string {
	t.Helper()
	cmd := exec.Command(goBin, "list", "-deps", "-json=Dir,GoFiles,EmbedFiles,Module", "./cmd/warden")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Dir                 string
			GoFiles, EmbedFiles []string
			Module              *struct{ Main bool }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range slices.Concat(p.GoFiles, p.EmbedFiles) {
			files = append(files, filepath.Join(rel, f))
		}
	}
	return files
}

// readFiles reads the files, relative to root, into memory.
func readFiles(t *testing.T, root string, files []string) map[string][]byte {
	t.Helper()
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

// writeFiles writes files (by relative path) below dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for f, b := range files {
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
