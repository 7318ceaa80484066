package main

import (
	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/internal/buildinfo"
)

// buildVersion and buildRevision are set at link time by builds that carry no module
// version or VCS stamp of their own: the Dockerfile builds from a context without .git
// (-buildvcs=false), so it passes them in:
//
//	go build -trimpath -ldflags "-X main.buildVersion=v1.2.3 -X main.buildRevision=0123abc…"
var buildVersion, buildRevision string

// readBuildInfo is the running binary's build information.
func readBuildInfo() buildinfo.Info { return buildinfo.Read(buildVersion, buildRevision) }

// version is warden's version, as reports, traces and the audit log name it.
func version() string { return readBuildInfo().Version }

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
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(a.stdout, readBuildInfo())
			}
			return readBuildInfo().WriteText(a.stdout)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	return cmd
}
