package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/bench"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

func (a *app) benchCmd() *cobra.Command {
	var (
		n, naiveN, changed int
		seed               uint64
		snapPath           string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure a full scan, the naive way side by side, and re-evaluating changed resources",
		Long: `Measure evaluation speed on a synthetic snapshot (or --snapshot):

  full pass   'warden scan' of the whole snapshot in a child process: wall time and
              peak resident memory, reading and checking the snapshot included
  naive       the first --naive-sample resources, every policy prepared once and every
              resource evaluated against every policy, one query at a time, on one
              goroutine; compared per resource with the full pass
  changed     re-evaluating --changed resources in memory (what the daemon does after
              a change), as a share of the full pass

The output is Markdown, ready for BENCHMARKS.md.`,
		Example: `  warden bench --resources 1000000
  warden bench --snapshot big.json --naive-sample 5000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			out := a.stdout
			if snapPath == "" {
				dir, err := os.MkdirTemp("", "warden-bench-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				snapPath = filepath.Join(dir, "synth.json")
				f, err := os.Create(snapPath)
				if err != nil {
					return err
				}
				start := time.Now()
				if err := synth.Write(f, synth.Options{Resources: n, Seed: seed}); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
				st, _ := os.Stat(snapPath)
				fmt.Fprintf(out, "snapshot: %d synthetic resources (seed %d, %d MB) written in %s\n", n, seed, st.Size()>>20, time.Since(start).Round(time.Millisecond))
			}
			fmt.Fprintf(out, "machine: %s/%s, %d cores (GOMAXPROCS %d), %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())

			full, rss, err := a.fullPass(ctx, snapPath)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "| measure | resources | wall | per resource | peak memory |\n|---|---:|---:|---:|---:|\n")
			fmt.Fprintf(out, "| full pass (`warden scan`, %d workers) | %d | %s | %s | %d MB |\n", runtime.GOMAXPROCS(0), full.Resources, full.Wall.Round(time.Millisecond), full.PerResource(), rss>>20)

			h, sample, err := readSample(snapPath, max(naiveN, changed))
			if err != nil {
				return err
			}
			now := h.CollectedAt
			e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Logger: a.log})
			if err != nil {
				return err
			}
			mods, err := engine.LoadModules(engine.Source{FS: policies.FS, Prefix: "policies"})
			if err != nil {
				return err
			}
			naiveSample := sample[:min(naiveN, len(sample))]
			naive, err := bench.Naive(ctx, mods, e.Policies(), now, naiveSample)
			if err != nil {
				return err
			}
			routed, err := bench.Routed(ctx, e, now, naiveSample)
			if err != nil {
				return err
			}
			sub, err := bench.Routed(ctx, e, now, sample[:min(changed, len(sample))])
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "| naive: %d policies × each resource, 1 goroutine | %d | %s | %s | |\n", len(e.Policies()), naive.Resources, naive.Wall.Round(time.Millisecond), naive.PerResource())
			fmt.Fprintf(out, "| routed by type, 1 query per resource, 1 goroutine | %d | %s | %s | |\n", routed.Resources, routed.Wall.Round(time.Millisecond), routed.PerResource())
			fmt.Fprintf(out, "| re-evaluate changed resources | %d | %s | %s | |\n\n", sub.Resources, sub.Wall.Round(time.Microsecond), sub.PerResource())
			if naive.Findings != routed.Findings {
				fmt.Fprintf(out, "WARNING: naive found %d violations, routed %d: they should agree\n\n", naive.Findings, routed.Findings)
			}
			fmt.Fprintf(out, "- full pass vs naive, per resource: %.1f× faster\n", ratio(naive.PerResource(), full.PerResource()))
			fmt.Fprintf(out, "- routing alone (1 goroutine) vs naive: %.1f× faster\n", ratio(naive.PerResource(), routed.PerResource()))
			fmt.Fprintf(out, "- %d changed resources cost %.3f%% of the full pass\n", sub.Resources, 100*float64(sub.Wall)/float64(full.Wall))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVarP(&n, "resources", "n", 1000000, "synthetic resources to generate (without --snapshot)")
	f.Uint64Var(&seed, "seed", 1, "seed of the synthetic snapshot")
	f.StringVar(&snapPath, "snapshot", "", "measure this snapshot instead of a synthetic one")
	f.IntVar(&naiveN, "naive-sample", 20000, "resources evaluated the naive way")
	f.IntVar(&changed, "changed", 1000, "changed resources to re-evaluate")
	return cmd
}

// fullPass runs warden scan in a child process so that its peak memory is its own.
func (a *app) fullPass(ctx context.Context, path string) (bench.Timing, uint64, error) {
	self, err := os.Executable()
	if err != nil {
		return bench.Timing{}, 0, err
	}
	out, err := os.CreateTemp("", "warden-bench-report-*.json")
	if err != nil {
		return bench.Timing{}, 0, err
	}
	out.Close()
	defer os.Remove(out.Name())
	c := exec.CommandContext(ctx, self, "scan", "--snapshot", path, "--no-db", "--no-progress", "--format", "json", "-o", out.Name())
	c.Stderr = a.stderr
	start := time.Now()
	err = c.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == exitFindings {
		err = nil
	}
	if err != nil {
		return bench.Timing{}, 0, fmt.Errorf("full pass: %w", err)
	}
	var rss uint64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = uint64(ru.Maxrss) * 1024
	}
	f, err := os.Open(out.Name())
	if err != nil {
		return bench.Timing{}, 0, err
	}
	defer f.Close()
	var rep struct {
		Summary struct {
			Resources int `json:"resources"`
			Findings  int `json:"findings"`
		} `json:"summary"`
	}
	if err := jsonDecode(f, &rep); err != nil {
		return bench.Timing{}, 0, fmt.Errorf("full pass report: %w", err)
	}
	return bench.Timing{Resources: rep.Summary.Resources, Findings: rep.Summary.Findings, Wall: wall}, rss, nil
}

// readSample decodes the first n resources of a snapshot.
func readSample(path string, n int) (snapshot.Header, []snapshot.Resource, error) {
	f, err := os.Open(path)
	if err != nil {
		return snapshot.Header{}, nil, err
	}
	defer f.Close()
	rd := snapshot.NewReader(f, path)
	p := snapshot.NewParser(path)
	var out []snapshot.Resource
	for len(out) < n {
		el, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return snapshot.Header{}, nil, err
		}
		r, err := p.Decode(el)
		if err != nil {
			return snapshot.Header{}, nil, err
		}
		out = append(out, r)
	}
	return rd.Header(), out, nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
