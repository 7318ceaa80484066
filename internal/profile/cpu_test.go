package profile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-sec/warden/internal/profile"
)

func TestCPU_writesAProfileOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := profile.CPU(path)
	if err != nil {
		t.Fatal(err)
	}
	// A second profile cannot run beside the first: the file is closed, not left behind open.
	if _, err := profile.CPU(filepath.Join(t.TempDir(), "second.pprof")); err == nil {
		t.Error("a second profile started while the first runs")
	}
	stop()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("profile %s: %v, %v; want a non-empty file", path, fi, err)
	}
}

func TestCPU_namesTheFileItCannotCreate(t *testing.T) {
	if _, err := profile.CPU(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof")); err == nil {
		t.Error("CPU in a missing directory succeeded")
	}
}

func TestStart_writesTheProfilesAskedFor(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "heap.pprof")
	stop, err := profile.Start(cpu, heap)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, heap} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v, %v; want a non-empty file", p, fi, err)
		}
	}
	// Neither asked for: nothing to start, nothing to stop.
	stop, err = profile.Start("", "")
	if err != nil || stop() != nil {
		t.Errorf("Start with no profiles: %v", err)
	}
	// A heap profile it cannot write stops the CPU profile it started.
	if _, err := profile.Start(filepath.Join(dir, "cpu2.pprof"), filepath.Join(dir, "no", "heap.pprof")); err == nil {
		t.Fatal("Start with an unwritable heap profile succeeded")
	}
	stop, err = profile.Start(filepath.Join(dir, "cpu3.pprof"), "")
	if err != nil {
		t.Fatalf("the CPU profile was left running after a failed Start: %v", err)
	}
	stop()
}
