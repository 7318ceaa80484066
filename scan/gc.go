package scan

import (
	"os"
	"runtime/debug"
)

// TuneGC sets the garbage collector for an evaluation, unless GOGC or GOMEMLIMIT say
// otherwise. Commands call it before a scan; the daemon, which lives long and does more
// than evaluate, does not.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		// Evaluation allocates many short-lived values while little stays live:
		// collecting less often saves about a fifth of the CPU (BENCHMARKS.md).
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// ...but not at the price of memory: near 1.5 GiB the collector works harder.
		debug.SetMemoryLimit(1536 << 20)
	}
}
