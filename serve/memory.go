package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/bytesize"
)

// cgroupShare is the share of its cgroup's memory limit a replica holds its heap under
// by default: the rest is SQLite's pages, the binary and the stacks, which the Go
// runtime's limit does not see all of.
const cgroupShare = 0.9

// memoryLimit is the soft limit a replica runs under, and what decided it.
type memoryLimit struct {
	bytes  int64 // 0: none set by warden
	source string
}

// chooseMemoryLimit decides a replica's soft memory limit from daemon.memory_limit
// (setting), $GOMEMLIMIT (which the runtime has applied already, and which wins) and the
// cgroup the process runs in, read below root (/ outside tests).
func chooseMemoryLimit(setting string, getenv func(string) string, root string) (memoryLimit, error) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		return memoryLimit{source: "$GOMEMLIMIT=" + v}, nil
	}
	switch setting {
	case config.MemoryLimitOff:
		return memoryLimit{source: "daemon.memory_limit: off"}, nil
	case "":
		n, where := cgroupMemoryMax(root)
		if n <= 0 {
			return memoryLimit{source: "no daemon.memory_limit and no cgroup limit"}, nil
		}
		return memoryLimit{bytes: int64(float64(n) * cgroupShare), source: fmt.Sprintf("90%% of the cgroup's %d MiB (%s)", n>>20, where)}, nil
	}
	n, err := bytesize.Parse(setting)
	if err != nil {
		return memoryLimit{}, fmt.Errorf("daemon.memory_limit: %w", err)
	}
	return memoryLimit{bytes: n, source: "daemon.memory_limit"}, nil
}

// cgroupMemoryMax is the memory limit of the process's cgroup and the file that says
// it: cgroup v2's memory.max, else v1's memory.limit_in_bytes. 0: none, or none known.
func cgroupMemoryMax(root string) (int64, string) {
	var candidates []string
	if b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			// v2: "0::/path"; v1: "N:memory:/path" (or with other controllers).
			parts := strings.SplitN(sc.Text(), ":", 3)
			if len(parts) != 3 {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				candidates = append(candidates, filepath.Join(root, "sys/fs/cgroup", parts[2], "memory.max"))
			case strings.Contains(","+parts[1]+",", ",memory,"):
				candidates = append(candidates, filepath.Join(root, "sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			}
		}
	}
	// In a container the cgroup's own files are at the mount's top.
	candidates = append(candidates, filepath.Join(root, "sys/fs/cgroup/memory.max"), filepath.Join(root, "sys/fs/cgroup/memory/memory.limit_in_bytes"))
	for _, path := range candidates {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, path
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // v1 says "no limit" with a huge number
			return 0, path
		}
		return n, path
	}
	return 0, ""
}

// applyMemoryLimit sets the replica's soft memory limit (chooseMemoryLimit) and says so.
func applyMemoryLimit(setting string, log *slog.Logger) error {
	l, err := chooseMemoryLimit(setting, os.Getenv, "/")
	if err != nil {
		return err
	}
	if l.bytes > 0 {
		debug.SetMemoryLimit(l.bytes)
		log.Info("memory limit", "limit_mib", l.bytes>>20, "from", l.source)
		return nil
	}
	log.Info("no memory limit", "why", l.source)
	return nil
}
