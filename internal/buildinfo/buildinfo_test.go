package buildinfo_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/warden-sec/warden/internal/buildinfo"
)

func TestNewBuildInfo(t *testing.T) {
	yes, no := true, false
	stamped := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/warden-sec/warden", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	devel := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/warden-sec/warden", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210fedcba9876543210fedcba98"}, {Key: "vcs.modified", Value: "false"}}}
	platform := func(b buildinfo.Info) buildinfo.Info { b.OS, b.Arch = runtime.GOOS, runtime.GOARCH; return b }
	tests := []struct {
		name                     string
		bi                       *debug.BuildInfo
		linkVersion, linkRevison string
		want                     buildinfo.Info
	}{
		{"no build information at all", nil, "", "",
			platform(buildinfo.Info{Version: "dev", GoVersion: runtime.Version()})},
		{"go install …@v1.4.0 from a modified tree", stamped, "", "",
			platform(buildinfo.Info{Module: "github.com/warden-sec/warden", Version: "v1.4.0", Revision: "0123456789abcdef0123456789abcdef01234567",
				Modified: &yes, CommitTime: "2026-11-30T12:00:00Z", GoVersion: "go1.26.1"})},
		{"a local build: (devel) is no version", devel, "", "",
			platform(buildinfo.Info{Module: "github.com/warden-sec/warden", Version: "dev", Revision: "fedcba9876543210fedcba9876543210fedcba98",
				Modified: &no, GoVersion: "go1.26.1"})},
		{"the linker's version wins over the module's", stamped, "v1.5.0-rc.1", "",
			platform(buildinfo.Info{Module: "github.com/warden-sec/warden", Version: "v1.5.0-rc.1", Revision: "0123456789abcdef0123456789abcdef01234567",
				Modified: &yes, CommitTime: "2026-11-30T12:00:00Z", GoVersion: "go1.26.1"})},
		{"the Docker build: version and revision from the linker, no VCS stamp",
			&debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/warden-sec/warden", Version: "(devel)"}},
			"v1.5.0", "abc1234",
			platform(buildinfo.Info{Module: "github.com/warden-sec/warden", Version: "v1.5.0", Revision: "abc1234", GoVersion: "go1.26.1"})},
		{"a linker revision other than the stamped one drops the stamp's modified flag and time", stamped, "", "abc1234",
			platform(buildinfo.Info{Module: "github.com/warden-sec/warden", Version: "v1.4.0", Revision: "abc1234", GoVersion: "go1.26.1"})},
		{"the same revision from both keeps what the stamp knows", stamped, "", "0123456789abcdef0123456789abcdef01234567",
			platform(buildinfo.Info{Module: "github.com/warden-sec/warden", Version: "v1.4.0", Revision: "0123456789abcdef0123456789abcdef01234567",
				Modified: &yes, CommitTime: "2026-11-30T12:00:00Z", GoVersion: "go1.26.1"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildinfo.New(tt.bi, tt.linkVersion, tt.linkRevison)
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if !bytes.Equal(gj, wj) {
				t.Errorf("New:\n got %s\nwant %s", gj, wj)
			}
		})
	}
}
