package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/loopback"
)

func (a *app) simCmd() *cobra.Command {
	var (
		worldFile string
		listen    string
		latency   time.Duration
		remote    bool
	)
	cmd := &cobra.Command{
		Use:   "sim [--world FILE] --listen 127.0.0.1:PORT",
		Short: "Serve a simulated AWS and GCP cloud on a loopback port",
		Long: `Serve a simulated AWS and GCP cloud on a loopback port, for demos, tests and benchmarks.

The simulator speaks the wire protocols of the official SDKs on one port: AWS Query/XML
(IAM, STS, EC2), AWS JSON (ACM, Organizations, Secrets Manager), GCP REST (Resource
Manager, Compute) and gRPC (IAM admin). Unknown AWS access keys are accepted with any
secret; a world user's key must be Active and, when its secret is known (keys made by
CreateAccessKey), sign with it; GetCallerIdentity names its user. Its state comes from a world
file (see fixtures/acme/world.yaml) or is an empty account; writes change it in memory.
The world file can inject faults per call: latency, throttling, 5xx, AccessDenied, and
rate limits per service; a fault with "writes: true" hits only the calls that change the
world (a failing fix, a slow revoke), never the reads.

While it serves, the admin API reads its counters and changes its faults:
  GET  /_sim/calls          calls served, by service:Operation (throttled, failed, denied)
  GET  /_sim/writes         the write calls only: a dry run must leave it empty
  POST /_sim/calls/reset    zero the counters
  POST /_sim/latency        body "250ms": latency added to every call
  POST /_sim/faults         body {faults: [...], rate_limits: {iam: 20}}: replace the faults`,
		Example: `  warden sim --world fixtures/acme/world.yaml --listen 127.0.0.1:4566
  AWS_ENDPOINT_URL=http://127.0.0.1:4566 AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x \
    warden scan --aws-org --gcp-endpoint http://127.0.0.1:4566 --gcp-project acme-prod-4821`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !remote && !loopback.Addr(listen) {
				return usageErr(fmt.Errorf("--listen %s is not a loopback address: the simulator accepts any credentials; add --allow-remote to serve it anyway", listen))
			}
			return cloudsim.Serve(cmd.Context(), cloudsim.ServeOptions{World: worldFile, Listen: listen, Latency: latency, Logger: a.log,
				Serving: func(w *cloudsim.World, url string) {
					projects := ""
					for _, p := range w.GCP.Projects {
						projects += " --gcp-project " + p.ID
					}
					target := "--aws"
					if w.AWS.Organization != nil {
						target = "--aws-org"
					}
					fmt.Fprintf(a.stdout, `warden simulator: %d AWS accounts, %d GCP projects, serving on %s

  export AWS_ENDPOINT_URL=%s AWS_ACCESS_KEY_ID=sim AWS_SECRET_ACCESS_KEY=sim AWS_REGION=us-east-1
  warden scan %s --gcp-endpoint %s%s

Stop with Ctrl-C.
`, w.AWS.AccountCount(), w.GCP.ProjectCount(), url, url, target, url, projects)
				}})
		},
	}
	cmd.Flags().StringVar(&worldFile, "world", "", "world file to serve (default an empty account)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:4566", "address to listen on (loopback)")
	cmd.Flags().DurationVar(&latency, "latency", 0, "latency added to every call, e.g. 20ms")
	cmd.Flags().BoolVar(&remote, "allow-remote", false, "allow a --listen address other than loopback (a container, a shared test host)")
	return cmd
}
