package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/synth"
)

func (a *app) synthCmd() *cobra.Command {
	var (
		n    int
		seed uint64
		out  string
		rate float64
		rep  string
	)
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Write a synthetic snapshot for benchmarks and load tests",
		Long: `Write a synthetic snapshot of N resources: a realistic mix of IAM roles, policies,
users, access keys, security groups, certificates, GCP service accounts, keys, firewalls
and TLS endpoints, about 10% of them violating a policy. The same seed gives the same
snapshot.

--repetition says how much content resources share (an engine that reuses results
across resources gains from it; 'go doc ./internal/synth' gives the numbers):

  (unset)     the original generator, byte for byte
  realistic   as in real organisations: AWS-managed policies with the same document in
              every account, documents stamped out by Terraform and CloudFormation
              modules, trust policies from a few templates, default security groups and
              firewalls, rule sets and bindings from templates; about 85-90% of
              documents and rule sets are shared with another resource
  none        the same resources, names and violations as realistic for the seed, but
              no two resources of a type share an IAM document, a rule set, a firewall
              or a binding set`,
		Example: `  warden synth --resources 1000000 --seed 1 --out /tmp/1m.json
  warden synth --resources 5000 | warden scan --snapshot - --no-db
  warden synth --resources 200000 --repetition realistic --out /tmp/200k-realistic.json
  warden synth --resources 200000 --repetition none --out /tmp/200k-unique.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 0 {
				return usageErr(fmt.Errorf("--resources must not be negative"))
			}
			if rate < 0 || rate > 1 {
				return usageErr(fmt.Errorf("--violations must be between 0 and 1"))
			}
			repetition, err := synth.ParseRepetition(rep)
			if err != nil {
				return usageErr(fmt.Errorf("--repetition: %w", err))
			}
			opts := synth.Options{Resources: n, Seed: seed, ViolationRate: rate, Repetition: repetition}
			if out == "" || out == "-" {
				return synth.Write(a.stdout, opts)
			}
			return atomicfile.Write(out, func(w io.Writer) error { return synth.Write(w, opts) })
		},
	}
	cmd.Flags().IntVarP(&n, "resources", "n", 10000, "number of resources")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().StringVarP(&out, "out", "o", "", "output file (default standard output)")
	cmd.Flags().Float64Var(&rate, "violations", 0.1, "share of resources that violate a policy")
	cmd.Flags().StringVar(&rep, "repetition", "", "content shared between resources: realistic or none (default: the original generator)")
	return cmd
}
