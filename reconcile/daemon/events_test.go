package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/riverqueue/river"

	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

const token = "0123456789abcdef0123456789abcdef0123456789abcdef"

// A drift injected into the simulator while the daemon runs, announced by a CloudTrail
// event through EventBridge, is read again alone, judged and fixed (an auto-approved
// risk), and verified in the simulator: the time from the event to the rule gone is the
// drift-to-fix latency. A forged (no token), a malformed and an unknown event change
// nothing and are answered 401 and 400.
func TestDaemon_eventRefreshesAndFixesTheDrift(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := start(t, dsn(t), 1, daemon.Options{Workers: 2, ApprovalPoll: time.Hour})
			h.idle()
			srv := httptest.NewServer(h.d.EventsHandler(secret.New(token), daemon.EndpointHooks{}))
			t.Cleanup(srv.Close)

			const group = "sg-00000000000000a0"
			arn := "arn:aws:ec2:us-east-1:" + remediatetest.Account + ":security-group/" + group
			if open, _ := h.e.SSHOpen(t, arn); open {
				t.Fatal("SSH open before the drift: the first sweep did not fix it")
			}
			for _, c := range []struct {
				name, auth, body string
				want             int
			}{
				{"no token", "", event(t, group), http.StatusUnauthorized},
				{"a wrong token", "Bearer " + strings.Repeat("x", 48), event(t, group), http.StatusUnauthorized},
				{"malformed", "Bearer " + token, `{"detail-type": "AWS API Call via CloudTrail", "detail": 7}`, http.StatusBadRequest},
				{"unknown", "Bearer " + token, strings.Replace(event(t, group), "AuthorizeSecurityGroupIngress", "DescribeSecurityGroups", 1), http.StatusBadRequest},
			} {
				if got := post(t, srv.URL, c.auth, c.body); got != c.want {
					t.Errorf("%s: %d, want %d", c.name, got, c.want)
				}
			}
			before := h.count(daemon.KindRefresh + "/completed")
			if before != 0 {
				t.Errorf("%d refreshes after refused events", before)
			}

			// The drift: someone opens SSH to the world again.
			_, err := ec2.NewFromConfig(h.e.SDK).AuthorizeSecurityGroupIngress(context.Background(), &ec2.AuthorizeSecurityGroupIngressInput{
				GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
					FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
			if err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			if got := post(t, srv.URL, "Bearer "+token, event(t, group)); got != http.StatusAccepted {
				t.Fatalf("the event: %d, want 202", got)
			}
			waitFor(t, "SSH closed again", func() bool { open, _ := h.e.SSHOpen(t, arn); return !open })
			took := time.Since(sent)
			t.Logf("event → drift fixed and verified in the simulator: %v", took.Round(time.Millisecond))
			if h.count(daemon.KindRefresh+"/completed") != 1 {
				t.Errorf("refreshes %v, want exactly one", h.snapshot())
			}
			if st := h.states(); st["failed"] != 0 {
				t.Errorf("remediation states %v", st)
			}
		})
	}
}

// event is a CloudTrail AuthorizeSecurityGroupIngress event for group, as EventBridge
// delivers it, timed now.
func event(t *testing.T, group string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "events", "testdata", "aws", "ec2-authorize-ingress.json"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	return strings.NewReplacer("sg-0a1b2c3d4e5f60718", group, "2026-09-14T10:21:07Z", now, "eu-west-1", "us-east-1").Replace(string(b))
}

func post(t *testing.T, url, auth, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDaemon_driftToFixLatency measures drifts injected into the simulator while the
// daemon runs, each announced by a CloudTrail event: from the event's POST to the SSH
// rule gone from the simulator (read again alone, judged, fixed, verified). It is a
// measurement, opt-in (WARDEN_BENCH_DRIFTS=50), and logs the median and the 95th
// percentile; BENCHMARKS.md has the numbers.
func TestDaemon_driftToFixLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("WARDEN_BENCH_DRIFTS"))
	if n <= 0 {
		t.Skip("a measurement: set WARDEN_BENCH_DRIFTS=50")
	}
	// WARDEN_BENCH_DRIFTS_SWEEP=N measures while a second target sweeps an organisation
	// of N generated accounts (4,000 resources each, unpaced, its fixes applied) in the
	// same daemon, again and again: the latency a drift meets in a busy replica. The
	// drifts start during the first sweep, or with WARDEN_BENCH_DRIFTS_SETTLED=1 once its
	// collections are done.
	sweeping, _ := strconv.Atoi(os.Getenv("WARDEN_BENCH_DRIFTS_SWEEP"))
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			w := remediatetest.World(1)
			opts := daemon.Options{Workers: 4, ApprovalPoll: time.Hour}
			// The drifting account is the organisation's management account: one target
			// reads it and the members, as warden serve with org: true does.
			org := &lateCollector{ready: make(chan struct{})}
			if sweeping > 0 {
				w.AWS.Organization = &cloudsim.Organization{ID: "o-driftsweep1", Management: remediatetest.Account,
					// The simulator holds every account built, as AWS does: with its
					// default cache, the fixes and the sweep's reads, spread over the
					// organisation, had it build and diff accounts all day, and the
					// benchmark measured the simulator (two thirds of the CPU).
					Generated: &cloudsim.GeneratedAccounts{Accounts: sweeping, Seed: 1, Regions: []string{"us-east-1"}, Cache: sweeping}}
				opts.Targets = []daemon.Target{{Name: "aws", Collector: org, Reader: org, Schedule: river.PeriodicInterval(time.Hour)}}
			}
			h := startWorld(t, dsn(t), w, opts)
			const group = "sg-00000000000000a0"
			arn := "arn:aws:ec2:us-east-1:" + remediatetest.Account + ":security-group/" + group
			if sweeping > 0 {
				org.set(awscollector.New(awscollector.Config{Sessions: h.e.Sessions, Org: true, Regions: []string{"us-east-1"}}))
				// The group's fix is one of the first sweep's thousands, queued in the
				// order their scopes were read: on a slow machine, a minute was not
				// always enough.
				began := time.Now()
				for h.verified(arn) < 1 {
					if time.Since(began) > 5*time.Minute {
						t.Fatalf("the group's first fix not verified after 5 minutes: queue %s, jobs %v", depth(h), h.snapshot())
					}
					time.Sleep(50 * time.Millisecond)
				}
				t.Logf("%s: the group's first fix was verified %v after the collector was set", name, time.Since(began).Round(time.Second))
				if os.Getenv("WARDEN_BENCH_DRIFTS_SETTLED") != "" {
					// The drifts meet the sweeps that follow the first: what a replica
					// does all day once it has read the organisation (the first sweep's
					// fixes may still be applying).
					began := time.Now()
					for collecting(t, h) > 0 {
						if time.Since(began) > time.Hour {
							t.Fatalf("the first sweep's collections still run after an hour: %s", depth(h))
						}
						time.Sleep(time.Second)
					}
					t.Logf("%s: the first sweep's collections were done %v after the group's first fix; queue %s", name, time.Since(began).Round(time.Second), depth(h))
				}
			} else {
				h.idle()
			}
			srv := httptest.NewServer(h.d.EventsHandler(secret.New(token), daemon.EndpointHooks{}))
			t.Cleanup(srv.Close)
			cl := ec2.NewFromConfig(h.e.SDK)
			var took []time.Duration
			where := stages{}
			profileDrifts(t, name)
			collected := h.count(daemon.KindCollect + "/completed")
			for i := range n {
				if sweeping > 0 {
					// Another sweep whenever the last one's collections are done: the load
					// stays (a sweep already queued is not queued twice).
					if _, err := h.d.Sweep(context.Background(), "aws", fmt.Sprintf("load-%d", i)); err != nil {
						t.Fatal(err)
					}
				}
				// A sweep reading the group while it is open may fix it too, or find it
				// fixed already: either verifies once more.
				verified := h.verified(arn)
				_, err := cl.AuthorizeSecurityGroupIngress(context.Background(), &ec2.AuthorizeSecurityGroupIngressInput{
					GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
						FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}})
				if err != nil {
					t.Fatal(err)
				}
				body := strings.Replace(event(t, group), "9177bb4c-1883-583c-7713-9ba02b415b6a", fmt.Sprintf("drift-%d", i), 1)
				sent := time.Now()
				if got := post(t, srv.URL, "Bearer "+token, body); got != http.StatusAccepted {
					t.Fatalf("event %d: %d", i, got)
				}
				deadline := time.Now().Add(20 * time.Second)
				for open, _ := h.e.SSHOpen(t, arn); open; open, _ = h.e.SSHOpen(t, arn) {
					if time.Now().After(deadline) {
						t.Fatalf("SSH still open 20s after drift %d: queue %s, jobs %v", i, depth(h), h.snapshot())
					}
					time.Sleep(10 * time.Millisecond)
				}
				took = append(took, time.Since(sent))
				// The fix's verification may still be reading: the next drift comes after
				// it, as drifts do, not between its write and its re-read.
				waitFor(t, "the fix verified", func() bool { return h.verified(arn) > verified })
				where.add(t, h.e.Store, fmt.Sprintf("drift-%d", i), group, sent, took[len(took)-1])
			}
			slices.Sort(took)
			p := func(q float64) time.Duration { return took[int(q*float64(len(took)-1))] }
			t.Logf("%s: %d drifts, event → fixed and verified: p50 %v, p95 %v, max %v", name, n,
				p(0.5).Round(time.Millisecond), p(0.95).Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
			t.Logf("%s: the jobs of the drifts' events:%s", name, where)
			if sweeping > 0 {
				t.Logf("%s: meanwhile %d collections completed, sweeping %d generated accounts; queue %s; jobs %v", name,
					h.count(daemon.KindCollect+"/completed")-collected, sweeping, depth(h), h.snapshot())
			}
		})
	}
}

// profileDrifts writes a CPU profile and an execution trace of the drifts into the
// directory WARDEN_BENCH_DRIFTS_PROFILE names, if any, as cpu-NAME.pprof and
// trace-NAME.out: where an event's jobs wait (go tool trace -pprof=sync|sched).
func profileDrifts(t *testing.T, name string) {
	dir := os.Getenv("WARDEN_BENCH_DRIFTS_PROFILE")
	if dir == "" {
		return
	}
	cpu, err := os.Create(filepath.Join(dir, "cpu-"+name+".pprof"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := os.Create(filepath.Join(dir, "trace-"+name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		t.Fatal(err)
	}
	if err := trace.Start(tr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		trace.Stop()
		pprof.StopCPUProfile()
		cpu.Close()
		tr.Close()
	})
}

// collecting is how many collections are queued or running.
func collecting(t *testing.T, h *harness) int {
	t.Helper()
	d, err := h.d.Depth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range d {
		if c.Kind == daemon.KindCollect && (c.State == "available" || c.State == "running" || c.State == "retryable") {
			n += int(c.Count)
		}
	}
	return n
}

func depth(h *harness) string {
	d, err := h.d.Depth(context.Background())
	return fmt.Sprint(d, err)
}
