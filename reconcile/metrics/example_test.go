package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/snapshot"
)

// ExampleMetrics wires the metrics the way `warden serve` does: a registry of its own,
// the store's queue depth read at every scrape, /metrics served by promhttp, and the
// loop recording what it does.
func ExampleMetrics() {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.WithQueueDepth(func(ctx context.Context) (map[[2]string]int, error) {
		// The daemon asks River's job table here, e.g.
		// SELECT kind, state, count(*) FROM river_job GROUP BY kind, state.
		return map[[2]string]int{{"collect_scope", "available"}: 12}, nil
	}))

	// A collect job: the stage timed, the scope's calls counted.
	done := m.Start(metrics.StageCollect)
	scope := snapshot.Scope{ID: "aws/111111111111/us-east-1/ec2", Provider: "aws", Service: "ec2",
		Status: snapshot.ScopePartial, Calls: 40, Throttled: 3}
	done(metrics.Classify(errors.New("ec2: rate exceeded"), metrics.ReasonThrottled))
	m.ScopeRead(scope)

	// A drift found, fixed and verified.
	m.FindingOpened("prod-aws", findings.High)
	m.Action("aws.ec2.revoke_ingress", metrics.ActionVerified)
	m.DriftFixed(2 * time.Second)
	m.FindingResolved("prod-aws", findings.High, 2*time.Second)

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		for _, prefix := range []string{
			`warden_queue_jobs{kind="collect_scope",state="available"}`,
			`warden_reconcile_errors_total{reason="throttled",stage="collect"}`,
			`warden_cloud_throttled_total`,
			`warden_findings_resolved_total`,
			`warden_drift_time_to_fix_seconds_count`,
		} {
			if strings.HasPrefix(line, prefix) {
				fmt.Print(line)
			}
		}
	}
	// Output:
	// warden_cloud_throttled_total{provider="aws",service="ec2"} 3
	// warden_drift_time_to_fix_seconds_count 1
	// warden_findings_resolved_total{severity="high",target="prod-aws"} 1
	// warden_queue_jobs{kind="collect_scope",state="available"} 12
	// warden_reconcile_errors_total{reason="throttled",stage="collect"} 1
}
