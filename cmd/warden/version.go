package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion and buildRevision are set at link time by builds that carry no module
// version or VCS stamp of their own: the Dockerfile builds from a context without .git
// (-buildvcs=false), so it passes them in:
//
//	go build -trimpath -ldflags "-X main.buildVersion=v1.2.3 -X main.buildRevision=0123abc…"
var buildVersion, buildRevision string

// buildInfo says where a warden binary came from: what warden version prints.
type buildInfo struct {
	// Module is the main module's path; Version its version: the linker's
	// buildVersion, else the module version the Go toolchain stamped (go install
	// …@v1.2.3, or a pseudo-version from VCS), else "dev".
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

// readBuildInfo is the running binary's build information.
func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return newBuildInfo(bi, buildVersion, buildRevision)
}

// newBuildInfo combines the toolchain's stamp (bi, nil when the binary has none) with
// what the linker was given; the linker's values win, since whoever passed them knew
// more than the build could see.
func newBuildInfo(bi *debug.BuildInfo, linkVersion, linkRevision string) buildInfo {
	info := buildInfo{Version: "dev", GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
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

// version is warden's version, as reports, traces and the audit log name it.
func version() string { return readBuildInfo().Version }

// writeText prints the build information for a person: the version first, as
// "warden --version" prints it, then one line per fact known.
func (b buildInfo) writeText(w io.Writer) error {
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

func (a *app) versionCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version [--format text|json]",
		Short: "Print warden's version and how it was built",
		Long: `Print warden's version and how the binary was built: the module version, the VCS
revision (and whether the tree had uncommitted changes) when the build recorded it, the
Go version and the target platform. Nothing in it depends on when or where the binary
was built: the same source gives the same output and the same binary.`,
		Example: `  warden version
  warden version --format json | jq -r .revision`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := readBuildInfo()
			switch format {
			case "text":
				return info.writeText(a.stdout)
			case "json":
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return usageErr(fmt.Errorf("--format: unknown format %q (want text or json)", format))
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	return cmd
}
