package main

import (
	"context"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/internal/bench"
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
			return bench.Run(cmd.Context(), bench.Options{Resources: n, Seed: seed, Snapshots: snapPaths, NaiveSample: naiveN, Changed: changed,
				Out: a.stdout, Stderr: a.stderr, Logger: a.log, Command: wardenCommand})
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

// wardenCommand, when set, is the child process of a full pass instead of this binary:
// tests set it, the test binary not being warden.
var wardenCommand func(ctx context.Context, args ...string) (*exec.Cmd, error)
