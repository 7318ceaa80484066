package cpuprofile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-sec/warden/internal/cpuprofile"
)

func TestStart_writesAProfileOnStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := cpuprofile.Start(path)
	if err != nil {
		t.Fatal(err)
	}
	// A second profile cannot run beside the first: the file is closed, not left behind open.
	if _, err := cpuprofile.Start(filepath.Join(t.TempDir(), "second.pprof")); err == nil {
		t.Error("a second profile started while the first runs")
	}
	stop()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("profile %s: %v, %v; want a non-empty file", path, fi, err)
	}
}

func TestStart_namesTheFileItCannotCreate(t *testing.T) {
	if _, err := cpuprofile.Start(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof")); err == nil {
		t.Error("Start in a missing directory succeeded")
	}
}
