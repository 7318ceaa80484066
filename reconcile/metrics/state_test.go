package metrics

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warden-sec/warden/findings"
)

// The moments of the fixed state, as Unix seconds the golden file shows.
var (
	checkpointAt = time.Unix(1767225600, 500_000_000).UTC() // 2026-01-01T00:00:00.5Z
	iamReadAt    = time.Unix(1767222000, 0).UTC()           // an hour before
	iamOldestAt  = time.Unix(1767218400, 0).UTC()           // two hours before
)

func fixedQueue(context.Context) (map[[2]string]int, error) {
	return map[[2]string]int{
		{"collect_scope", "available"}: 3,
		{"collect_scope", "running"}:   2,
		{"remediate", "retryable"}:     1,
		{"remediate", "haunted"}:       4, // a state River does not have: "other"
	}, nil
}

func fixedState(context.Context) (State, error) {
	return State{
		FindingsOpen:        map[findings.Severity]int{findings.High: 4, findings.Critical: 1, findings.Severity(9): 2},
		ApprovalsPending:    2,
		AuditEntries:        1234,
		ForgedDecisions:     3,
		AuditLastCheckpoint: checkpointAt,
		Scopes: []ScopeGroup{
			{Provider: ProviderAWS, Service: "iam", OK: 50, Partial: 1, Failed: 2, OldestComplete: iamReadAt},
			// The same group again, as two queries (per account, say) might give it: merged,
			// its older complete read winning.
			{Provider: ProviderAWS, Service: "iam", OK: 1, OldestComplete: iamOldestAt},
			{Provider: ProviderGCP, Service: "compute", Failed: 3}, // never read in full
		},
	}, nil
}

// stateNames are the families the scrape-time queries report.
func stateNames() []string {
	return []string{"warden_queue_jobs", "warden_findings_open", "warden_approvals_pending",
		"warden_audit_entries", "warden_forged_decisions_total", "warden_audit_last_checkpoint_timestamp_seconds", "warden_scopes",
		"warden_scope_oldest_complete_read_timestamp_seconds", "warden_scrape_errors_total"}
}

func TestState_reportsTheStoreAtScrapeTime(t *testing.T) {
	m := New(nil, WithQueueDepth(fixedQueue), WithState(fixedState))
	compareGolden(t, m, "state.txt", stateNames()...)
}

func TestState_withoutFuncsReportsOnlyTheErrorCounter(t *testing.T) {
	m := New(nil)
	if n := testutil.CollectAndCount(m, stateNames()...); n != 2 {
		t.Errorf("%d state series without query funcs, want the 2 error counters", n)
	}
}

func TestQueueDepth_isFreshAtEveryScrape(t *testing.T) {
	var calls atomic.Int64
	m := New(nil, WithQueueDepth(func(ctx context.Context) (map[[2]string]int, error) {
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("called without a deadline")
		}
		n := calls.Add(1)
		return map[[2]string]int{{"collect_scope", "available"}: int(n * 10)}, nil
	}))
	for want := 10.0; want <= 30; want += 10 {
		got := gaugeValue(t, m, "warden_queue_jobs", `kind="collect_scope",state="available"`)
		if got != want {
			t.Errorf("scrape %d: available = %v, want %v", int(want/10), got, want)
		}
	}
	// A state the store had no row for reads 0 rather than vanishing.
	if got := gaugeValue(t, m, "warden_queue_jobs", `kind="collect_scope",state="running"`); got != 0 {
		t.Errorf("running = %v, want 0", got)
	}
}

func TestQueueDepth_failingFuncCountsAnErrorAndKeepsTheScrape(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cases := []struct {
		name string
		f    QueueDepthFunc
	}{
		{"error", func(context.Context) (map[[2]string]int, error) {
			return nil, errors.New("queue depth: database is locked")
		}},
		{"timeout", func(ctx context.Context) (map[[2]string]int, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		{"ignores its context", func(context.Context) (map[[2]string]int, error) {
			<-release // hangs past the deadline, ends with the test
			return map[[2]string]int{{"collect_scope", "available"}: 1}, nil
		}},
		{"panics", func(context.Context) (map[[2]string]int, error) {
			var depth map[[2]string]int
			depth[[2]string{"a", "b"}] = 1 // assignment to a nil map
			return depth, nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			reg := prometheus.NewPedanticRegistry()
			m := New(reg, WithQueueDepth(c.f), WithState(fixedState),
				WithScrapeTimeout(100*time.Millisecond), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			m.Job("collect_scope", JobCompleted)

			for scrape := 1; scrape <= 2; scrape++ {
				start := time.Now()
				mfs, err := reg.Gather()
				if err != nil {
					t.Fatalf("scrape %d failed: %v", scrape, err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("scrape %d took %s with a 100ms query timeout", scrape, d)
				}
				got := map[string]bool{}
				for _, mf := range mfs {
					got[mf.GetName()] = true
				}
				if got["warden_queue_jobs"] {
					t.Errorf("scrape %d reported queue depth from a failed query", scrape)
				}
				for _, name := range []string{"warden_jobs_total", "warden_findings_open", "process_cpu_seconds_total", "go_goroutines"} {
					if !got[name] {
						t.Errorf("scrape %d lost %s to the failed queue query", scrape, name)
					}
				}
				if got := testutil.ToFloat64(m.state.errors.WithLabelValues(queryQueue)); got != float64(scrape) {
					t.Errorf("after scrape %d: queue scrape errors = %v, want %d", scrape, got, scrape)
				}
				if got := testutil.ToFloat64(m.state.errors.WithLabelValues(queryState)); got != 0 {
					t.Errorf("state scrape errors = %v, want 0", got)
				}
			}
			if !strings.Contains(logs.String(), "query=queue") {
				t.Errorf("the failure was not logged: %q", logs.String())
			}
		})
	}
}

func TestState_failingFuncLeavesTheQueueDepth(t *testing.T) {
	m := New(nil, WithQueueDepth(fixedQueue), WithState(func(context.Context) (State, error) {
		return State{}, errors.New("state: connection refused")
	}))
	// One scrape: the queue's gauges, none of the state's.
	got := string(exposition(t, m))
	for _, name := range []string{"warden_findings_open", "warden_approvals_pending", "warden_audit_entries"} {
		if strings.Contains(got, "\n"+name) {
			t.Errorf("%s reported from a failed query", name)
		}
	}
	if !strings.Contains(got, "\nwarden_queue_jobs{") {
		t.Error("the queue depth went missing with the state query")
	}
	if got := testutil.ToFloat64(m.state.errors.WithLabelValues(queryState)); got != 1 {
		t.Errorf("state scrape errors = %v, want 1", got)
	}
}

func TestState_queriesRunSideBySide(t *testing.T) {
	// Each query takes 300ms; one after the other they would take 600ms.
	slow := 300 * time.Millisecond
	m := New(nil,
		WithQueueDepth(func(ctx context.Context) (map[[2]string]int, error) {
			time.Sleep(slow)
			return fixedQueue(ctx)
		}),
		WithState(func(ctx context.Context) (State, error) {
			time.Sleep(slow)
			return fixedState(ctx)
		}))
	start := time.Now()
	if n := testutil.CollectAndCount(m, "warden_queue_jobs", "warden_approvals_pending"); n == 0 {
		t.Fatal("nothing collected")
	}
	if d := time.Since(start); d >= 2*slow {
		t.Errorf("a scrape took %s: the queries ran one after the other", d)
	}
}

// gaugeValue scrapes c and returns the value of the series of family name whose labels
// are labels (as exposed: `a="x",b="y"`).
func gaugeValue(t *testing.T, c prometheus.Collector, name, labels string) float64 {
	t.Helper()
	prefix := name + "{" + labels + "} "
	for line := range strings.Lines(string(exposition(t, c, name))) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return parseFloat(t, v)
		}
	}
	t.Fatalf("no series %s{%s}", name, labels)
	return 0
}
