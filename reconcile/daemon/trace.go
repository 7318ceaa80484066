package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
)

// TracerName is the instrumentation scope of the daemon's spans.
const TracerName = "github.com/warden-sec/warden/reconcile/daemon"

// The attributes of the daemon's spans.
const (
	attrJobID       = attribute.Key("warden.job.id")
	attrJobKind     = attribute.Key("warden.job.kind")
	attrJobAttempt  = attribute.Key("warden.job.attempt")
	attrJobOutcome  = attribute.Key("warden.job.outcome")
	attrTarget      = attribute.Key("warden.target")
	attrScope       = attribute.Key("warden.scope")
	attrUID         = attribute.Key("warden.uid")
	attrAction      = attribute.Key("warden.action")
	attrCorrelation = attribute.Key("warden.correlation")
	attrReason      = attribute.Key("warden.reason")
	attrEvent       = attribute.Key("warden.event")
)

// Stage spans: the steps inside a job, children of its span.
const (
	stageScopes  = "list_scopes" // a sweep lists its target's scopes
	stageCollect = "collect"     // a collection reads its scope
	stageObserve = "observe"     // the read is judged: changed resources evaluated, findings moved on
	stageRefresh = "refresh"     // one resource read again alone and judged
	stagePlan    = "plan"        // a scope's fixes planned
	stageEnqueue = "enqueue"     // jobs inserted; each carries this span as its parent
	stageApply   = "apply"       // one action through the remediation machine
	stageEvent   = "event"       // one body of change events turned into re-reads (metrics only)
)

// Traces of the daemon. Each job's run is a span named after its kind (warden.sweep,
// warden.collect, …), the child of the span that enqueued the job: that span's W3C
// traceparent travels in the job's args (Trace), so a tick's trace holds its sweep,
// the collections it enqueued and the remediations they planned, and an event's trace
// the HTTP request, the refresh and its remediation. Jobs enqueued by River's schedules
// (the sweeps, the checkpoints) start traces of their own. Inside a job each stage
// (collect, observe, plan, enqueue, apply) is a child span.
//
// A retried or snoozed job's next run is another child of the same parent: a trace
// shows every attempt. With a parent-based sampler (telemetry.Setup's) every span of a
// trace follows its root's decision, carried in the traceparent's flags.

// tracedArgs are the args of a job that carry the traceparent of the span enqueuing it.
type tracedArgs interface {
	river.JobArgs
	withTrace(traceparent string) river.JobArgs
}

func (a SweepArgs) withTrace(tp string) river.JobArgs     { a.Trace = tp; return a }
func (a CollectArgs) withTrace(tp string) river.JobArgs   { a.Trace = tp; return a }
func (a RefreshArgs) withTrace(tp string) river.JobArgs   { a.Trace = tp; return a }
func (a RemediateArgs) withTrace(tp string) river.JobArgs { a.Trace = tp; return a }

// tracerOf is the tracer Options give, or a no-op one; on says whether it records.
func tracerOf(t trace.Tracer) (tr trace.Tracer, on bool) {
	switch t.(type) {
	case nil:
		return noop.Tracer{}, false
	case noop.Tracer:
		return t, false
	}
	return t, true
}

// traceparent is the W3C traceparent of ctx's span, or "" when ctx has none (tracing
// off): a job's args then carry nothing more than before.
func traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// withParent is ctx with the remote span a traceparent names as its parent (ctx itself
// when there is none or it is malformed: the job's span then starts a trace).
func withParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// jobLog is the daemon's logger for the lines of one job or request, with args and,
// when its trace is recorded, the trace id, so that its log lines and its spans join (a
// trace sampled out has nothing to join).
func (d *Daemon) jobLog(ctx context.Context, args ...any) *slog.Logger {
	if sc := trace.SpanContextFromContext(ctx); d.tracing && sc.IsValid() && sc.IsSampled() {
		args = append(args, "trace_id", sc.TraceID().String())
	}
	return d.log.With(args...)
}

// failedLog is jobLog for the error handler, which runs outside the job's span: the
// trace id is the one of the parent in the job's args (the job's span is its child).
func (d *Daemon) failedLog(job *rivertype.JobRow) *slog.Logger {
	if !d.tracing {
		return d.log
	}
	var f jobFields
	_ = json.Unmarshal(job.EncodedArgs, &f)
	return d.jobLog(withParent(context.Background(), f.Trace))
}

// stage starts the span of one step of a job.
func (d *Daemon) stage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return d.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// endSpan ends a span, recording err as its error.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// startEnqueue starts the span of one insert of jobs and gives each job's args its
// traceparent, so that each job's run is its child. Without tracing the params are
// returned as they are.
func (d *Daemon) startEnqueue(ctx context.Context, params []river.InsertManyParams) (context.Context, trace.Span, []river.InsertManyParams) {
	if !d.tracing {
		ctx, span := d.tracer.Start(ctx, stageEnqueue)
		return ctx, span, params
	}
	var kinds []string
	for _, p := range params {
		if !slices.Contains(kinds, p.Args.Kind()) {
			kinds = append(kinds, p.Args.Kind())
		}
	}
	ctx, span := d.tracer.Start(ctx, stageEnqueue, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.StringSlice("warden.enqueue.kinds", kinds), attribute.Int("warden.enqueue.jobs", len(params))))
	tp := traceparent(ctx)
	if tp == "" {
		return ctx, span, params
	}
	out := make([]river.InsertManyParams, len(params))
	for i, p := range params {
		if a, ok := p.Args.(tracedArgs); ok {
			p.Args = a.withTrace(tp)
		}
		out[i] = p
	}
	return ctx, span, out
}

// endEnqueue ends an insert's span with what it did.
func endEnqueue(span trace.Span, enqueued, waiting int, err error) {
	span.SetAttributes(attribute.Int("warden.enqueue.enqueued", enqueued), attribute.Int("warden.enqueue.already_queued", waiting))
	endSpan(span, err)
}

// jobFields are the args that say what a job is about, whatever its kind.
type jobFields struct {
	Target      string `json:"target"`
	Scope       string `json:"scope"`
	UID         string `json:"uid"`
	Action      string `json:"action"`
	Reason      string `json:"reason"`
	Event       string `json:"event"`
	Correlation string `json:"correlation"`
	Trace       string `json:"trace"`
}

// jobTracer is the River middleware that makes each job's run a span: named after the
// job's kind, a child of the span its args name, with the job's id, kind, attempt and
// subject as attributes, and its outcome (completed, snoozed, cancelled, failed, or a
// panic) as status.
type jobTracer struct {
	river.MiddlewareDefaults
	d *Daemon
}

var _ rivertype.WorkerMiddleware = (*jobTracer)(nil)

func (m *jobTracer) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) (err error) {
	if !m.d.tracing {
		return doInner(ctx)
	}
	var f jobFields
	_ = json.Unmarshal(job.EncodedArgs, &f) // args it cannot read, the worker refuses
	attrs := []attribute.KeyValue{attrJobID.Int64(job.ID), attrJobKind.String(job.Kind), attrJobAttempt.Int(job.Attempt)}
	for _, kv := range []struct {
		k attribute.Key
		v string
	}{{attrTarget, f.Target}, {attrScope, f.Scope}, {attrUID, f.UID}, {attrAction, f.Action},
		{attrReason, f.Reason}, {attrEvent, f.Event}, {attrCorrelation, f.Correlation}} {
		if kv.v != "" {
			attrs = append(attrs, kv.k.String(kv.v))
		}
	}
	ctx, span := m.d.tracer.Start(withParent(ctx, f.Trace), job.Kind, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
	panicked := true
	defer func() {
		if panicked {
			// River recovers the panic and reports it (HandlePanic); the span says so.
			span.SetAttributes(attrJobOutcome.String("panicked"))
			span.SetStatus(codes.Error, "panic")
			span.End()
			return
		}
		endJob(span, err)
	}()
	err = doInner(ctx)
	panicked = false
	return err
}

// endJob ends a job's span with its outcome. A snooze is not a failure (a fix waiting
// for approval); a cancellation is (the job could not do what it was asked).
func endJob(span trace.Span, err error) {
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	switch {
	case err == nil:
		span.SetAttributes(attrJobOutcome.String("completed"))
	case errors.As(err, &snooze):
		span.SetAttributes(attrJobOutcome.String("snoozed"), attribute.String("warden.job.snooze", snooze.Duration.String()))
	case errors.As(err, &cancel):
		span.SetAttributes(attrJobOutcome.String("cancelled"))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	default:
		span.SetAttributes(attrJobOutcome.String("failed"))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// traceHTTP makes each request to an endpoint a server span named after its route. An
// authorized caller's traceparent header is continued (its trace holds the jobs the
// request enqueued); an unauthorized one's is ignored, so that no one without the token
// grafts spans onto a trace or forces sampling.
func (d *Daemon) traceHTTP(route string, token secret.Value, h http.Handler) http.Handler {
	if !d.tracing {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if authorized(r, token) {
			ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		ctx, span := d.tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route),
				attribute.String("url.path", r.URL.Path)))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r.WithContext(ctx))
		span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
		if sw.status >= 500 {
			// A 4xx is the caller's mistake, not the server's (OpenTelemetry's HTTP conventions).
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
	})
}

// statusWriter remembers the status an endpoint answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// insertOne enqueues one job in an enqueue span; queued is false when one like it was
// waiting or running already.
func (d *Daemon) insertOne(ctx context.Context, args river.JobArgs) (queued bool, err error) {
	ctx, span, params := d.startEnqueue(ctx, []river.InsertManyParams{{Args: args}})
	res, err := d.q.Insert(ctx, params[0].Args, nil)
	if err != nil {
		endEnqueue(span, 0, 0, err)
		return false, err
	}
	if res.UniqueSkippedAsDuplicate {
		endEnqueue(span, 0, 1, nil)
		return false, nil
	}
	endEnqueue(span, 1, 0, nil)
	return true, nil
}

// endCollect ends the span of a scope's read with what the collector reported. A read
// the collector reports failed (access denied, the API down) is an error of this span
// and of the job's, though the job completes: the scope's findings are then unknown,
// which is what an operator looking at the trace wants to see.
func endCollect(ctx context.Context, span trace.Span, scope string, sink *collectors.MemorySink, err error) {
	for _, sc := range sink.Scopes {
		if sc.ID != scope {
			continue
		}
		span.SetAttributes(attribute.String("warden.scope.status", sc.Status), attribute.Int("warden.scope.resources", sc.Resources),
			attribute.Int("warden.scope.calls", sc.Calls), attribute.Int("warden.scope.access_denied", sc.AccessDenied),
			attribute.Int("warden.scope.throttled", sc.Throttled))
		if err == nil && sc.Status == snapshot.ScopeFailed {
			msg := "the scope could not be read: " + sc.Error
			span.SetStatus(codes.Error, msg)
			job := trace.SpanFromContext(ctx)
			job.SetAttributes(attribute.String("warden.scope.status", sc.Status))
			job.SetStatus(codes.Error, msg)
		}
	}
	endSpan(span, err)
}

// endCollectUnchanged ends the span of a read whose replay found its scope unchanged.
func endCollectUnchanged(span trace.Span, calls int) {
	span.SetAttributes(attribute.String("warden.scope.status", snapshot.ScopeOK), attribute.Bool("warden.scope.unchanged", true),
		attribute.Int("warden.scope.calls", calls))
	endSpan(span, nil)
}

// endObserve ends the span of a read's judgement with what moved.
func endObserve(span trace.Span, out *reconcile.Outcome, err error) {
	if out != nil {
		span.SetAttributes(attribute.String("warden.scope.status", out.Status), attribute.Int("warden.observe.resources", out.Resources),
			attribute.Int("warden.observe.evaluated", out.Evaluated), attribute.Bool("warden.observe.full", out.Full),
			attribute.Int("warden.observe.deleted", out.Deleted), attribute.Int("warden.observe.opened", len(out.Opened)),
			attribute.Int("warden.observe.resolved", len(out.Resolved)), attribute.Int("warden.observe.unknown", out.Unknown),
			attribute.Int("warden.observe.eval_errors", len(out.EvalErrors)))
	}
	endSpan(span, err)
}

// endRefresh ends the span of one resource's read and judgement. A resource its reader
// cannot read alone is no failure: its scope is collected instead.
func endRefresh(span trace.Span, out *reconcile.Outcome, err error) {
	if errors.Is(err, collectors.ErrUnsupported) {
		span.SetAttributes(attribute.Bool("warden.refresh.alone", false))
		err = nil
	}
	if out != nil {
		span.SetAttributes(attrScope.String(out.Scope), attribute.Int("warden.observe.deleted", out.Deleted),
			attribute.Int("warden.observe.opened", len(out.Opened)), attribute.Int("warden.observe.resolved", len(out.Resolved)))
	}
	endSpan(span, err)
}

// endApply ends the span of one action's run through the machine with its fate. A pause
// is no failure (the job waits); a fix that failed, or was rolled back when its
// verification failed, is.
func endApply(span trace.Span, action string, res *remediate.Result, err error) {
	if errors.Is(err, remediate.ErrPaused) {
		span.SetAttributes(attribute.Bool("warden.remediation.paused", true))
		err = nil
	}
	if res != nil {
		for _, it := range res.Items {
			if it.Action != action {
				continue
			}
			span.SetAttributes(attribute.String("warden.remediation.remediator", it.Remediator), attribute.String("warden.remediation.state", string(it.State)),
				attribute.String("warden.remediation.risk", it.Risk), attribute.Bool("warden.remediation.wrote", it.Wrote),
				attribute.Bool("warden.remediation.dry_run", res.DryRun))
			if it.Request != "" {
				span.SetAttributes(attribute.String("warden.remediation.request", it.Request))
			}
			if err == nil && (it.State == remediate.StateFailed || it.State == remediate.StateRolledBack) {
				span.SetStatus(codes.Error, string(it.State)+": "+it.Outcome)
			}
		}
	}
	endSpan(span, err)
}
