package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/snapshot"
)

// targetFlags name live targets; the same keys exist under targets: in the config.
type targetFlags struct {
	tls     []string
	timeout time.Duration
}

func (tf *targetFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&tf.tls, "tls", nil, "TLS endpoint to probe, host:port or host:port@sni (repeatable)")
	cmd.Flags().DurationVar(&tf.timeout, "timeout", 10*time.Second, "timeout of each connection attempt")
}

// collectors builds the collectors for the targets of the flags and the config.
func (tf *targetFlags) collectors(cfg *config.Config) ([]collectors.Collector, error) {
	var tlsTargets []tlsprobe.Target
	for _, s := range append(append([]string{}, cfg.Targets.TLS...), tf.tls...) {
		t, err := tlsprobe.ParseTarget(s)
		if err != nil {
			return nil, usageErr(err)
		}
		tlsTargets = append(tlsTargets, t)
	}
	var cs []collectors.Collector
	if len(tlsTargets) > 0 {
		cs = append(cs, &tlsprobe.Collector{Targets: tlsTargets, Timeout: tf.timeout})
	}
	return cs, nil
}

// collect runs the collectors and streams a snapshot to w.
func collect(ctx context.Context, w io.Writer, cs []collectors.Collector) error {
	sw, err := snapshot.NewWriter(w, snapshot.Header{CollectedAt: time.Now().UTC(), Source: "warden " + version() + " collect"})
	if err != nil {
		return err
	}
	sink := &collectors.WriterSink{W: sw}
	for _, c := range cs {
		if err := c.Collect(ctx, sink); err != nil {
			return fmt.Errorf("collect %s: %w", c.Name(), err)
		}
	}
	return sw.Close()
}

func (a *app) collectCmd() *cobra.Command {
	var (
		tf         targetFlags
		configFile string
		out        string
	)
	cmd := &cobra.Command{
		Use:   "collect [targets] [--out FILE]",
		Short: "Read live targets into a snapshot",
		Long: `Read live targets into a snapshot, without evaluating it.

Targets come from flags or from the targets: section of --config. An endpoint that
cannot be read is recorded as a failed scope: its resources are unknown, not gone.
Only TLS endpoints are collected in this release; AWS and GCP collectors come next.`,
		Example: `  warden collect --tls shop.example.com:443 --tls 10.0.0.5:8443@api.example.com --out snap.json
  warden collect --config warden.yaml | warden scan --snapshot -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := &config.Config{}
			if configFile != "" {
				c, err := config.Load(configFile)
				if err != nil {
					return usageErr(err)
				}
				cfg = c
			}
			cs, err := tf.collectors(cfg)
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				return usageErr(fmt.Errorf("collect needs a target: --tls HOST:PORT, or targets: in --config"))
			}
			if out == "" || out == "-" {
				return collect(cmd.Context(), a.stdout, cs)
			}
			return writeAtomically(out, func(w io.Writer) error { return collect(cmd.Context(), w, cs) })
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVar(&configFile, "config", "", "YAML config with a targets: section")
	cmd.Flags().StringVarP(&out, "out", "o", "", "snapshot file to write (default standard output)")
	return cmd
}

// writeAtomically writes a file through a temporary one renamed into place, so that a
// failure never leaves half a file behind.
func writeAtomically(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warden-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
