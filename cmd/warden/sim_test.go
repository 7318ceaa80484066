package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	adminpb "cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/warden-sec/warden/snapshot"
)

const acmeWorld = "../../fixtures/acme/world.yaml"

type finding struct {
	Policy, Resource, Fingerprint, Status, Message string
}

func scanFindings(t *testing.T, args ...string) []finding {
	t.Helper()
	code, out, stderr := warden(t, "", append([]string{"scan", "--no-db", "--format", "json", "--no-progress"}, args...)...)
	if code != 1 {
		t.Fatalf("warden scan %v: exit %d, stderr %s", args, code, stderr)
	}
	var rep struct {
		Findings []finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Findings
}

// TestAcmeWorldThroughSimulator collects the acme world through the simulator with the
// real AWS and Google clients and checks that it scans to the findings of the
// hand-written snapshot (TLS endpoints aside: the simulator serves none).
func TestAcmeWorldThroughSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("collects a whole organisation")
	}
	// The hand-written snapshot was collected at this time; ages are measured from it.
	const at = "2026-11-30T12:00:00Z"
	want := scanFindings(t, "--snapshot", acme)
	got := scanFindings(t, "--sim", acmeWorld, "--now", at)
	key := func(f finding) string { return f.Policy + " " + f.Resource + " " + f.Fingerprint + " " + f.Status }
	var wk, gk []string
	for _, f := range want {
		if !strings.HasPrefix(f.Resource, "tls://") {
			wk = append(wk, key(f))
		}
	}
	for _, f := range got {
		gk = append(gk, key(f))
	}
	slices.Sort(wk)
	slices.Sort(gk)
	for _, k := range wk {
		if _, ok := slices.BinarySearch(gk, k); !ok {
			t.Errorf("missing through the simulator: %s", k)
		}
	}
	for _, k := range gk {
		if _, ok := slices.BinarySearch(wk, k); !ok {
			t.Errorf("extra through the simulator: %s", k)
		}
	}
	t.Logf("%d findings both ways", len(gk))
}

// startSim runs `warden sim` as a user would and returns the endpoint it prints; the
// test fails if stopping it does not exit 0.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	url, stop := runSim(t, args...)
	t.Cleanup(func() {
		if code := stop(); code != 0 {
			t.Errorf("warden sim exited %d", code)
		}
	})
	return url
}

// runSim runs `warden sim` and returns the endpoint it prints and a stop function that
// cancels it (as SIGINT does) and returns its exit code. Calling stop again returns the
// same code.
func runSim(t *testing.T, args ...string) (url string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- run(ctx, append([]string{"sim", "--listen", "127.0.0.1:0"}, args...), strings.NewReader(""), pw, &errb)
		pw.Close()
	}()
	code, stopped := 0, false
	stop = func() int {
		if !stopped {
			cancel()
			code, stopped = <-done, true
			if code != 0 {
				t.Logf("warden sim stderr: %s", errb.String())
			}
		}
		return code
	}
	t.Cleanup(func() { stop() })
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if _, url, ok := strings.Cut(sc.Text(), "serving on "); ok {
			// Keep draining so that the simulator never blocks on its output.
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return url, stop
		}
	}
	t.Fatal("warden sim printed no endpoint")
	return "", stop
}

// TestSim_stopsAtOnceWithConnectionsOpen stops `warden sim` while clients hold
// connections open, as the collectors' clients do after a collect: a gRPC (h2c)
// connection, an HTTP/1.1 keep-alive one, and a TCP connection that never sent a request
// (a spare dial). Stopping used to wait for the 5 s shutdown deadline and exit 2.
func TestSim_stopsAtOnceWithConnectionsOpen(t *testing.T) {
	url, stop := runSim(t, "--world", acmeWorld)
	addr := strings.TrimPrefix(url, "http://")

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Any answer will do, as long as it came over the connection.
	_, _ = adminpb.NewIAMClient(conn).ListServiceAccounts(context.Background(), &adminpb.ListServiceAccountsRequest{Name: "projects/acme-prod-4821"})
	if st := conn.GetState(); st != connectivity.Ready {
		t.Fatalf("gRPC connection %v, want it open", st)
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url + "/_sim/health")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	spare, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer spare.Close()
	time.Sleep(50 * time.Millisecond) // let the simulator accept it

	start := time.Now()
	code := stop()
	elapsed := time.Since(start)
	if code != 0 {
		t.Errorf("warden sim exited %d after %v, want 0", code, elapsed)
	}
	if elapsed > time.Second {
		t.Errorf("warden sim took %v to stop, want well under 1s", elapsed)
	}
	t.Logf("stopped in %v", elapsed)
}

// TestSimCommandServesCollect runs the simulator as its own command and collects from it
// the way the docs say: AWS through AWS_ENDPOINT_URL and the standard credential chain,
// GCP through --gcp-endpoint.
func TestSimCommandServesCollect(t *testing.T) {
	url := startSim(t, "--world", acmeWorld)
	t.Setenv("AWS_ENDPOINT_URL", url)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	out := filepath.Join(t.TempDir(), "snap.json")
	code, _, stderr := warden(t, "", "collect", "--aws-org", "--region", "eu-west-1",
		"--gcp-endpoint", url, "--gcp-project", "acme-prod-4821", "--out", out)
	if code != 0 {
		t.Fatalf("collect: exit %d: %s", code, stderr)
	}
	h, rs, err := snapshotReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Accounts, []string{"111111111111", "222222222222", "333333333333", "acme-prod-4821"}) {
		t.Errorf("accounts = %v", h.Accounts)
	}
	types := map[string]int{}
	for _, r := range rs {
		types[r.Type]++
		if r.Type == "aws.ec2.security_group" && r.Region != "eu-west-1" {
			t.Errorf("--region eu-west-1 collected %s", r.UID)
		}
	}
	for _, typ := range []string{"aws.iam.user", "aws.iam.role", "aws.iam.policy", "aws.iam.access_key", "aws.ec2.security_group",
		"aws.acm.certificate", "aws.iam.root_user", "gcp.iam.service_account", "gcp.compute.firewall", "gcp.project.iam_policy"} {
		if types[typ] == 0 {
			t.Errorf("no %s collected (%v)", typ, types)
		}
	}
	for _, s := range h.Scopes {
		if s.Status != "ok" {
			t.Errorf("scope %s: %s %s", s.ID, s.Status, s.Error)
		}
	}
}

// TestCollectErrors checks the errors a user sees first.
func TestCollectErrors(t *testing.T) {
	tests := []struct {
		args  []string
		want  string
		avoid string // what the message must not say
	}{
		{[]string{"collect"}, "collect needs a target", ""},
		{[]string{"collect", "--sim", "nope.yaml"}, "read world", ""},
		{[]string{"collect", "--gcp-endpoint", "http://127.0.0.1:1"}, "GCP needs at least one project", ""},
		// scan collects into a temporary file of its own, which is no concern of the user's.
		{[]string{"scan", "--no-db", "--no-progress", "--gcp-project", "p", "--gcp-endpoint", "notaurl"},
			`collect gcp: gcp: endpoint "notaurl"`, "warden-scan-"},
	}
	for _, tc := range tests {
		code, _, stderr := warden(t, "", tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || tc.avoid != "" && strings.Contains(stderr, tc.avoid) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q without %q", tc.args, code, stderr, tc.want, tc.avoid)
		}
	}
}

// TestCollectFromConfig reads the same targets from a config file, endpoints included.
func TestCollectFromConfig(t *testing.T) {
	url := startSim(t, "--world", acmeWorld)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	dir := t.TempDir()
	cfg := write(t, dir, "warden.yaml", `targets:
  aws:
    regions: [us-east-1]
    endpoint: `+url+`
    rate_limits: {iam: 50}
  gcp:
    projects: [acme-data-1193]
    endpoint: `+url+`
`)
	code, out, stderr := warden(t, "", "collect", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, rs, err := snapshot.ReadAll(strings.NewReader(out), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Accounts, []string{"111111111111", "acme-data-1193"}) {
		t.Errorf("accounts = %v (the caller's account only, without org: true)", h.Accounts)
	}
	if len(rs) == 0 {
		t.Error("nothing collected")
	}
}

func TestSimListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:4566", ":4566", "10.1.2.3:4566", "nohostport"} {
		code, _, stderr := warden(t, "", "sim", "--listen", addr)
		if code != 2 || !strings.Contains(stderr, "--allow-remote") {
			t.Errorf("--listen %s: exit %d, %q", addr, code, stderr)
		}
	}
}
