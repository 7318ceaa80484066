package metrics

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/golden"
	"github.com/warden-sec/warden/snapshot"
)

// exposition is what /metrics serves of c's families named names (all when none), in
// the text format: the form of the golden files.
func exposition(t *testing.T, c prometheus.Collector, names ...string) []byte {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	keep := func(string) bool { return true }
	if len(names) > 0 {
		keep = func(family string) bool {
			for _, n := range names {
				if n == family {
					return true
				}
			}
			return false
		}
	}
	// A family starts with its "# HELP name …" line and runs to the next one.
	var out bytes.Buffer
	on := false
	for line := range strings.Lines(rec.Body.String()) {
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, _, _ := strings.Cut(rest, " ")
			on = keep(name)
		}
		if on {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// compareGolden compares c's families named names with testdata/file, rewriting it first
// under -update.
func compareGolden(t *testing.T, c prometheus.Collector, file string, names ...string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if golden.Update() {
		if err := os.WriteFile(path, exposition(t, c, names...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if err := testutil.CollectAndCompare(c, bytes.NewReader(want), names...); err != nil {
		t.Errorf("metrics differ from %s (go test -update rewrites it after a deliberate change):\n%v", path, err)
	}
}

// record drives every recording method once or more, with values whose effect the golden
// file shows: each lands in a known bucket or label.
func record(m *Metrics) {
	m.ObserveReconcile(StageCollect, 200*time.Millisecond, nil)
	m.ObserveReconcile(StageCollect, 3*time.Second, Classify(errors.New("iam: rate exceeded"), ReasonThrottled))
	m.ObserveReconcile(StageEvaluate, 20*time.Millisecond, nil)
	m.ObserveReconcile(StageRemediate, 1500*time.Millisecond, context.DeadlineExceeded)
	m.ObserveReconcile(Stage("bogus"), time.Second, nil) // a stage outside the set: "other"

	m.FindingOpened("prod-aws", findings.High)
	m.FindingOpened("prod-aws", findings.High)
	m.FindingOpened("prod-gcp", findings.Critical)
	m.FindingResolved("prod-aws", findings.High, 90*time.Second)
	m.FindingResolved("prod-aws", findings.Severity(42), 2*time.Hour) // out of range: "other"
	m.DriftFixed(3 * time.Second)
	m.DriftFixed(7 * time.Minute)
	m.DriftFixed(-time.Second) // replicas' clocks apart: counted as 0

	m.ScopeRead(snapshot.Scope{ID: "aws/111111111111/iam", Provider: "aws", Service: "iam",
		Status: snapshot.ScopeOK, Calls: 12, Throttled: 2})
	m.ScopeRead(snapshot.Scope{ID: "gcp/acme-prod/compute", Provider: "gcp", Service: "compute",
		Status: snapshot.ScopeFailed, Calls: 3, AccessDenied: 3})
	m.CloudCalls(ProviderAWS, "ec2", 4, 0, 1)
	m.CloudCalls(ProviderAWS, "ec2", -1, -1, -1) // no count at all, not a panic

	m.Action("aws.ec2.revoke_ingress", ActionApplied)
	m.Action("aws.ec2.revoke_ingress", ActionVerified)
	m.Action("gcp.iam.disable_service_account_key", ActionWaiting)
	m.RemediationPartial()

	m.ApprovalDecided(ApprovalApproved)
	m.ApprovalDecided(ApprovalExpired)

	m.Event(SourceAWS, EventAccepted)
	m.Event(SourceAWS, EventAccepted)
	m.Event(SourceGCP, EventMalformed)
	m.Event(SourceUnknown, EventUnauthorized)

	m.Job("collect_scope", JobCompleted)
	m.Job("collect_scope", JobCompleted)
	m.Job("collect_scope", JobRetried)
	m.RightsizeDenied("aws.iam.rightsize_inline_policy")
	m.RightsizeDenied("aws.iam.revoke_ingress") // not a right-sizing fix: "other"
	m.Job("remediate", JobSnoozed)
	m.FindingsExported("securityhub", 250, 1)
	m.FindingsExported("scc", 0, 0)
	m.FindingsExported("splunk", 3, 0) // not a place warden sends to: "other"
}

func TestMetrics_recordsWhatTheDaemonReports(t *testing.T) {
	m := New(nil)
	record(m)
	compareGolden(t, m, "recorded.txt")

	// The golden file is long; the values the alerts rely on, spelled out.
	checks := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"collect attempts", m.reconcileAttempts.WithLabelValues("collect"), 2},
		{"findings sent to Security Hub", m.exported.WithLabelValues("securityhub", "sent"), 250},
		{"findings Security Hub refused", m.exported.WithLabelValues("securityhub", "refused"), 1},
		{"collect throttled", m.reconcileErrors.WithLabelValues("collect", "throttled"), 1},
		{"remediate timeout", m.reconcileErrors.WithLabelValues("remediate", "timeout"), 1},
		{"aws iam calls", m.cloudCalls.WithLabelValues("aws", "iam"), 12},
		{"aws iam throttled", m.cloudThrottled.WithLabelValues("aws", "iam"), 2},
		{"gcp compute denied", m.cloudAccessDenied.WithLabelValues("gcp", "compute"), 3},
		{"aws ec2 calls", m.cloudCalls.WithLabelValues("aws", "ec2"), 4},
		{"prod-aws high opened", m.findingsOpened.WithLabelValues("prod-aws", "high"), 2},
		{"partial", m.remediationPartial, 1},
		{"aws events accepted", m.events.WithLabelValues("aws", "accepted"), 2},
	}
	for _, c := range checks {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMetrics_seriesExistAtZeroBeforeAnything(t *testing.T) {
	// An alert on errors / attempts needs both series before the first error.
	m := New(nil)
	if n := testutil.CollectAndCount(m, "warden_reconcile_errors_total"); n != len(stages())*len(reasons()) {
		t.Errorf("warden_reconcile_errors_total has %d series, want one per stage and reason (%d)", n, len(stages())*len(reasons()))
	}
	if n := testutil.CollectAndCount(m, "warden_reconcile_attempts_total"); n != len(stages()) {
		t.Errorf("warden_reconcile_attempts_total has %d series, want %d", n, len(stages()))
	}
	if n := testutil.CollectAndCount(m, "warden_events_total"); n != len(eventSources())*len(eventResults()) {
		t.Errorf("warden_events_total has %d series, want %d", n, len(eventSources())*len(eventResults()))
	}
	if got := testutil.ToFloat64(m.reconcileErrors.WithLabelValues("collect", "access_denied")); got != 0 {
		t.Errorf("a fresh error counter reads %v", got)
	}
}

func TestMetrics_lintsClean(t *testing.T) {
	m := New(nil, WithQueueDepth(fixedQueue), WithState(fixedState))
	record(m)
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	// Every metric the package defines was collected, and so linted.
	for name := range describedNames(t, m) {
		if testutil.CollectAndCount(m, name) == 0 {
			t.Errorf("%s was not collected, so not linted", name)
		}
	}
}

func TestNew_registersRuntimeAndProcessCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	New(reg)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range []string{
		"go_goroutines", "go_memstats_heap_inuse_bytes", // memory, from the Go runtime
		"process_cpu_seconds_total", "process_resident_memory_bytes", // CPU and RSS, from /proc
		"warden_reconcile_attempts_total", "warden_approvals_total",
	} {
		if !got[name] {
			t.Errorf("%s not gathered", name)
		}
	}
}

func TestNew_sharesARegistryThatHasTheRuntimeCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	New(reg) // must not panic for the Go and process collectors already there
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}

	defer func() {
		if recover() == nil {
			t.Error("a second New on the same registry registered warden's metrics twice")
		}
	}()
	New(reg)
}

func TestMetrics_nilRecordsNothingAndDoesNotPanic(t *testing.T) {
	var m *Metrics
	record(m)
	m.Start(StageCollect)(nil)
}

func TestMetrics_startTimesTheAttempt(t *testing.T) {
	m := New(nil)
	done := m.Start(StagePlan)
	time.Sleep(20 * time.Millisecond)
	done(errors.New("plan: store: disk I/O error"))

	if got := testutil.ToFloat64(m.reconcileErrors.WithLabelValues("plan", "internal")); got != 1 {
		t.Errorf("plan internal errors = %v, want 1", got)
	}
	if n, sum := countSum(t, m.reconcileDuration.WithLabelValues("plan").(prometheus.Histogram)); n != 1 || sum < 0.02 || sum > 5 {
		t.Errorf("plan duration: %d observations summing %vs, want 1 of at least 0.02s", n, sum)
	}
}

func TestLabels_freeFormValuesAreBounded(t *testing.T) {
	m := New(nil, WithLabelLimit(3))
	for _, target := range []string{"a", "b", "c", "d", "e", "a"} {
		m.FindingOpened(target, findings.Low)
	}
	m.FindingOpened("", findings.Low)
	m.FindingOpened(strings.Repeat("x", maxLabelLen+1), findings.Low)
	m.FindingOpened("bad\xffutf8", findings.Low)

	want := map[string]float64{"a": 2, "b": 1, "c": 1, other: 4, "unknown": 1}
	if n := testutil.CollectAndCount(m.findingsOpened); n != len(want) {
		t.Errorf("%d target series, want %d", n, len(want))
	}
	for target, n := range want {
		if got := testutil.ToFloat64(m.findingsOpened.WithLabelValues(target, "low")); got != n {
			t.Errorf("target %q: %v, want %v", target, got, n)
		}
	}
}

func TestLabels_fixedSetsMapStrangersToOther(t *testing.T) {
	m := New(nil)
	m.Event(EventSource("azure"), EventResult("teleported"))
	m.ApprovalDecided(ApprovalOutcome("maybe"))
	m.Action("aws.iam.detach_policy", ActionOutcome("exploded"))
	m.Job("collect_scope", JobOutcome("lost"))
	m.ScopeRead(snapshot.Scope{Provider: "azure", Service: "storage", Status: "weird", Calls: 1})
	m.ObserveReconcile(StageCollect, time.Second, Classify(errors.New("x"), Reason("cosmic_ray")))

	for _, c := range []prometheus.Collector{
		m.events.WithLabelValues(other, other),
		m.approvals.WithLabelValues(other),
		m.actions.WithLabelValues("aws.iam.detach_policy", other),
		m.jobs.WithLabelValues("collect_scope", other),
		m.scopeReads.WithLabelValues(other, "storage", other),
		m.cloudCalls.WithLabelValues(other, "storage"),
		m.reconcileErrors.WithLabelValues("collect", other),
	} {
		if got := testutil.ToFloat64(c); got != 1 {
			t.Errorf("%s = %v, want 1 under \"other\"", c.(prometheus.Metric).Desc(), got)
		}
	}
}

// countSum reads the observation count and sum of the one histogram c collects.
func countSum(t *testing.T, c prometheus.Collector) (n int, sum float64) {
	t.Helper()
	for line := range strings.Lines(string(exposition(t, c))) {
		fields := strings.Fields(line)
		if len(fields) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(fields[0], "{")
		v := parseFloat(t, fields[1])
		switch {
		case strings.HasSuffix(name, "_count"):
			n = int(v)
		case strings.HasSuffix(name, "_sum"):
			sum = v
		}
	}
	return n, sum
}

// describedNames are the names of the metrics c describes.
func describedNames(t *testing.T, c prometheus.Collector) map[string]bool {
	t.Helper()
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	names := map[string]bool{}
	for d := range ch {
		// Desc keeps its name unexported; its String form is `Desc{fqName: "name", …}`.
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names[m[1]] = true
	}
	return names
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("exposed value %q: %v", s, err)
	}
	return v
}
