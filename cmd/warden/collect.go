package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/progress"
)

// targetFlags name live targets; the same keys exist under targets: in the config.
type targetFlags struct {
	tls         []string
	timeout     time.Duration
	aws         bool
	awsOrg      bool
	awsOrgRole  string
	regions     []string
	gcpProjects []string
	gcpEndpoint string
	sim         string
}

func (tf *targetFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&tf.aws, "aws", false, "collect the AWS account of the current credentials (standard chain, AWS_ENDPOINT_URL)")
	f.BoolVar(&tf.awsOrg, "aws-org", false, "collect every active account of the AWS organisation, assuming --aws-org-role in each")
	f.StringVar(&tf.awsOrgRole, "aws-org-role", "", "role assumed in member accounts (default OrganizationAccountAccessRole)")
	f.StringArrayVar(&tf.regions, "region", nil, "AWS region to read (repeatable; default every enabled region)")
	f.StringArrayVar(&tf.gcpProjects, "gcp-project", nil, "GCP project to collect (repeatable; Application Default Credentials)")
	f.StringVar(&tf.gcpEndpoint, "gcp-endpoint", "", "GCP endpoint override, e.g. the simulator's http://127.0.0.1:PORT")
	f.StringArrayVar(&tf.tls, "tls", nil, "TLS endpoint to probe, host:port or host:port@sni (repeatable)")
	f.DurationVar(&tf.timeout, "timeout", 10*time.Second, "timeout of each TLS connection attempt")
	f.StringVar(&tf.sim, "sim", "", "collect from an in-process simulator serving this world file (a demo: every account and project in it)")
}

// targets lays the flags over the config's targets: section. Any AWS flag makes AWS a
// target; --region replaces the config's regions, --gcp-project adds to its projects,
// endpoints and the org role given as flags win.
func (tf *targetFlags) targets(cfg *config.Config) collect.Targets {
	t := cfg.Targets.Collect()
	t.TLS = append(t.TLS, tf.tls...)
	t.TLSTimeout = tf.timeout
	if tf.aws || tf.awsOrg || tf.awsOrgRole != "" || len(tf.regions) > 0 {
		if t.AWS == nil {
			t.AWS = &collect.AWS{}
		}
		t.AWS.Org = t.AWS.Org || tf.awsOrg
		if tf.awsOrgRole != "" {
			t.AWS.OrgRole = tf.awsOrgRole
		}
		if len(tf.regions) > 0 {
			t.AWS.Regions = tf.regions
		}
	}
	if len(tf.gcpProjects) > 0 || tf.gcpEndpoint != "" {
		if t.GCP == nil {
			t.GCP = &collect.GCP{}
		}
		t.GCP.Projects = append(t.GCP.Projects, tf.gcpProjects...)
		if tf.gcpEndpoint != "" {
			t.GCP.Endpoint = tf.gcpEndpoint
		}
	}
	return t
}

// collectors resolves the targets of the flags and the config, behind the --sim
// simulator when one is asked for; stop ends the simulator once the run is over. Empty
// targets are collect.ErrNoTargets, for the command to say which flags it wants.
func (tf *targetFlags) collectors(cfg *config.Config, log *slog.Logger) (cs []collectors.Collector, stop func(), err error) {
	t := tf.targets(cfg)
	stop = func() {}
	if tf.sim != "" {
		sim, err := collect.StartSimulator(tf.sim, log)
		if err != nil {
			return nil, nil, usageErr(err)
		}
		stop = func() { _ = sim.Close() }
		t = sim.Target(t)
	}
	cs, err = collect.Resolve(t, log)
	if err != nil {
		stop()
		if errors.Is(err, collect.ErrNoTargets) {
			return nil, nil, err
		}
		return nil, nil, usageErr(err)
	}
	return cs, stop, nil
}

// collectOptions are the options of a collection that draws prog (nil: none) and says
// what it read when it is over: on the terminal under the progress line, else in the log.
func (a *app) collectOptions(prog *progress.Line) collect.Options {
	opts := collect.Options{
		Source: "warden " + version() + " collect",
		Done: func(sum collect.Summary) {
			prog.Done()
			if prog != nil {
				fmt.Fprintln(prog.Writer(), sum)
			} else {
				a.log.Info(sum.String())
			}
		},
	}
	if prog != nil {
		opts.Progress = prog.UpdateWith
	}
	return opts
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

Targets come from flags or from the targets: section of --config:

  --aws                 the AWS account of the current credentials (the standard chain:
                        environment, profile, SSO, instance role; AWS_ENDPOINT_URL)
  --aws-org             every active account of the organisation, by assuming
                        --aws-org-role in each (read-only access is enough)
  --region R            only these regions (default: every enabled region)
  --gcp-project P       GCP projects, with Application Default Credentials
  --tls HOST:PORT       TLS endpoints

AWS IAM is read with bulk calls (GetAccountAuthorizationDetails, the credential report);
every call is paced per service and account and retried with backoff on throttling and
5xx. A scope that cannot be read (AccessDenied, a region down, an account that cannot be
assumed) is recorded as failed: its resources are unknown, not gone, and a later scan
does not resolve their findings.`,
		Example: `  warden collect --aws --region eu-west-1 --out snap.json
  warden collect --aws-org --gcp-project acme-prod --out org.json
  warden collect --tls shop.example.com:443 --tls 10.0.0.5:8443@api.example.com
  warden collect --sim fixtures/acme/world.yaml --out acme.json
  warden collect --config warden.yaml | warden scan --snapshot -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(configFile)
			if err != nil {
				return err
			}
			cs, stop, err := tf.collectors(cfg, a.log)
			if errors.Is(err, collect.ErrNoTargets) {
				return usageErr(fmt.Errorf("collect needs a target: --aws, --aws-org, --gcp-project P, --tls HOST:PORT, --sim WORLD, or targets: in --config"))
			}
			if err != nil {
				return err
			}
			defer stop()
			opts := a.collectOptions(progress.New(a.stderr, "collecting"))
			if out == "" || out == "-" {
				_, err := collect.Run(cmd.Context(), a.stdout, cs, opts)
				return err
			}
			return atomicfile.Write(out, func(w io.Writer) error {
				_, err := collect.Run(cmd.Context(), w, cs, opts)
				return err
			})
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVar(&configFile, "config", "", "YAML config with a targets: section")
	cmd.Flags().StringVarP(&out, "out", "o", "", "snapshot file to write (default standard output)")
	return cmd
}
