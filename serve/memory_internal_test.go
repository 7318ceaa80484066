package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChooseMemoryLimit(t *testing.T) {
	// files lays out a fake root: path → content.
	type files map[string]string
	v2 := files{"proc/self/cgroup": "0::/kubepods/pod1/c1\n", "sys/fs/cgroup/kubepods/pod1/c1/memory.max": "2147483648\n"}
	for _, c := range []struct {
		name    string
		setting string
		env     string
		fs      files
		want    int64
		source  string // a part of it
		err     string
	}{
		{"the cgroup v2 limit, 90% of it", "", "", v2, 1932735283, "90% of the cgroup's 2048 MiB", ""},
		{"a container's own cgroup at the mount's top", "", "", files{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "1073741824"}, 966367641, "cgroup's 1024 MiB", ""},
		{"cgroup v2 without a limit", "", "", files{"proc/self/cgroup": "0::/user.slice\n", "sys/fs/cgroup/user.slice/memory.max": "max\n"}, 0, "no cgroup limit", ""},
		{"cgroup v1", "", "", files{"proc/self/cgroup": "12:cpu,cpuacct:/x\n4:memory:/docker/abc\n", "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "536870912\n"}, 483183820, "memory.limit_in_bytes", ""},
		{"cgroup v1 without a limit", "", "", files{"proc/self/cgroup": "4:memory:/\n", "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, "no cgroup limit", ""},
		{"no cgroup at all", "", "", files{}, 0, "no cgroup limit", ""},
		{"the config's limit wins over the cgroup's", "900MiB", "", v2, 900 << 20, "daemon.memory_limit", ""},
		{"off, even in a cgroup", "off", "", v2, 0, "off", ""},
		{"$GOMEMLIMIT wins over everything", "900MiB", "700MiB", v2, 0, "$GOMEMLIMIT=700MiB", ""},
		{"a setting that is no size", "lots", "", v2, 0, "", `daemon.memory_limit: "lots" is not a size`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range c.fs {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			getenv := func(k string) string {
				if k == "GOMEMLIMIT" {
					return c.env
				}
				return ""
			}
			got, err := chooseMemoryLimit(c.setting, getenv, root)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.bytes != c.want || !strings.Contains(got.source, c.source) {
				t.Errorf("limit %d (%s), want %d (%s)", got.bytes, got.source, c.want, c.source)
			}
		})
	}
}
