package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// Options say what `warden bench` measures and where it writes.
type Options struct {
	// Resources is the size of each synthetic snapshot (without Snapshots), Seed their seed.
	Resources int
	Seed      uint64
	// Snapshots are files to measure instead of the synthetic ones.
	Snapshots []string
	// NaiveSample is the resources of each snapshot evaluated the naive way (0: none);
	// Changed the resources re-evaluated after the sample.
	NaiveSample, Changed int
	// Out receives the Markdown; Stderr the full passes' standard error.
	Out, Stderr io.Writer
	Logger      *slog.Logger
	// Command makes the child process of a full pass, given warden's arguments; nil runs
	// this executable, warden itself, so that the scan measured is the code being
	// benchmarked (a test, whose binary is not warden, sets it).
	Command func(ctx context.Context, args ...string) (*exec.Cmd, error)
}

// findingsExit is warden scan's exit code when it found something: not a failure here.
const findingsExit = 1

// Run measures today's engine and the new one side by side on each snapshot, writes the
// tables to Out, and fails when the two decided differently on any snapshot.
func Run(ctx context.Context, o Options) error {
	if o.Resources < 0 || o.NaiveSample < 0 || o.Changed < 0 {
		return errors.New("--resources, --naive-sample and --changed must not be negative")
	}
	snaps, cleanup, err := o.snapshots()
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(o.Out, "machine: %s/%s, %d cores (GOMAXPROCS %d), %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	// Every full pass first, then the measures in this process: a child started
	// by a process that has been bigger reports that size as its own peak (Linux
	// carries the high-water mark of the memory it was forked with over exec).
	results := make([]result, len(snaps))
	for i, s := range snaps {
		results[i].label = s.label
		if err := o.passes(ctx, s, &results[i]); err != nil {
			return fmt.Errorf("snapshot %s: %w", s.label, err)
		}
	}
	naive, err := o.naiveQueries(ctx)
	if err != nil {
		return err
	}
	for i, s := range snaps {
		if err := o.sampleMeasures(ctx, s.path, naive, o.NaiveSample, o.Changed, &results[i]); err != nil {
			return fmt.Errorf("snapshot %s: %w", s.label, err)
		}
	}
	fmt.Fprintln(o.Out)
	writeTables(o.Out, results)
	fmt.Fprintln(o.Out)
	if differ := writeDecisions(o.Out, results); len(differ) > 0 {
		return fmt.Errorf("bench: the new engine decided differently from today's on %s", strings.Join(differ, ", "))
	}
	return nil
}

// snapshots are the files to measure, or the two synthetic ones to write in a
// temporary folder that cleanup removes.
func (o Options) snapshots() (snaps []target, cleanup func(), err error) {
	cleanup = func() {}
	if len(o.Snapshots) == 0 {
		dir, err := os.MkdirTemp("", "warden-bench-")
		if err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		for _, rep := range []synth.Repetition{synth.RepetitionRealistic, synth.RepetitionNone} {
			snaps = append(snaps, target{label: string(rep), path: filepath.Join(dir, string(rep)+".json"), synth: rep})
		}
	}
	for _, p := range o.Snapshots {
		snaps = append(snaps, target{label: filepath.Base(p), path: p})
	}
	return snaps, cleanup, nil
}

// passes writes the snapshot first when it is synthetic, then runs the full passes over it.
func (o Options) passes(ctx context.Context, s target, r *result) error {
	if s.synth == "" {
		fmt.Fprintf(o.Out, "- snapshot %s: %s\n", s.label, s.path)
		return o.fullPasses(ctx, s.path, r)
	}
	start := time.Now()
	if err := atomicfile.Write(s.path, func(w io.Writer) error {
		return synth.Write(w, synth.Options{Resources: o.Resources, Seed: o.Seed, Repetition: s.synth})
	}); err != nil {
		return err
	}
	st, err := os.Stat(s.path)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "- snapshot %s: %d synthetic resources (seed %d, --repetition %s, %d MB) written in %s\n",
		s.label, o.Resources, o.Seed, s.synth, st.Size()>>20, time.Since(start).Round(time.Millisecond))
	return o.fullPasses(ctx, s.path, r)
}

// naiveQueries are the same for every snapshot: prepared once (seconds); nil without a
// naive sample.
func (o Options) naiveQueries(ctx context.Context) (*NaiveQueries, error) {
	if o.NaiveSample == 0 {
		return nil, nil
	}
	pe, err := engine.New(ctx, engine.Config{Sources: []engine.Source{builtinPolicies}, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	mods, err := engine.LoadModules(builtinPolicies)
	if err != nil {
		return nil, err
	}
	return PrepareNaive(ctx, mods, pe.Policies())
}

// writeDecisions says, per snapshot, whether the two passes decided the same, with the
// first differing findings when not; it returns the snapshots where they differ.
func writeDecisions(out io.Writer, results []result) (differ []string) {
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
	return differ
}

// target is a snapshot to measure: a file, or one to generate first (synth set).
type target struct {
	label, path string
	synth       synth.Repetition
}

// passResult is one measured `warden scan`: its timing, the child's peak resident memory
// and a digest of what it decided.
type passResult struct {
	Timing
	rss        uint64
	rssUnknown bool // the child's peak was not above this process's: it may be ours
	digest     string
}

type result struct {
	label              string
	policies           int
	naive, changed     Timing
	today, memo        passResult
	same               bool     // the two passes decided the same
	onlyToday, onlyNew []string // when not: the first findings of one that the other lacks
	naiveMismatch      string   // naive and the engine disagree on the sample: a bug of the measure
}

// fullPasses runs today's engine and the new one over the snapshot and compares what
// they decided, keeping only the digests and the first differences: the findings of a
// million resources would weigh on the passes of the next snapshot.
func (o Options) fullPasses(ctx context.Context, path string, r *result) error {
	if err := warmCache(path); err != nil {
		return err
	}
	today, todayDec, err := o.fullPass(ctx, path, "--baseline")
	if err != nil {
		return fmt.Errorf("today's engine: %w", err)
	}
	memo, memoDec, err := o.fullPass(ctx, path)
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
func (o Options) sampleMeasures(ctx context.Context, path string, naive *NaiveQueries, naiveN, changed int, r *result) error {
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
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{builtinPolicies}, Logger: o.Logger})
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
	routed, err := Routed(ctx, e, now, warm)
	if err != nil {
		return err
	}
	if naive != nil && r.naive.Findings != routed.Findings {
		r.naiveMismatch = fmt.Sprintf("naive found %d violations in the sample, the engine %d: they should agree", r.naive.Findings, routed.Findings)
	}
	r.changed, err = Routed(ctx, e, now, changedSet)
	return err
}

func writeTables(out io.Writer, results []result) {
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

// command is the child process of a full pass: Options.Command's, else this executable's.
func (o Options) command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	if o.Command != nil {
		return o.Command(ctx, args...)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.CommandContext(ctx, self, args...), nil
}

// fullPass runs warden scan (with extra flags) in a child process so that its peak
// memory is its own, and reads what it decided from its JSON report.
func (o Options) fullPass(ctx context.Context, path string, extra ...string) (passResult, Decisions, error) {
	out, err := os.CreateTemp("", "warden-bench-report-*.json")
	if err != nil {
		return passResult{}, Decisions{}, err
	}
	out.Close()
	defer os.Remove(out.Name())
	c, err := o.command(ctx, append([]string{"scan", "--snapshot", path, "--no-db", "--no-progress", "--format", "json", "-o", out.Name()}, extra...)...)
	if err != nil {
		return passResult{}, Decisions{}, err
	}
	c.Stderr = o.Stderr
	self := selfMaxRSS()
	start := time.Now()
	err = c.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == findingsExit {
		err = nil
	}
	if err != nil {
		return passResult{}, Decisions{}, fmt.Errorf("warden %s: %w", strings.Join(c.Args[1:], " "), err)
	}
	var rss uint64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = uint64(ru.Maxrss) * 1024
	}
	f, err := os.Open(out.Name())
	if err != nil {
		return passResult{}, Decisions{}, err
	}
	defer f.Close()
	d, err := ReadReport(f)
	if err != nil {
		return passResult{}, Decisions{}, fmt.Errorf("full pass report: %w", err)
	}
	return passResult{Timing: Timing{Resources: d.Resources, Findings: len(d.Lines), Wall: wall}, rss: rss, rssUnknown: rss <= self}, d, nil
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
