package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// memoryClasses are the runtime metrics a memory breakdown names: together they are all
// the memory the Go runtime mapped, so that what the resident set holds beyond their
// resident part was mapped by something else (SQLite's allocator, in warden).
var memoryClasses = []string{
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
	"/memory/classes/total:bytes",
}

// residentKiB is the process's resident set from /proc/self/status (VmRSS), 0 where
// there is no such file.
func residentKiB() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// breakdown is the resident set and the runtime's memory classes at now, one per line,
// in MiB, with what the Go runtime does not account for: mapped and resident, but
// neither heap nor stacks nor the runtime's metadata.
func breakdown(now time.Time, rssKiB uint64) []byte {
	samples := make([]metrics.Sample, len(memoryClasses))
	for i, n := range memoryClasses {
		samples[i].Name = n
	}
	metrics.Read(samples)
	var b bytes.Buffer
	fmt.Fprintf(&b, "at %s\n", now.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "%-40s %8.1f MiB\n", "resident set (VmRSS)", float64(rssKiB)/1024)
	var total, released uint64
	for _, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			continue
		}
		v := s.Value.Uint64()
		switch s.Name {
		case "/memory/classes/total:bytes":
			total = v
		case "/memory/classes/heap/released:bytes":
			released = v
		}
		fmt.Fprintf(&b, "%-40s %8.1f MiB\n", s.Name, float64(v)/(1<<20))
	}
	goRetained := total - released
	outside := int64(rssKiB)*1024 - int64(goRetained)
	fmt.Fprintf(&b, "%-40s %8.1f MiB\n", "Go runtime's, not released", float64(goRetained)/(1<<20))
	fmt.Fprintf(&b, "%-40s %8.1f MiB\n", "resident beyond Go's (at least)", float64(outside)/(1<<20))
	return b.Bytes()
}
