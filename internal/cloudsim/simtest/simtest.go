// Package simtest starts the cloud simulator for tests: served on a free loopback port
// for the length of the test, with the SDK configuration that talks to it.
package simtest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warden-sec/warden/internal/cloudsim"
)

// Start builds a simulator over w and serves it on a free loopback port until the test
// ends (cleanups registered after this call run while it still serves). It returns the
// simulator and its base URL; a simulator that cannot be built or served fails the test.
func Start(t testing.TB, w *cloudsim.World, opts cloudsim.Options) (*cloudsim.Sim, string) {
	t.Helper()
	sim, err := cloudsim.New(w, opts)
	if err != nil {
		t.Fatalf("simulator: %v", err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("simulator: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return sim, srv.URL
}

// AWSConfig is an AWS SDK configuration for the simulator at url: region us-east-1 and
// static credentials the simulator does not know, so that calls act as the root user of
// the world's caller account. Clients built from it call the simulator directly; for
// warden's own sessions and collectors, which take the endpoint separately, url is
// harmless (their Endpoint overrides it).
func AWSConfig(url string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
}

// AWSCLI finds the official AWS CLI to drive the simulator with: $WARDEN_AWS_CLI,
// Debian's awscli (which .ci/run installs), or the PATH's. Without one the test is
// skipped, except under CI, where it fails.
func AWSCLI(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("WARDEN_AWS_CLI"), "/usr/bin/aws"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("aws"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("the AWS CLI is not installed (apt-get install awscli); .ci/run installs it")
	}
	t.Skip("the AWS CLI is not installed (apt-get install awscli)")
	return ""
}
