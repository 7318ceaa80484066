package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/progress"
)

// targetFlags name live targets; the same keys exist under targets: in the config.
type targetFlags struct {
	collect.Overrides
	sim string
}

func (tf *targetFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&tf.AWS, "aws", false, "collect the AWS account of the current credentials (standard chain, AWS_ENDPOINT_URL)")
	f.BoolVar(&tf.AWSOrg, "aws-org", false, "collect every active account of the AWS organisation, assuming --aws-org-role in each")
	f.StringVar(&tf.AWSOrgRole, "aws-org-role", "", "role assumed in member accounts (default OrganizationAccountAccessRole)")
	f.BoolVar(&tf.AWSUsage, "aws-usage", false, "also read what each user, group and role used of its grants (IAM Access Advisor; targets.aws.usage)")
	f.StringArrayVar(&tf.Regions, "region", nil, "AWS region to read (repeatable; default every enabled region)")
	f.StringArrayVar(&tf.GCPProjects, "gcp-project", nil, "GCP project to collect (repeatable; Application Default Credentials)")
	f.StringVar(&tf.GCPEndpoint, "gcp-endpoint", "", "GCP endpoint override, e.g. the simulator's http://127.0.0.1:PORT")
	f.StringArrayVar(&tf.TLS, "tls", nil, "TLS endpoint to probe, host:port or host:port@sni (repeatable)")
	f.DurationVar(&tf.TLSTimeout, "timeout", 10*time.Second, "timeout of each TLS connection attempt")
	f.StringVar(&tf.sim, "sim", "", "collect from an in-process simulator serving this world file (a demo: every account and project in it)")
}

// targets lays the flags over the config's targets: section.
func (tf *targetFlags) targets(cfg *config.Config) collect.Targets {
	return cfg.Targets.Collect().With(tf.Overrides)
}

// collectOptions are the options of a collection by this warden that draws prog (nil:
// none) and says what it read when it is over.
func (a *app) collectOptions(prog *progress.Line) collect.Options {
	return collect.Reporting("warden "+version()+" collect", prog, a.log)
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
			cfg, err := config.LoadOptional(configFile)
			if err != nil {
				return err
			}
			cs, stop, err := collect.ResolveSim(tf.targets(cfg), tf.sim, time.Time{}, a.log)
			if errors.Is(err, collect.ErrNoTargets) {
				return usageErr(fmt.Errorf("collect needs a target: --aws, --aws-org, --gcp-project P, --tls HOST:PORT, --sim WORLD, or targets: in --config"))
			}
			if err != nil {
				return err
			}
			defer stop()
			if out == "-" {
				out = "" // standard output
			}
			opts := a.collectOptions(progress.New(a.stderr, "collecting"))
			return atomicfile.WriteOr(out, a.stdout, func(w io.Writer) error {
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
