package scan_test

import (
	"runtime/debug"
	"testing"

	"github.com/warden-sec/warden/scan"
)

// GOGC and GOMEMLIMIT, when set, are the user's word: TuneGC leaves the collector as
// they set it.
func TestTuneGC_leavesGOGCAndGOMEMLIMITAlone(t *testing.T) {
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	percent := debug.SetGCPercent(77)
	limit := debug.SetMemoryLimit(1 << 40)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	scan.TuneGC()
	if got := debug.SetGCPercent(77); got != 77 {
		t.Errorf("GC percent %d, want 77 as set", got)
	}
	if got := debug.SetMemoryLimit(1 << 40); got != 1<<40 {
		t.Errorf("memory limit %d, want %d as set", got, 1<<40)
	}
}
