package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/snapshot"
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

// liveTargets are the collectors for a run, and what to stop when it is over.
type liveTargets struct {
	collectors []collectors.Collector
	stop       func()
}

// collectors builds the collectors for the targets of the flags and the config.
func (tf *targetFlags) collectors(cfg *config.Config, log *slog.Logger) (*liveTargets, error) {
	lt := &liveTargets{stop: func() {}}
	t := cfg.Targets
	var tlsTargets []tlsprobe.Target
	for _, s := range append(append([]string{}, t.TLS...), tf.tls...) {
		tt, err := tlsprobe.ParseTarget(s)
		if err != nil {
			return nil, usageErr(err)
		}
		tlsTargets = append(tlsTargets, tt)
	}
	awsT := t.AWS
	if tf.aws || tf.awsOrg || tf.awsOrgRole != "" || len(tf.regions) > 0 {
		if awsT == nil {
			awsT = &config.AWSTargets{}
		}
		awsT.Org = awsT.Org || tf.awsOrg
		if tf.awsOrgRole != "" {
			awsT.OrgRole = tf.awsOrgRole
		}
		if len(tf.regions) > 0 {
			awsT.Regions = tf.regions
		}
	}
	gcpT := t.GCP
	if len(tf.gcpProjects) > 0 || tf.gcpEndpoint != "" {
		if gcpT == nil {
			gcpT = &config.GCPTargets{}
		}
		gcpT.Projects = append(gcpT.Projects, tf.gcpProjects...)
		if tf.gcpEndpoint != "" {
			gcpT.Endpoint = tf.gcpEndpoint
		}
	}
	var awsBase *aws.Config
	if tf.sim != "" {
		w, err := cloudsim.LoadWorld(tf.sim)
		if err != nil {
			return nil, usageErr(err)
		}
		sim, err := cloudsim.New(w, cloudsim.Options{Logger: log})
		if err != nil {
			return nil, usageErr(fmt.Errorf("simulator world %s: %w", tf.sim, err))
		}
		srv, err := sim.Listen("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lt.stop = func() { _ = srv.Close() }
		log.Info("simulator serving", "world", tf.sim, "endpoint", srv.URL)
		// With no AWS or GCP target named, the demo reads everything the world holds.
		if awsT == nil && gcpT == nil {
			if len(w.AWS.Accounts) > 0 {
				awsT = &config.AWSTargets{Org: w.AWS.Organization != nil}
			}
			if len(w.GCP.Projects) > 0 {
				gcpT = &config.GCPTargets{}
				for _, p := range w.GCP.Projects {
					gcpT.Projects = append(gcpT.Projects, p.ID)
				}
			}
		}
		if awsT != nil {
			awsT.Endpoint = srv.URL
			awsBase = &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIASIMULATOR", "simulator", "")}
		}
		if gcpT != nil {
			gcpT.Endpoint = srv.URL
		}
	}
	var cs []collectors.Collector
	if awsT != nil {
		cs = append(cs, awscollector.New(awscollector.Config{
			Regions: awsT.Regions, Org: awsT.Org, OrgRole: awsT.OrgRole, Concurrency: awsT.Concurrency,
			RateLimits: awsT.RateLimits, Endpoint: awsT.Endpoint, AWS: awsBase, Logger: log,
		}))
	}
	if gcpT != nil {
		if len(gcpT.Projects) == 0 {
			lt.stop()
			return nil, usageErr(fmt.Errorf("GCP needs at least one project: --gcp-project P, or targets.gcp.projects in the config"))
		}
		cs = append(cs, gcpcollector.New(gcpcollector.Config{Projects: gcpT.Projects, Endpoint: gcpT.Endpoint, RateLimit: gcpT.RateLimit, Logger: log}))
	}
	if len(tlsTargets) > 0 {
		cs = append(cs, &tlsprobe.Collector{Targets: tlsTargets, Timeout: tf.timeout})
	}
	lt.collectors = cs
	return lt, nil
}

// collect runs the collectors and streams a snapshot to w. Accounts are discovered first,
// so that the header lists them before any resource.
func collect(ctx context.Context, w io.Writer, cs []collectors.Collector, prog *progress, log *slog.Logger) error {
	h := snapshot.Header{CollectedAt: time.Now().UTC(), Source: "warden " + version() + " collect"}
	for _, c := range cs {
		d, ok := c.(collectors.Discoverer)
		if !ok {
			continue
		}
		ids, err := d.Discover(ctx)
		if err != nil {
			return fmt.Errorf("collect %s: %w", c.Name(), err)
		}
		h.Accounts = append(h.Accounts, ids...)
	}
	sw, err := snapshot.NewWriter(w, h)
	if err != nil {
		return err
	}
	sink := &countingSink{Sink: &collectors.WriterSink{W: sw}, prog: prog}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		g.Go(func() error {
			if err := c.Collect(gctx, sink); err != nil {
				return fmt.Errorf("collect %s: %w", c.Name(), err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	prog.done()
	if prog != nil {
		fmt.Fprintln(prog.w, sink.summary(time.Since(start)))
	} else {
		log.Info(sink.summary(time.Since(start)))
	}
	return sw.Close()
}

// countingSink counts resources for the progress line, and calls and failures for the
// summary.
type countingSink struct {
	collectors.Sink
	n    atomic.Int64
	prog *progress

	mu                                    sync.Mutex
	scopes, calls, throttled, denied, bad int
}

func (s *countingSink) Resource(r snapshot.Resource) error {
	s.prog.updateWith(int(s.n.Add(1)), s.scopesRead)
	return s.Sink.Resource(r)
}

// scopesRead says how far the collection is, for the progress line.
func (s *countingSink) scopesRead() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	more := fmt.Sprintf("%d scopes read, %d API calls", s.scopes, s.calls)
	if s.bad > 0 {
		more += fmt.Sprintf(", %d incomplete", s.bad)
	}
	if s.throttled > 0 {
		more += fmt.Sprintf(", %d throttled", s.throttled)
	}
	return more
}

func (s *countingSink) Scope(sc snapshot.Scope) {
	s.mu.Lock()
	s.scopes++
	s.calls += sc.Calls
	s.throttled += sc.Throttled
	s.denied += sc.AccessDenied
	if !sc.Complete() {
		s.bad++
	}
	s.mu.Unlock()
	s.Sink.Scope(sc)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summary is one line on what the collection cost and what it could not read.
func (s *countingSink) summary(elapsed time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n.Load()
	line := fmt.Sprintf("collected %d resources in %d scopes with %d API calls", n, s.scopes, s.calls)
	if n > 0 && s.calls > 0 {
		line += fmt.Sprintf(" (%.2f per resource)", float64(s.calls)/float64(n))
	}
	line += fmt.Sprintf(" in %s; %d throttled, %d denied", elapsed.Round(time.Millisecond), s.throttled, s.denied)
	if s.bad > 0 {
		line += fmt.Sprintf("; %d %s incomplete (their resources are unknown)", s.bad, plural(s.bad, "scope", "scopes"))
	}
	return line
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
			cfg := &config.Config{}
			if configFile != "" {
				c, err := config.Load(configFile)
				if err != nil {
					return usageErr(err)
				}
				cfg = c
			}
			lt, err := tf.collectors(cfg, a.log)
			if err != nil {
				return err
			}
			defer lt.stop()
			if len(lt.collectors) == 0 {
				return usageErr(fmt.Errorf("collect needs a target: --aws, --aws-org, --gcp-project P, --tls HOST:PORT, --sim WORLD, or targets: in --config"))
			}
			prog := newProgress(a.stderr, "collecting")
			if out == "" || out == "-" {
				return collect(cmd.Context(), a.stdout, lt.collectors, prog, a.log)
			}
			return writeAtomically(out, func(w io.Writer) error { return collect(cmd.Context(), w, lt.collectors, prog, a.log) })
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVar(&configFile, "config", "", "YAML config with a targets: section")
	cmd.Flags().StringVarP(&out, "out", "o", "", "snapshot file to write (default standard output)")
	return cmd
}

// writeAtomically writes a file through a temporary one renamed into place, so that a
// failure never leaves half a file behind. A path that is not a regular file (/dev/null,
// /dev/stdout, a pipe) is written in place: renaming over it would replace the device
// with a file. A symbolic link is followed, so that its target is what gets replaced.
func writeAtomically(path string, write func(io.Writer) error) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
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
