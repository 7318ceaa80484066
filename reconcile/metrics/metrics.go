// Package metrics is what the daemon tells Prometheus: its service level indicators
// (time to converge, reconcile errors by stage, queue depth, throttled and denied calls,
// drift, partial applies, approvals, audit log health, events, jobs) and the process's CPU
// and memory, all named warden_* with Prometheus's units.
//
// Counters and histograms count what this process did; a deployment of N replicas is
// summed over them. Gauges that describe the shared store (queue depth, open findings,
// pending approvals, the audit log, scopes) are read from it at scrape time through the
// funcs the daemon gives New, so every replica reports the same fresh value: aggregate
// those with max, not sum. docs/metrics.md lists every metric; docs/alerts.yml has
// example alert rules over them.
package metrics

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
)

// Defaults of the options.
const (
	// DefaultScrapeTimeout bounds each store query made at scrape time; Prometheus's own
	// default scrape timeout is 10s, and a scrape must answer within it.
	DefaultScrapeTimeout = 5 * time.Second
	// DefaultLabelLimit is how many distinct values a free-form label keeps.
	DefaultLabelLimit = 100
)

// resolveBuckets span a finding's life, in seconds: fixed in seconds by an auto-approved
// action, in hours by a human, in weeks by a ticket.
func resolveBuckets() []float64 {
	return []float64{1, 10, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600,
		86400, 2 * 86400, 3 * 86400, 7 * 86400, 14 * 86400, 28 * 86400}
}

// fixBuckets span event-driven convergence, in seconds: its target is seconds (the
// benchmark's 5s p95), its alert threshold 5 minutes.
func fixBuckets() []float64 {
	return []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
}

// durationBuckets span one stage, in seconds: an evaluation takes milliseconds, the
// collection of a large scope minutes.
func durationBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
		300, 600, 1800}
}

// Metrics records the daemon's metrics. Its methods are safe for concurrent use, and a
// nil *Metrics records nothing, so code shared with the one-shot CLI needs no checks.
// It is a prometheus.Collector of the warden_* metrics; New registers it.
type Metrics struct {
	findingTimeToResolve *prometheus.HistogramVec // severity
	driftTimeToFix       prometheus.Histogram

	reconcileAttempts *prometheus.CounterVec   // stage
	reconcileErrors   *prometheus.CounterVec   // stage, reason
	reconcileDuration *prometheus.HistogramVec // stage

	cloudCalls        *prometheus.CounterVec // provider, service
	cloudThrottled    *prometheus.CounterVec // provider, service
	cloudAccessDenied *prometheus.CounterVec // provider, service
	scopeReads        *prometheus.CounterVec // provider, service, outcome

	findingsOpened   *prometheus.CounterVec // target, severity
	findingsResolved *prometheus.CounterVec // target, severity

	remediationPartial prometheus.Counter
	actions            *prometheus.CounterVec // remediator, outcome
	approvals          *prometheus.CounterVec // outcome
	events             *prometheus.CounterVec // source, result
	jobs               *prometheus.CounterVec // kind, outcome
	rightsizeDenied    *prometheus.CounterVec // remediator
	exported           *prometheus.CounterVec // sink, outcome

	state *stateCollector

	targets, remediators, kinds, services *labelSet
}

// Option configures New.
type Option func(*options)

type options struct {
	queue      QueueDepthFunc
	state      StateFunc
	timeout    time.Duration
	log        *slog.Logger
	labelLimit int
}

// WithQueueDepth has each scrape report warden_queue_jobs{kind,state} from f.
func WithQueueDepth(f QueueDepthFunc) Option { return func(o *options) { o.queue = f } }

// WithState has each scrape report the store's gauges (open findings, pending approvals,
// the audit log, scopes) from f.
func WithState(f StateFunc) Option { return func(o *options) { o.state = f } }

// WithScrapeTimeout bounds each query of a scrape (DefaultScrapeTimeout).
func WithScrapeTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithLogger is where failed scrape-time queries are logged (none by default: they are
// counted in warden_scrape_errors_total either way).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithLabelLimit is how many distinct values each free-form label (target, remediator,
// job kind, service) keeps before recording the rest as "other" (DefaultLabelLimit).
func WithLabelLimit(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.labelLimit = n
		}
	}
}

// New makes the daemon's metrics and registers them with reg, with the Go runtime's and
// the process's collectors (CPU, memory, file descriptors) unless reg has them already.
// A nil reg registers nothing (a test collecting from the Metrics itself). New panics,
// as prometheus.MustRegister does, if reg already has warden's metrics.
func New(reg prometheus.Registerer, opts ...Option) *Metrics {
	o := options{timeout: DefaultScrapeTimeout, labelLimit: DefaultLabelLimit,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, opt := range opts {
		opt(&o)
	}
	kinds, services := newLabelSet(o.labelLimit), newLabelSet(o.labelLimit)
	m := &Metrics{
		findingTimeToResolve: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warden_finding_time_to_resolve_seconds",
			Help:    "Time from a finding's opening to its resolution, by severity.",
			Buckets: resolveBuckets(),
		}, []string{"severity"}),
		driftTimeToFix: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "warden_drift_time_to_fix_seconds",
			Help:    "Time from a drift's detection (its change event, or the scan that saw it) to the verified fix.",
			Buckets: fixBuckets(),
		}),
		reconcileAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_reconcile_attempts_total",
			Help: "Reconcile steps attempted, by stage; successes are attempts less errors.",
		}, []string{"stage"}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_reconcile_errors_total",
			Help: "Reconcile steps that failed, by stage and reason.",
		}, []string{"stage", "reason"}),
		reconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "warden_reconcile_duration_seconds",
			Help:    "Duration of reconcile steps, failed ones included, by stage.",
			Buckets: durationBuckets(),
		}, []string{"stage"}),
		cloudCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_cloud_calls_total",
			Help: "Cloud API call attempts, retries included, by provider and service.",
		}, []string{"provider", "service"}),
		cloudThrottled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_cloud_throttled_total",
			Help: "Cloud API call attempts refused for rate or quota, by provider and service.",
		}, []string{"provider", "service"}),
		cloudAccessDenied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_cloud_access_denied_total",
			Help: "Cloud API call attempts refused for lack of permission (AccessDenied, PERMISSION_DENIED), by provider and service.",
		}, []string{"provider", "service"}),
		scopeReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_scope_reads_total",
			Help: "Scope reads by provider, service and outcome (ok, partial, failed).",
		}, []string{"provider", "service", "outcome"}),
		findingsOpened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_findings_opened_total",
			Help: "Findings opened (drift detected), by target and severity.",
		}, []string{"target", "severity"}),
		findingsResolved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_findings_resolved_total",
			Help: "Findings resolved, by target and severity.",
		}, []string{"target", "severity"}),
		remediationPartial: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "warden_remediation_partial_total",
			Help: "Remediation runs that applied some of their actions and failed others.",
		}),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_actions_total",
			Help: "Remediation actions by remediator and outcome.",
		}, []string{"remediator", "outcome"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_approvals_total",
			Help: "Approval requests ended, by outcome (approved, denied, expired, voided).",
		}, []string{"outcome"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_events_total",
			Help: "Cloud change events received, by source and result.",
		}, []string{"source", "result"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_jobs_total",
			Help: "Job attempts ended, by job kind and outcome.",
		}, []string{"kind", "outcome"}),
		rightsizeDenied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_rightsize_denied_total",
			Help: "Access-denied events that matched an applied right-sizing fix (a permission it removed, refused to its principal), by the fix's remediator.",
		}, []string{"remediator"}),
		exported: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "warden_findings_exported_total",
			Help: "Findings sent to a place security teams read them (securityhub, scc), by outcome: sent (accepted) or refused.",
		}, []string{"sink", "outcome"}),
		state:       newStateCollector(o, kinds, services),
		targets:     newLabelSet(o.labelLimit),
		remediators: newLabelSet(o.labelLimit),
		kinds:       kinds,
		services:    services,
	}
	m.initSeries()
	if reg != nil {
		reg.MustRegister(m)
		for _, c := range []prometheus.Collector{
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		} {
			// A registry that serves other code too may have them already; that is fine.
			if err := reg.Register(c); err != nil {
				if are := (prometheus.AlreadyRegisteredError{}); !errors.As(err, &are) {
					panic(err)
				}
			}
		}
	}
	return m
}

// initSeries creates the series of the fixed label sets at zero, so that rates and
// ratios over them exist before the first failure: an alert on errors/attempts needs
// both series, and a counter born at 1 hides its first increment from rate().
func (m *Metrics) initSeries() {
	for _, st := range stages() {
		m.reconcileAttempts.WithLabelValues(string(st))
		m.reconcileDuration.WithLabelValues(string(st))
		for _, r := range reasons() {
			m.reconcileErrors.WithLabelValues(string(st), string(r))
		}
	}
	for _, s := range findings.Severities {
		m.findingTimeToResolve.WithLabelValues(s.String())
	}
	for _, o := range approvalOutcomes() {
		m.approvals.WithLabelValues(string(o))
	}
	for _, src := range eventSources() {
		for _, r := range eventResults() {
			m.events.WithLabelValues(string(src), string(r))
		}
	}
	for _, r := range Rightsizers {
		m.rightsizeDenied.WithLabelValues(r)
	}
	for _, sink := range ExportSinks {
		for _, o := range []string{"sent", "refused"} {
			m.exported.WithLabelValues(sink, o)
		}
	}
}

// collectors are m's own metrics, in the order they are exposed.
func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.findingTimeToResolve, m.driftTimeToFix,
		m.reconcileAttempts, m.reconcileErrors, m.reconcileDuration,
		m.cloudCalls, m.cloudThrottled, m.cloudAccessDenied, m.scopeReads,
		m.findingsOpened, m.findingsResolved,
		m.remediationPartial, m.actions, m.approvals, m.events, m.jobs, m.rightsizeDenied, m.exported,
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
	m.state.Describe(ch)
}

// Collect implements prometheus.Collector: the recorded metrics, then the store's
// gauges, queried now.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
	m.state.Collect(ch)
}

// ObserveReconcile records one attempt of a stage that took d and ended with err (nil
// for success), counted as an error under ReasonOf(err).
func (m *Metrics) ObserveReconcile(stage Stage, d time.Duration, err error) {
	if m == nil {
		return
	}
	st := oneOf(stage, stages()...)
	m.reconcileAttempts.WithLabelValues(st).Inc()
	m.reconcileDuration.WithLabelValues(st).Observe(seconds(d))
	if err != nil {
		m.reconcileErrors.WithLabelValues(st, string(ReasonOf(err))).Inc()
	}
}

// Start times one attempt of stage; call the func it returns with the attempt's error
// when it ends:
//
//	done := m.Start(metrics.StageCollect)
//	err := collect(ctx, scope)
//	done(err)
func (m *Metrics) Start(stage Stage) func(err error) {
	start := time.Now()
	return func(err error) { m.ObserveReconcile(stage, time.Since(start), err) }
}

// ScopeRead records the read of one scope: its outcome (the scope's status) and the
// calls it took, throttled and denied ones included, by its provider and service.
func (m *Metrics) ScopeRead(sc snapshot.Scope) {
	if m == nil {
		return
	}
	p, svc := provider(Provider(sc.Provider)), m.services.value(sc.Service)
	m.scopeReads.WithLabelValues(p, svc, oneOf(sc.Status, scopeOutcomes()...)).Inc()
	// The cloud counters of a service exist at zero from its first read, as initSeries
	// makes the fixed label sets: the first throttled or denied call is then an increase
	// rate() sees, not the birth of a series, and every metric the alerts query is on
	// /metrics once the service has been read.
	m.cloudCalls.WithLabelValues(p, svc)
	m.cloudThrottled.WithLabelValues(p, svc)
	m.cloudAccessDenied.WithLabelValues(p, svc)
	m.cloudCounts(p, svc, sc.Calls, sc.Throttled, sc.AccessDenied)
}

// CloudCalls records cloud API call attempts made outside a scope read (a remediation's,
// a single resource's read again), as internal/awsapi's and internal/gcpapi's Counters
// count them: calls in all, throttled and denied among them.
func (m *Metrics) CloudCalls(p Provider, service string, calls, throttled, denied int) {
	if m == nil {
		return
	}
	m.cloudCounts(provider(p), m.services.value(service), calls, throttled, denied)
}

func (m *Metrics) cloudCounts(p, svc string, calls, throttled, denied int) {
	// Counter.Add panics on a negative value; a count below zero is no count at all.
	if calls > 0 {
		m.cloudCalls.WithLabelValues(p, svc).Add(float64(calls))
	}
	if throttled > 0 {
		m.cloudThrottled.WithLabelValues(p, svc).Add(float64(throttled))
	}
	if denied > 0 {
		m.cloudAccessDenied.WithLabelValues(p, svc).Add(float64(denied))
	}
}

// FindingOpened records a finding opened, a drift detected, on target (the configured
// target's name, never a scope or resource).
func (m *Metrics) FindingOpened(target string, sev findings.Severity) {
	if m == nil {
		return
	}
	m.findingsOpened.WithLabelValues(m.targets.value(target), severity(sev)).Inc()
}

// FindingResolved records a finding of target resolved after it was open for open.
func (m *Metrics) FindingResolved(target string, sev findings.Severity, open time.Duration) {
	if m == nil {
		return
	}
	s := severity(sev)
	m.findingsResolved.WithLabelValues(m.targets.value(target), s).Inc()
	m.findingTimeToResolve.WithLabelValues(s).Observe(seconds(open))
}

// DriftFixed records a drift fixed and verified d after it was detected.
func (m *Metrics) DriftFixed(d time.Duration) {
	if m == nil {
		return
	}
	m.driftTimeToFix.Observe(seconds(d))
}

// Action records what became of one action of remediator (its action name,
// "aws.iam.deactivate_access_key").
func (m *Metrics) Action(remediator string, o ActionOutcome) {
	if m == nil {
		return
	}
	m.actions.WithLabelValues(m.remediators.value(remediator), oneOf(o, actionOutcomes()...)).Inc()
}

// Rightsizers are the right-sizing fixes whose denials warden_rightsize_denied_total
// counts (reconcile/watch watches them): their series exist at zero, so that the
// alert's increase() sees the first denial.
var Rightsizers = []string{
	"aws.iam.rightsize_inline_policy", "aws.iam.rightsize_managed_policy",
	"aws.iam.replace_managed_attachment", "gcp.iam.apply_role_recommendation",
}

// RightsizeDenied records an access-denied event that matched an applied fix of
// remediator: its principal was refused a permission the fix removed.
func (m *Metrics) RightsizeDenied(remediator string) {
	if m == nil {
		return
	}
	m.rightsizeDenied.WithLabelValues(oneOf(remediator, Rightsizers...)).Inc()
}

// ExportSinks are the places warden_findings_exported_total counts findings sent to
// (package publish): their series exist at zero, so that a ratio of refused to sent
// exists before the first refusal.
var ExportSinks = []string{"securityhub", "scc"}

// FindingsExported records one export run to sink (securityhub or scc): sent findings
// accepted, refused ones refused.
func (m *Metrics) FindingsExported(sink string, sent, refused int) {
	if m == nil {
		return
	}
	s := oneOf(sink, ExportSinks...)
	m.exported.WithLabelValues(s, "sent").Add(float64(sent))
	m.exported.WithLabelValues(s, "refused").Add(float64(refused))
}

// RemediationPartial records a remediation run that applied some of its actions and
// failed the others: the world is between the plan's before and after.
func (m *Metrics) RemediationPartial() {
	if m == nil {
		return
	}
	m.remediationPartial.Inc()
}

// ApprovalDecided records an approval request that ended as o.
func (m *Metrics) ApprovalDecided(o ApprovalOutcome) {
	if m == nil {
		return
	}
	m.approvals.WithLabelValues(oneOf(o, approvalOutcomes()...)).Inc()
}

// Event records a change event received from source and what became of it.
func (m *Metrics) Event(source EventSource, result EventResult) {
	if m == nil {
		return
	}
	m.events.WithLabelValues(oneOf(source, eventSources()...), oneOf(result, eventResults()...)).Inc()
}

// Job records the end of an attempt of a job of kind (River's kind, "collect_scope") as o.
func (m *Metrics) Job(kind string, o JobOutcome) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(m.kinds.value(kind), oneOf(o, jobOutcomes()...)).Inc()
}

// seconds is d in seconds; a negative d (clocks of two replicas apart) is 0.
func seconds(d time.Duration) float64 { return max(d, 0).Seconds() }
