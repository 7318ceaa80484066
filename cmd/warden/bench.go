package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/bench"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

func (a *app) benchCmd() *cobra.Command {
	var (
		n, naiveN, changed int
		seed               uint64
		snapPaths          []string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure today's engine and the new one side by side, on snapshots with and without repetition",
		Long: `Measure evaluation speed, today's engine and the new one side by side, on two
synthetic snapshots of --resources resources with the same --seed: one with realistic
repetition ('warden synth --repetition realistic': AWS-managed policies in every account,
documents from Terraform and CloudFormation modules, default groups and firewalls) and
one with none ('--repetition none': the same resources, but no IAM document, rule set or
firewall shared). The new engine runs each type's policies as programs planned by OPA,
folds rules that read no input into their values, and reuses the results of helper
functions marked memo across resources: repetition is what the reuse gains from, and the
second snapshot shows what it costs when nothing repeats. Give --snapshot, once per
file, to measure files of your own instead.

For each snapshot:

  naive           the first --naive-sample resources, every policy prepared once and
                  every resource evaluated against every policy, one query at a time,
                  on one goroutine
  today's engine  'warden scan --baseline' of the whole snapshot in a child process
                  (the engine as before issue 13: OPA's topdown alone): wall time and
                  peak resident memory, reading and checking the snapshot included
  new engine      'warden scan', the same way
  changed         re-evaluating --changed resources in memory (what the daemon does
                  after a change): the ones after the naive sample, on an engine that
                  has just evaluated that sample (the first 1,000 resources with
                  --naive-sample 0)

then the speed-ups per resource (new engine vs today's, vs naive), and whether the two
full passes decided the same: the findings of their JSON reports as sorted lines
"policy resource fingerprint message" (tab-separated), compared and digested as the
engine's decision tests do. Each snapshot gets "decisions identical: N findings,
sha256:..." or a DECISIONS DIFFER line with the first differing findings, and then the
command exits 2.

Every full pass runs before the measures made in this process, and each snapshot is
read once before its passes, so that all find it in the page cache. The output is
Markdown, ready for BENCHMARKS.md.`,
		Example: `  # Issue 13's measurement: a million resources, with and without repetition
  warden bench --resources 1000000 --naive-sample 5000

  # A quick look (a minute on a laptop)
  warden bench --resources 20000 --naive-sample 500 --changed 100

  # Snapshots of your own, each row labelled with its file name
  warden bench --snapshot prod.json --snapshot staging.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			out := a.stdout
			if n < 0 || naiveN < 0 || changed < 0 {
				return usageErr(fmt.Errorf("--resources, --naive-sample and --changed must not be negative"))
			}
			var snaps []benchSnapshot
			if len(snapPaths) == 0 {
				dir, err := os.MkdirTemp("", "warden-bench-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				for _, rep := range []synth.Repetition{synth.RepetitionRealistic, synth.RepetitionNone} {
					snaps = append(snaps, benchSnapshot{label: string(rep), path: filepath.Join(dir, string(rep)+".json"), synth: rep})
				}
			}
			for _, p := range snapPaths {
				snaps = append(snaps, benchSnapshot{label: filepath.Base(p), path: p})
			}
			fmt.Fprintf(out, "machine: %s/%s, %d cores (GOMAXPROCS %d), %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
			// Every full pass first, then the measures in this process: a child started
			// by a process that has been bigger reports that size as its own peak (Linux
			// carries the high-water mark of the memory it was forked with over exec).
			results := make([]benchResult, len(snaps))
			for i, s := range snaps {
				if s.synth != "" {
					start := time.Now()
					if err := atomicfile.Write(s.path, func(w io.Writer) error {
						return synth.Write(w, synth.Options{Resources: n, Seed: seed, Repetition: s.synth})
					}); err != nil {
						return err
					}
					st, err := os.Stat(s.path)
					if err != nil {
						return err
					}
					fmt.Fprintf(out, "- snapshot %s: %d synthetic resources (seed %d, --repetition %s, %d MB) written in %s\n",
						s.label, n, seed, s.synth, st.Size()>>20, time.Since(start).Round(time.Millisecond))
				} else {
					fmt.Fprintf(out, "- snapshot %s: %s\n", s.label, s.path)
				}
				results[i].label = s.label
				if err := a.fullPasses(ctx, s.path, &results[i]); err != nil {
					return fmt.Errorf("snapshot %s: %w", s.label, err)
				}
			}
			// The naive queries are the same for every snapshot: prepared once (seconds).
			var naive *bench.NaiveQueries
			if naiveN > 0 {
				pe, err := engine.New(ctx, engine.Config{Sources: []engine.Source{builtinPolicies}, Logger: a.log})
				if err != nil {
					return err
				}
				mods, err := engine.LoadModules(builtinPolicies)
				if err != nil {
					return err
				}
				if naive, err = bench.PrepareNaive(ctx, mods, pe.Policies()); err != nil {
					return err
				}
			}
			for i, s := range snaps {
				if err := a.sampleMeasures(ctx, s.path, naive, naiveN, changed, &results[i]); err != nil {
					return fmt.Errorf("snapshot %s: %w", s.label, err)
				}
			}
			fmt.Fprintln(out)
			writeBenchTables(out, results)
			fmt.Fprintln(out)
			var differ []string
			for _, r := range results {
				if r.same {
					fmt.Fprintf(out, "- %s: decisions identical: %d findings, %s\n", r.label, r.memo.Findings, r.memo.digest)
					continue
				}
				differ = append(differ, r.label)
				fmt.Fprintf(out, "- **%s: DECISIONS DIFFER**: today's engine %d findings, %s; the new engine %d findings, %s\n",
					r.label, r.today.Findings, r.today.digest, r.memo.Findings, r.memo.digest)
				for _, l := range r.onlyToday {
					fmt.Fprintf(out, "  - only today's: `%s`\n", strings.ReplaceAll(l, "\t", " "))
				}
				for _, l := range r.onlyNew {
					fmt.Fprintf(out, "  - only new: `%s`\n", strings.ReplaceAll(l, "\t", " "))
				}
			}
			if len(differ) > 0 {
				return &exitErr{code: exitError, err: fmt.Errorf("bench: the new engine decided differently from today's on %s", strings.Join(differ, ", "))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVarP(&n, "resources", "n", 1000000, "resources of each synthetic snapshot (without --snapshot)")
	f.Uint64Var(&seed, "seed", 1, "seed of the synthetic snapshots")
	f.StringArrayVar(&snapPaths, "snapshot", nil, "measure this snapshot instead of the synthetic ones (repeatable)")
	f.IntVar(&naiveN, "naive-sample", 20000, "resources of each snapshot evaluated the naive way (0: skip the naive measure)")
	f.IntVar(&changed, "changed", 1000, "changed resources to re-evaluate")
	return cmd
}

// benchSnapshot is a snapshot to measure: a file, or one to generate first (synth set).
type benchSnapshot struct {
	label, path string
	synth       synth.Repetition
}

// passResult is one measured `warden scan`: its timing, the child's peak resident memory
// and a digest of what it decided.
type passResult struct {
	bench.Timing
	rss        uint64
	rssUnknown bool // the child's peak was not above this process's: it may be ours
	digest     string
}

type benchResult struct {
	label              string
	policies           int
	naive, changed     bench.Timing
	today, memo        passResult
	same               bool     // the two passes decided the same
	onlyToday, onlyNew []string // when not: the first findings of one that the other lacks
	naiveMismatch      string   // naive and the engine disagree on the sample: a bug of the measure
}

// fullPasses runs today's engine and the new one over the snapshot and compares what
// they decided, keeping only the digests and the first differences: the findings of a
// million resources would weigh on the passes of the next snapshot.
func (a *app) fullPasses(ctx context.Context, path string, r *benchResult) error {
	if err := warmCache(path); err != nil {
		return err
	}
	today, todayDec, err := a.fullPass(ctx, path, "--baseline")
	if err != nil {
		return fmt.Errorf("today's engine: %w", err)
	}
	memo, memoDec, err := a.fullPass(ctx, path)
	if err != nil {
		return fmt.Errorf("new engine: %w", err)
	}
	today.digest, memo.digest = todayDec.Digest(), memoDec.Digest()
	r.today, r.memo, r.same = today, memo, todayDec.Equal(memoDec)
	if !r.same {
		r.onlyToday, r.onlyNew = todayDec.Diff(memoDec, 5)
	}
	return nil
}

// builtinPolicies is the pack every measure evaluates.
var builtinPolicies = engine.Source{FS: policies.FS, Prefix: "policies"}

// sampleMeasures evaluates the first resources of the snapshot in this process: the
// naive sample (unless naive is nil), then the engine's way over the same resources
// (checked against naive's count, and warming the engine up), then the changed
// resources, the ones right after: as in the daemon, they meet an engine that has
// evaluated other resources of the snapshot, but not them.
func (a *app) sampleMeasures(ctx context.Context, path string, naive *bench.NaiveQueries, naiveN, changed int, r *benchResult) error {
	warmN := naiveN
	if naive == nil {
		warmN = 1000
	}
	h, sample, err := readSample(path, warmN+changed)
	if err != nil {
		return err
	}
	now := h.CollectedAt
	// A snapshot too small for both keeps its last resources for the changed ones.
	nChanged := min(changed, len(sample))
	warm, changedSet := sample[:min(warmN, len(sample)-nChanged)], sample[len(sample)-nChanged:]
	// An engine per snapshot: nothing the first one evaluated helps the second.
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{builtinPolicies}, Logger: a.log})
	if err != nil {
		return err
	}
	r.policies = len(e.Policies())
	if naive != nil {
		// Some resources first, untimed: the first queries of a process fill OPA's
		// caches (and grow the heap), which would otherwise count against the first
		// snapshot only.
		if _, err := naive.Run(ctx, now, warm[:min(100, len(warm))]); err != nil {
			return err
		}
		runtime.GC() // what the previous snapshot left is not this one's to collect
		if r.naive, err = naive.Run(ctx, now, warm); err != nil {
			return err
		}
	}
	routed, err := bench.Routed(ctx, e, now, warm)
	if err != nil {
		return err
	}
	if naive != nil && r.naive.Findings != routed.Findings {
		r.naiveMismatch = fmt.Sprintf("naive found %d violations in the sample, the engine %d: they should agree", r.naive.Findings, routed.Findings)
	}
	r.changed, err = bench.Routed(ctx, e, now, changedSet)
	return err
}

func writeBenchTables(out io.Writer, results []benchResult) {
	workers := runtime.GOMAXPROCS(0)
	fmt.Fprintf(out, "| snapshot | measure | resources | wall | per resource | peak memory |\n|---|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		if r.naive.Resources == 0 {
			fmt.Fprintf(out, "| %s | naive: not measured (--naive-sample 0) | 0 | – | – | |\n", r.label)
		} else {
			fmt.Fprintf(out, "| %s | naive: %d policies × each resource, 1 goroutine | %d | %s | %s | |\n",
				r.label, r.policies, r.naive.Resources, r.naive.Wall.Round(time.Millisecond), r.naive.PerResource())
		}
		fmt.Fprintf(out, "| %s | today's engine (`warden scan --baseline`, %d workers) | %d | %s | %s | %s |\n",
			r.label, workers, r.today.Resources, r.today.Wall.Round(time.Millisecond), r.today.PerResource(), r.today.peak())
		fmt.Fprintf(out, "| %s | new engine (`warden scan`, %d workers) | %d | %s | %s | %s |\n",
			r.label, workers, r.memo.Resources, r.memo.Wall.Round(time.Millisecond), r.memo.PerResource(), r.memo.peak())
		fmt.Fprintf(out, "| %s | re-evaluate changed resources (new engine, in memory) | %d | %s | %s | |\n",
			r.label, r.changed.Resources, r.changed.Wall.Round(time.Microsecond), r.changed.PerResource())
	}
	fmt.Fprintf(out, "\n| snapshot | new engine vs today's | new engine vs naive | today's engine vs naive | changed resources, share of a full pass |\n|---|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(out, "| %s | %s | %s | %s | %.3f%% |\n", r.label,
			faster(r.today.PerResource(), r.memo.PerResource()), faster(r.naive.PerResource(), r.memo.PerResource()),
			faster(r.naive.PerResource(), r.today.PerResource()), 100*float64(r.changed.Wall)/float64(max(r.memo.Wall, 1)))
	}
	for _, r := range results {
		if r.naiveMismatch != "" {
			fmt.Fprintf(out, "\nWARNING: %s: %s\n", r.label, r.naiveMismatch)
		}
	}
}

func (p passResult) peak() string {
	if p.rssUnknown {
		return fmt.Sprintf("≤ %d MB (warden bench's own)", p.rss>>20)
	}
	return fmt.Sprintf("%d MB", p.rss>>20)
}

// faster says how many times faster b is than a, per resource ("–" when either was not
// measured).
func faster(a, b time.Duration) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f× faster", float64(a)/float64(b))
}

// warmCache reads a file once, so that the passes that follow all find it in the page
// cache and the first is not the only one to pay for the disk.
func warmCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// wardenCommand is the child process of a full pass: this binary, so that the scan
// measured is the code being benchmarked. Tests replace it, the test binary not being
// warden.
var wardenCommand = func(ctx context.Context, args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.CommandContext(ctx, self, args...), nil
}

// fullPass runs warden scan (with extra flags) in a child process so that its peak
// memory is its own, and reads what it decided from its JSON report.
func (a *app) fullPass(ctx context.Context, path string, extra ...string) (passResult, bench.Decisions, error) {
	out, err := os.CreateTemp("", "warden-bench-report-*.json")
	if err != nil {
		return passResult{}, bench.Decisions{}, err
	}
	out.Close()
	defer os.Remove(out.Name())
	c, err := wardenCommand(ctx, append([]string{"scan", "--snapshot", path, "--no-db", "--no-progress", "--format", "json", "-o", out.Name()}, extra...)...)
	if err != nil {
		return passResult{}, bench.Decisions{}, err
	}
	c.Stderr = a.stderr
	self := selfMaxRSS()
	start := time.Now()
	err = c.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == exitFindings {
		err = nil
	}
	if err != nil {
		return passResult{}, bench.Decisions{}, fmt.Errorf("warden %s: %w", strings.Join(c.Args[1:], " "), err)
	}
	var rss uint64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = uint64(ru.Maxrss) * 1024
	}
	f, err := os.Open(out.Name())
	if err != nil {
		return passResult{}, bench.Decisions{}, err
	}
	defer f.Close()
	d, err := bench.ReadReport(f)
	if err != nil {
		return passResult{}, bench.Decisions{}, fmt.Errorf("full pass report: %w", err)
	}
	return passResult{Timing: bench.Timing{Resources: d.Resources, Findings: len(d.Lines), Wall: wall}, rss: rss, rssUnknown: rss <= self}, d, nil
}

// selfMaxRSS is the peak resident memory of this process so far, in bytes.
func selfMaxRSS() uint64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return uint64(ru.Maxrss) * 1024
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
