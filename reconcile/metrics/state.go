package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warden-sec/warden/findings"
)

// QueueDepthFunc reports how many jobs the queue holds, by {kind, state}: River's job
// kind and job state (available, running, retryable, scheduled, pending, completed,
// cancelled, discarded). It is called at every scrape, with a deadline in ctx.
type QueueDepthFunc func(ctx context.Context) (map[[2]string]int, error)

// StateFunc reports the store's State. It is called at every scrape, with a deadline in
// ctx.
type StateFunc func(ctx context.Context) (State, error)

// State is what the store knows that no single replica's counters can tell: the gauges
// of the whole deployment.
type State struct {
	// FindingsOpen counts the open findings by severity (a missing severity has none).
	FindingsOpen map[findings.Severity]int
	// ApprovalsPending counts the approval requests waiting for a decision.
	ApprovalsPending int
	// AuditEntries is the number of entries in the audit log.
	AuditEntries int64
	// ForgedDecisions counts the decisions found forged (approval.forged entries in the
	// audit log), by any process: serve's replicas and warden apply alike.
	ForgedDecisions int64
	// AuditLastCheckpoint is when the latest signed checkpoint was made; zero for none
	// yet, and then its gauge is not reported (rather than reported as 1970).
	AuditLastCheckpoint time.Time
	// Scopes counts the scopes by provider and service; a group may come more than once
	// (it is then added up).
	Scopes []ScopeGroup
}

// ScopeGroup is the scopes of one provider and service, counted by the outcome of their
// latest read. A scope's id is never a label: 50 accounts × 17 regions × 3 services are
// 2,550 series per metric; the per-scope detail is `warden status`'s.
type ScopeGroup struct {
	Provider Provider
	Service  string // iam, ec2, acm, compute, …
	// OK, Partial and Failed count the scopes whose latest read had that outcome.
	OK, Partial, Failed int
	// OldestComplete is the least recent of the group's latest complete reads: how long
	// the stalest scope that was ever read in full has gone unconfirmed. Zero when no
	// scope of the group was read in full yet, and then its gauge is not reported.
	OldestComplete time.Time
}

// Names of the scrape-time queries, the query label of warden_scrape_errors_total.
const (
	queryQueue = "queue"
	queryState = "state"
)

// stateCollector reports the store's gauges, queried at scrape time so they are never
// stale and agree across replicas. A failed or slow query costs its own gauges for that
// scrape and counts an error; it never fails the scrape, so the process metrics and the
// counters still arrive when the store is in trouble.
type stateCollector struct {
	queue   QueueDepthFunc
	state   StateFunc
	timeout time.Duration
	log     *slog.Logger

	kinds, services *labelSet // shared with Metrics, so both name a kind alike

	errors *prometheus.CounterVec // query

	queueJobs, findingsOpen, approvalsPending, auditEntries, auditCheckpoint *prometheus.Desc
	forgedDecisions, scopes, scopeOldest                                     *prometheus.Desc
}

func newStateCollector(o options, kinds, services *labelSet) *stateCollector {
	c := &stateCollector{
		queue: o.queue, state: o.state, timeout: o.timeout, log: o.log,
		kinds: kinds, services: services,
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_scrape_errors_total",
			Help: "Store queries made at scrape time that failed or timed out, by query; their gauges are missing from that scrape.",
		}, []string{"query"}),
		queueJobs: prometheus.NewDesc("warden_queue_jobs",
			"Jobs in the queue, by job kind and state.", []string{"kind", "state"}, nil),
		findingsOpen: prometheus.NewDesc("warden_findings_open",
			"Open findings, by severity.", []string{"severity"}, nil),
		approvalsPending: prometheus.NewDesc("warden_approvals_pending",
			"Approval requests waiting for a decision.", nil, nil),
		auditEntries: prometheus.NewDesc("warden_audit_entries",
			"Entries in the audit log.", nil, nil),
		forgedDecisions: prometheus.NewDesc("warden_forged_decisions_total",
			"Decisions found without a valid signature by a key gates.signers lists, counted as none: the approval.forged entries of the audit log, by every process.", nil, nil),
		auditCheckpoint: prometheus.NewDesc("warden_audit_last_checkpoint_timestamp_seconds",
			"Unix time of the latest signed audit checkpoint.", nil, nil),
		scopes: prometheus.NewDesc("warden_scopes",
			"Scopes by provider, service and the outcome of their latest read.",
			[]string{"provider", "service", "outcome"}, nil),
		scopeOldest: prometheus.NewDesc("warden_scope_oldest_complete_read_timestamp_seconds",
			"Unix time of the least recent latest complete read among the scopes of a provider and service.",
			[]string{"provider", "service"}, nil),
	}
	c.errors.WithLabelValues(queryQueue)
	c.errors.WithLabelValues(queryState)
	return c
}

// Describe implements prometheus.Collector.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	c.errors.Describe(ch)
	for _, d := range []*prometheus.Desc{c.queueJobs, c.findingsOpen, c.approvalsPending,
		c.auditEntries, c.forgedDecisions, c.auditCheckpoint, c.scopes, c.scopeOldest} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The two queries run side by side so that a
// scrape waits for the slower, not their sum; the error counter is collected last so
// that a scrape shows its own failures.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	var wg sync.WaitGroup
	if c.queue != nil {
		wg.Go(func() { c.collectQueue(ch) })
	}
	if c.state != nil {
		wg.Go(func() { c.collectState(ch) })
	}
	wg.Wait()
	c.errors.Collect(ch)
}

func (c *stateCollector) collectQueue(ch chan<- prometheus.Metric) {
	depth, ok := query(c, queryQueue, c.queue)
	if !ok {
		return
	}
	// Every state of a kind is reported, at 0 if the store had no row for it: a store's
	// GROUP BY omits empty groups, and a backlog that drains must read 0, not vanish.
	sums := make(map[string]map[string]float64)
	for k, n := range depth {
		kind := c.kinds.value(k[0])
		if sums[kind] == nil {
			sums[kind] = make(map[string]float64)
		}
		sums[kind][oneOf(k[1], riverStates()...)] += float64(n)
	}
	for kind, byState := range sums {
		for _, st := range riverStates() {
			ch <- prometheus.MustNewConstMetric(c.queueJobs, prometheus.GaugeValue, byState[st], kind, st)
		}
		if n, ok := byState[other]; ok {
			ch <- prometheus.MustNewConstMetric(c.queueJobs, prometheus.GaugeValue, n, kind, other)
		}
	}
}

func (c *stateCollector) collectState(ch chan<- prometheus.Metric) {
	s, ok := query(c, queryState, c.state)
	if !ok {
		return
	}
	open := make(map[string]float64)
	for _, sev := range findings.Severities {
		open[sev.String()] = 0
	}
	for sev, n := range s.FindingsOpen {
		open[severity(sev)] += float64(n)
	}
	for sev, n := range open {
		ch <- prometheus.MustNewConstMetric(c.findingsOpen, prometheus.GaugeValue, n, sev)
	}
	ch <- prometheus.MustNewConstMetric(c.approvalsPending, prometheus.GaugeValue, float64(s.ApprovalsPending))
	ch <- prometheus.MustNewConstMetric(c.auditEntries, prometheus.GaugeValue, float64(s.AuditEntries))
	// A counter read from the store: the log only grows, so it never goes down.
	ch <- prometheus.MustNewConstMetric(c.forgedDecisions, prometheus.CounterValue, float64(s.ForgedDecisions))
	if !s.AuditLastCheckpoint.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.auditCheckpoint, prometheus.GaugeValue, unixSeconds(s.AuditLastCheckpoint))
	}

	// Groups are merged by their label values, so that two groups that become "other"
	// (or come twice) are one series, not a duplicate that would fail the scrape.
	type group struct {
		counts [3]float64 // ok, partial, failed: scopeOutcomes' order
		oldest time.Time
	}
	groups := make(map[[2]string]*group)
	for _, sg := range s.Scopes {
		k := [2]string{provider(sg.Provider), c.services.value(sg.Service)}
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
		}
		g.counts[0] += float64(sg.OK)
		g.counts[1] += float64(sg.Partial)
		g.counts[2] += float64(sg.Failed)
		if !sg.OldestComplete.IsZero() && (g.oldest.IsZero() || sg.OldestComplete.Before(g.oldest)) {
			g.oldest = sg.OldestComplete
		}
	}
	for k, g := range groups {
		for i, outcome := range scopeOutcomes() {
			ch <- prometheus.MustNewConstMetric(c.scopes, prometheus.GaugeValue, g.counts[i], k[0], k[1], outcome)
		}
		if !g.oldest.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.scopeOldest, prometheus.GaugeValue, unixSeconds(g.oldest), k[0], k[1])
		}
	}
}

// query calls f with c's timeout and reports whether it answered in time without error,
// counting and logging the failure otherwise. f runs in a goroutine of its own so that
// one which ignores its context still cannot hold the scrape past the timeout; its late
// answer goes to a buffered channel nobody reads, and the goroutine ends with f.
func query[T any](c *stateCollector, name string, f func(context.Context) (T, error)) (T, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		// A panicking query is a failed query, not a crashed daemon.
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		v, err := f(ctx)
		done <- result{v: v, err: err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r.err = fmt.Errorf("no answer within %s: %w", c.timeout, ctx.Err())
	}
	if r.err != nil {
		c.errors.WithLabelValues(name).Inc()
		c.log.Warn("metrics: query the store for a scrape", "query", name, "err", r.err)
		var zero T
		return zero, false
	}
	return r.v, true
}

// unixSeconds is t as a Prometheus timestamp: seconds since the epoch, with a fraction.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
