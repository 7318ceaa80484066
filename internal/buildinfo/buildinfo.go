// Package buildinfo says where a warden binary came from: its version, the VCS revision
// it was built from, the toolchain and the platform, as warden version prints them and
// reports, traces and the audit log name the version.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Info says where a binary came from.
type Info struct {
	// Module is the main module's path; Version its version: the linker's value, else
	// the module version the Go toolchain stamped (go install …@v1.2.3, or a
	// pseudo-version from VCS), else "dev".
	Module  string `json:"module,omitempty"`
	Version string `json:"version"`
	// Revision is the VCS commit built, when known; Modified whether the working tree
	// had uncommitted changes (known only when the toolchain stamped the revision, nil
	// otherwise); CommitTime the commit's time, never the build's: builds stay
	// reproducible.
	Revision   string `json:"revision,omitempty"`
	Modified   *bool  `json:"modified,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	// GoVersion is the toolchain that built the binary; OS and Arch its target.
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// Read is the running binary's build information, with the version and revision the
// linker was given (-X; empty when it was given none).
func Read(linkVersion, linkRevision string) Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return New(bi, linkVersion, linkRevision)
}

// New combines the toolchain's stamp (bi, nil when the binary has none) with what the
// linker was given; the linker's values win, since whoever passed them knew more than
// the build could see.
func New(bi *debug.BuildInfo, linkVersion, linkRevision string) Info {
	info := Info{Version: "dev", GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi != nil {
		info.Module = bi.Main.Path
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.CommitTime = s.Value
			case "vcs.modified":
				modified := s.Value == "true"
				info.Modified = &modified
			}
		}
	}
	if linkVersion != "" {
		info.Version = linkVersion
	}
	if linkRevision != "" && linkRevision != info.Revision {
		// The toolchain's modified flag and time describe another commit, if any.
		info.Revision, info.Modified, info.CommitTime = linkRevision, nil, ""
	}
	return info
}

// WriteText prints the build information for a person: the version first, as
// "warden --version" prints it, then one line per fact known.
func (b Info) WriteText(w io.Writer) error {
	lines := []string{"warden " + b.Version}
	if b.Revision != "" {
		rev := b.Revision
		if b.Modified != nil && *b.Modified {
			rev += " (modified)"
		}
		lines = append(lines, "revision:    "+rev)
	}
	if b.CommitTime != "" {
		lines = append(lines, "commit time: "+b.CommitTime)
	}
	if b.Module != "" {
		lines = append(lines, "module:      "+b.Module)
	}
	lines = append(lines, "go:          "+b.GoVersion, "platform:    "+b.OS+"/"+b.Arch)
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
