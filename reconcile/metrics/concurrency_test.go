package metrics

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// TestMetrics_concurrentRecordingAndScraping records from many goroutines while others
// scrape, as the daemon's workers and Prometheus do; run with -race it checks the
// locking, and without it the totals still prove that no increment was lost.
func TestMetrics_concurrentRecordingAndScraping(t *testing.T) {
	const workers, rounds, targets = 8, 300, 40
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, WithQueueDepth(fixedQueue), WithState(fixedState), WithLabelLimit(targets/2))

	stop := make(chan struct{})
	var scrapers sync.WaitGroup
	for range 2 {
		scrapers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := reg.Gather(); err != nil {
					t.Errorf("scrape: %v", err)
					return
				}
			}
		})
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				target := fmt.Sprintf("target-%d", (w*rounds+i)%targets)
				m.ObserveReconcile(StageCollect, time.Duration(i)*time.Millisecond, nil)
				m.ObserveReconcile(StageRemediate, time.Millisecond, context.DeadlineExceeded)
				m.ScopeRead(snapshot.Scope{Provider: "aws", Service: "iam", Status: snapshot.ScopeOK, Calls: 3, Throttled: 1})
				m.CloudCalls(ProviderGCP, "compute", 2, 0, 1)
				m.FindingOpened(target, findings.Medium)
				m.FindingResolved(target, findings.Medium, time.Minute)
				m.DriftFixed(time.Second)
				m.Action("aws.iam.deactivate_access_key", ActionVerified)
				m.RemediationPartial()
				m.ApprovalDecided(ApprovalDenied)
				m.Event(SourceGCP, EventAccepted)
				m.Job("collect_scope", JobCompleted)
			}
		})
	}
	wg.Wait()
	close(stop)
	scrapers.Wait()

	n := float64(workers * rounds)
	for _, c := range []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"collect attempts", m.reconcileAttempts.WithLabelValues("collect"), n},
		{"remediate timeouts", m.reconcileErrors.WithLabelValues("remediate", "timeout"), n},
		{"aws iam calls", m.cloudCalls.WithLabelValues("aws", "iam"), 3 * n},
		{"aws iam throttled", m.cloudThrottled.WithLabelValues("aws", "iam"), n},
		{"gcp compute denied", m.cloudAccessDenied.WithLabelValues("gcp", "compute"), n},
		{"scope reads", m.scopeReads.WithLabelValues("aws", "iam", "ok"), n},
		{"actions", m.actions.WithLabelValues("aws.iam.deactivate_access_key", "verified"), n},
		{"partial", m.remediationPartial, n},
		{"denied approvals", m.approvals.WithLabelValues("denied"), n},
		{"events", m.events.WithLabelValues("gcp", "accepted"), n},
		{"jobs", m.jobs.WithLabelValues("collect_scope", "completed"), n},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if got, _ := countSum(t, m.driftTimeToFix); got != int(n) {
		t.Errorf("drift observations = %d, want %v", got, n)
	}

	// Of the 40 targets, exactly the label limit kept their name, whichever came first;
	// every opening was counted under a name or "other".
	// The series are counted before the lookups below, which would make empty series for
	// the targets that became "other".
	series := testutil.CollectAndCount(m.findingsOpened)
	var sum float64
	for i := range targets {
		sum += testutil.ToFloat64(m.findingsOpened.WithLabelValues(fmt.Sprintf("target-%d", i), "medium"))
	}
	sum += testutil.ToFloat64(m.findingsOpened.WithLabelValues(other, "medium"))
	if series != targets/2+1 {
		t.Errorf("%d target series, want the limit %d and \"other\"", series, targets/2)
	}
	if sum != n {
		t.Errorf("findings opened add up to %v, want %v", sum, n)
	}
}
