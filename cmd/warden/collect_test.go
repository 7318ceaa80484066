//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
)

// TestWriteAtomically: --out and -o replace a regular file whole, write through a link to
// its target, and write a device or pipe in place instead of renaming a file over it (as
// root, `-o /dev/null` once replaced /dev/null with a regular file).
func TestWriteAtomically(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (path string, read func() string)
		fail  bool   // the writer fails
		want  string // what the path then reads
		mode  os.FileMode
	}{
		{"new file", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "out.json")
			return p, func() string { return readFile(t, p) }
		}, false, "new", 0},
		{"existing file", func(t *testing.T, dir string) (string, func() string) {
			p := write(t, dir, "out.json", "old content")
			return p, func() string { return readFile(t, p) }
		}, false, "new", 0},
		{"failed write keeps the old file", func(t *testing.T, dir string) (string, func() string) {
			p := write(t, dir, "out.json", "old")
			return p, func() string { return readFile(t, p) }
		}, true, "old", 0},
		{"symbolic link", func(t *testing.T, dir string) (string, func() string) {
			target := write(t, dir, "data/snap.json", "old")
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link, func() string { return readFile(t, target) }
		}, false, "new", os.ModeSymlink},
		{"named pipe", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "pipe")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no named pipes here:", err)
			}
			got := make(chan string, 1)
			go func() {
				b, _ := os.ReadFile(p)
				got <- string(b)
			}()
			return p, func() string {
				select {
				case s := <-got:
					return s
				case <-time.After(5 * time.Second):
					return "(nothing reached the pipe's reader)"
				}
			}
		}, false, "new", os.ModeNamedPipe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, read := tc.setup(t, dir)
			err := writeAtomically(path, func(w io.Writer) error {
				if _, err := io.WriteString(w, "new"); err != nil {
					return err
				}
				if tc.fail {
					return errors.New("collector failed")
				}
				return nil
			})
			if (err != nil) != tc.fail {
				t.Fatalf("writeAtomically = %v, want failure %v", err, tc.fail)
			}
			st, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Type() != tc.mode {
				t.Errorf("%s is now %v, want %v", path, st.Mode().Type(), tc.mode)
			}
			if got := read(); got != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "**", ".warden-*"))
			top, _ := filepath.Glob(filepath.Join(dir, ".warden-*"))
			if len(left)+len(top) > 0 {
				t.Errorf("temporary files left behind: %v %v", left, top)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The flags lay over the config's targets: without changing the config.
func TestTargetFlags_layOverTheConfig(t *testing.T) {
	base := func() *config.Config {
		return &config.Config{Targets: config.Targets{TLS: []string{"a.example.com"},
			AWS: &config.AWSTargets{Regions: []string{"eu-west-1"}, OrgRole: "Audit", Concurrency: 2},
			GCP: &config.GCPTargets{Projects: []string{"p1"}}}}
	}
	tests := []struct {
		name  string
		flags targetFlags
		cfg   *config.Config
		check func(t *testing.T, got collect.Targets)
	}{
		{"config alone", targetFlags{}, base(), func(t *testing.T, got collect.Targets) {
			if got.AWS == nil || got.AWS.OrgRole != "Audit" || got.AWS.Concurrency != 2 || !slices.Equal(got.GCP.Projects, []string{"p1"}) || !slices.Equal(got.TLS, []string{"a.example.com"}) {
				t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
			}
		}},
		{"flags add TLS and projects, replace regions and the role", targetFlags{tls: []string{"b.example.com"}, regions: []string{"us-east-1"}, awsOrgRole: "Other", gcpProjects: []string{"p2"}, gcpEndpoint: "http://127.0.0.1:1"}, base(),
			func(t *testing.T, got collect.Targets) {
				if !slices.Equal(got.TLS, []string{"a.example.com", "b.example.com"}) || !slices.Equal(got.AWS.Regions, []string{"us-east-1"}) || got.AWS.OrgRole != "Other" ||
					!slices.Equal(got.GCP.Projects, []string{"p1", "p2"}) || got.GCP.Endpoint != "http://127.0.0.1:1" {
					t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
				}
			}},
		{"--aws-org on an empty config", targetFlags{awsOrg: true}, &config.Config{}, func(t *testing.T, got collect.Targets) {
			if got.AWS == nil || !got.AWS.Org || got.GCP != nil || len(got.TLS) != 0 {
				t.Errorf("%+v %+v %+v", got.AWS, got.GCP, got.TLS)
			}
		}},
		{"nothing anywhere", targetFlags{}, &config.Config{}, func(t *testing.T, got collect.Targets) {
			if !got.Empty() {
				t.Errorf("%+v", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprintf("%+v %+v %+v", tc.cfg.Targets.TLS, tc.cfg.Targets.AWS, tc.cfg.Targets.GCP)
			tc.check(t, tc.flags.targets(tc.cfg))
			if after := fmt.Sprintf("%+v %+v %+v", tc.cfg.Targets.TLS, tc.cfg.Targets.AWS, tc.cfg.Targets.GCP); after != before {
				t.Errorf("the config changed: %s → %s", before, after)
			}
		})
	}
}
