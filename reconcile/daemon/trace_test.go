package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/secret"
	"github.com/warden-sec/warden/internal/telemetry"
	"github.com/warden-sec/warden/internal/telemetry/telemetrytest"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// One daemon traced to an in-process OTLP/HTTP collector, three traces:
//   - the start-up tick: its sweep is the root; one collection per scope is the child of
//     the sweep's enqueue span; each remediation the child of its collection's enqueue;
//     scope, correlation and job attributes on each; the job's log lines carry its trace id;
//   - POST /v1/events announcing a drift, with the caller's traceparent: the caller's
//     span → the request's → refresh → remediation, verified;
//   - POST /v1/reconcile with a caller's traceparent, while the simulator denies
//     ec2:DescribeSecurityGroups: the request's span continues the caller's trace, the
//     sweep and collections follow it, and the collection that could not read its scope
//     has error status (the others not). A caller without the token does not join.
func TestDaemon_tracesFollowTheJobs(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, v := range []string{telemetry.EnvEndpoint, telemetry.EnvTracesEndpoint, telemetry.EnvSDKDisabled, "OTEL_TRACES_SAMPLER"} {
				t.Setenv(v, "")
			}
			ctx := context.Background()
			rcv := telemetrytest.Start(t)
			tp, shutdown, err := telemetry.Setup(ctx, telemetry.Options{Endpoint: rcv.URL(), ServiceVersion: "test"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = shutdown(ctx) })
			var logs telemetrytest.LogBuffer
			const groups = 2
			h := start(t, dsn(t), groups, daemon.Options{Workers: 2, ApprovalPoll: time.Hour,
				Tracer: tp.Tracer(daemon.TracerName), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			h.idle()
			waitFor(t, "the role's fix waiting for approval", func() bool { return h.states()[remediate.StatePending] == 1 })
			scopes, err := h.e.Reader.Scopes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			test := tp.Tracer("trace_test")

			// A drift announced by an event.
			const group = "sg-00000000000000a0"
			arn := "arn:aws:ec2:us-east-1:" + remediatetest.Account + ":security-group/" + group
			verifiedBefore := h.verified(arn)
			if _, err := ec2.NewFromConfig(h.e.SDK).AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{
				GroupId: aws.String(group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
					FromPort: aws.Int32(22), ToPort: aws.Int32(22), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
				t.Fatal(err)
			}
			eventsSrv := httptest.NewServer(h.d.EventsHandler(secret.New(token), daemon.EndpointHooks{}))
			t.Cleanup(eventsSrv.Close)
			ectx, announcer := test.Start(ctx, "EventBridge delivers")
			if status, body := tracedPost(t, ectx, eventsSrv.URL, "Bearer "+token, event(t, group)); status != http.StatusAccepted {
				t.Fatalf("the event: %d %s", status, body)
			}
			announcer.End()
			waitFor(t, "the drift fixed and verified", func() bool { return h.verified(arn) > verifiedBefore })
			h.idle()

			// A sweep asked for over HTTP while one scope cannot be read.
			if err := h.e.Sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Action: "DescribeSecurityGroups", AccessDenied: true}}, nil); err != nil {
				t.Fatal(err)
			}
			reconcileSrv := httptest.NewServer(h.d.ReconcileHandler(secret.New(token)))
			t.Cleanup(reconcileSrv.Close)
			rctx, caller := test.Start(ctx, "caller asks for a sweep")
			status, body := tracedPost(t, rctx, reconcileSrv.URL, "Bearer "+token, `{"target": "aws"}`)
			caller.End()
			var answer struct{ Correlation string }
			if err := json.Unmarshal([]byte(body), &answer); status != http.StatusAccepted || err != nil {
				t.Fatalf("/v1/reconcile: %d %s", status, body)
			}
			fctx, forger := test.Start(ctx, "caller without the token")
			if status, _ := tracedPost(t, fctx, reconcileSrv.URL, "Bearer "+strings.Repeat("x", 48), `{"target": "aws"}`); status != http.StatusUnauthorized {
				t.Errorf("a wrong token: %d, want 401", status)
			}
			forger.End()
			waitFor(t, "the requested sweep", func() bool { return h.count(daemon.KindSweep+"/completed") >= 2 })
			h.idle()
			if err := h.e.Sim.SetFaults(nil, nil); err != nil {
				t.Fatal(err)
			}

			if err := h.stop(); err != nil {
				t.Fatal(err)
			}
			if err := shutdown(ctx); err != nil {
				t.Fatalf("flush the spans: %v", err)
			}
			if bad := rcv.Refused(); len(bad) != 0 {
				t.Fatalf("the collector refused exports: %v", bad)
			}
			all := rcv.Spans()
			for _, s := range all {
				if s.Resource["service.name"] != "warden" || s.Scope == "" {
					t.Fatalf("span %s from %v (%s): want service warden", s.Name, s.Resource, s.Scope)
				}
			}

			// 1. The tick.
			var sweep telemetrytest.Span
			for _, s := range rcv.Named(daemon.KindSweep) {
				if strings.HasPrefix(s.Attrs["warden.correlation"], "tick-aws-") {
					if sweep.SpanID != "" {
						t.Fatalf("two tick sweeps: %+v and %+v", sweep, s)
					}
					sweep = s
				}
			}
			if sweep.SpanID == "" {
				t.Fatalf("no tick sweep among %d spans: %v", len(all), names(all))
			}
			tick, tickCorr := sweep.TraceID, sweep.Attrs["warden.correlation"]
			if sweep.ParentID != "" || sweep.Attrs["warden.target"] != "aws" || sweep.Attrs["warden.job.kind"] != daemon.KindSweep ||
				sweep.Attrs["warden.job.id"] == "" || sweep.Attrs["warden.job.attempt"] != "1" || sweep.Attrs["warden.job.outcome"] != "completed" ||
				sweep.Kind.String() != "SPAN_KIND_CONSUMER" {
				t.Errorf("tick sweep %+v: want a root consumer span with the job's attributes", sweep)
			}
			if ls := childrenOf(all, sweep, "list_scopes"); len(ls) != 1 || ls[0].Attrs["warden.scopes"] != strconv.Itoa(len(scopes)) {
				t.Errorf("the sweep's list_scopes %+v: want one, with %d scopes", ls, len(scopes))
			}
			enq := childrenOf(all, sweep, "enqueue")
			if len(enq) != 1 || enq[0].Attrs["warden.enqueue.enqueued"] != strconv.Itoa(len(scopes)) || enq[0].Kind.String() != "SPAN_KIND_PRODUCER" {
				t.Fatalf("the sweep's enqueue spans %+v: want one producer enqueuing %d collections", enq, len(scopes))
			}
			collects := withCorrelation(rcv.Named(daemon.KindCollect), tickCorr)
			if len(collects) != len(scopes) {
				t.Errorf("%d collections of the tick traced, want one per scope (%d)", len(collects), len(scopes))
			}
			var seen []string
			for _, c := range collects {
				seen = append(seen, c.Attrs["warden.scope"])
				if c.TraceID != tick || c.ParentID != enq[0].SpanID {
					t.Errorf("collection of %s in trace %s under %s: want trace %s under the sweep's enqueue %s", c.Attrs["warden.scope"], c.TraceID, c.ParentID, tick, enq[0].SpanID)
				}
				if c.Attrs["warden.target"] != "aws" || c.Attrs["warden.reason"] != "schedule" || c.Attrs["warden.job.outcome"] != "completed" || c.Status != "unset" {
					t.Errorf("collection %+v: want target aws, reason schedule, completed", c)
				}
				for _, stage := range []string{"collect", "observe", "plan"} {
					if got := childrenOf(all, c, stage); len(got) != 1 || got[0].Attrs["warden.scope"] != c.Attrs["warden.scope"] {
						t.Errorf("collection of %s: %d %s stages %+v, want one for its scope", c.Attrs["warden.scope"], len(got), stage, got)
					}
				}
			}
			for _, sc := range scopes {
				if !slices.Contains(seen, sc.ID) {
					t.Errorf("no traced collection of scope %s (traced: %v)", sc.ID, seen)
				}
			}
			remediations := withCorrelation(rcv.Named(daemon.KindRemediate), tickCorr)
			if len(remediations) < groups+1 {
				t.Errorf("%d remediations of the tick traced, want at least %d (the groups and the role)", len(remediations), groups+1)
			}
			for _, r := range remediations {
				parent, ok := rcv.ByID(r.ParentID)
				grand, ok2 := rcv.ByID(parent.ParentID)
				if !ok || !ok2 || r.TraceID != tick || parent.Name != "enqueue" || grand.Name != daemon.KindCollect || grand.TraceID != tick ||
					grand.Attrs["warden.scope"] != r.Attrs["warden.scope"] {
					t.Errorf("remediation %s (trace %s) under %s under %s (%s): want tick %s, under the enqueue of its scope's collection",
						r.Attrs["warden.action"], r.TraceID, parent.Name, grand.Name, grand.Attrs["warden.scope"], tick)
				}
				if r.Attrs["warden.action"] == "" {
					t.Errorf("remediation %+v without its action", r)
				}
				apply := childrenOf(all, r, "apply")
				if len(apply) != 1 || apply[0].Attrs["warden.remediation.state"] == "" || apply[0].Attrs["warden.action"] != r.Attrs["warden.action"] {
					t.Errorf("remediation %s's apply stages %+v: want one with the action's state", r.Attrs["warden.action"], apply)
				}
			}
			states := map[string]int{}
			for _, r := range remediations {
				for _, a := range childrenOf(all, r, "apply") {
					states[a.Attrs["warden.remediation.state"]]++
				}
				if r.Attrs["warden.job.outcome"] == "snoozed" && r.Status != "unset" {
					t.Errorf("a snoozed remediation has status %s: waiting for approval is no failure", r.Status)
				}
			}
			if states[string(remediate.StateVerified)] < groups || states[string(remediate.StatePending)] != 1 {
				t.Errorf("the tick's remediations ended %v: want the groups verified and the role waiting", states)
			}
			t.Logf("%d spans; the tick's trace: %d collections, %d remediations %v", len(all), len(collects), len(remediations), states)
			// Logs and traces join: the job's lines carry its trace id.
			joined := 0
			for _, l := range logLines(t, logs.String()) {
				if l["msg"] == "scope reconciled" && l["correlation"] == tickCorr {
					joined++
					if l["trace_id"] != tick {
						t.Errorf("log line %v: trace_id %v, want %s", l, l["trace_id"], tick)
					}
				}
			}
			if joined != len(scopes) {
				t.Errorf("%d 'scope reconciled' lines of the tick, want %d", joined, len(scopes))
			}

			// 2. The request, and the collection that failed.
			callerTrace := caller.SpanContext().TraceID().String()
			req := childrenOf(all, telemetrytest.Span{SpanID: caller.SpanContext().SpanID().String(), TraceID: callerTrace}, "POST /v1/reconcile")
			if len(req) != 1 || req[0].Attrs["http.response.status_code"] != "202" || req[0].Kind.String() != "SPAN_KIND_SERVER" {
				t.Fatalf("request spans under the caller's: %+v; want one server span answering 202", req)
			}
			reqEnq := childrenOf(all, req[0], "enqueue")
			if len(reqEnq) != 1 {
				t.Fatalf("the request's enqueue spans: %+v", reqEnq)
			}
			swept := childrenOf(all, reqEnq[0], daemon.KindSweep)
			if len(swept) != 1 || swept[0].Attrs["warden.correlation"] != answer.Correlation {
				t.Fatalf("the requested sweep's spans %+v: want one with correlation %s", swept, answer.Correlation)
			}
			reqCollects := withCorrelation(rcv.Named(daemon.KindCollect), answer.Correlation)
			if len(reqCollects) != len(scopes) {
				t.Errorf("%d collections of the requested sweep traced, want %d", len(reqCollects), len(scopes))
			}
			ec2Scope := "aws/" + remediatetest.Account + "/ec2/us-east-1"
			for _, c := range reqCollects {
				if c.TraceID != callerTrace {
					t.Errorf("collection of %s in trace %s, want the caller's %s", c.Attrs["warden.scope"], c.TraceID, callerTrace)
				}
				read := childrenOf(all, c, "collect")
				if len(read) != 1 {
					t.Errorf("collection of %s: read stages %+v", c.Attrs["warden.scope"], read)
					continue
				}
				if c.Attrs["warden.scope"] == ec2Scope {
					if c.Status != "error" || !strings.Contains(c.StatusMessage, "could not be read") || read[0].Status != "error" ||
						read[0].Attrs["warden.scope.status"] != "failed" || read[0].Attrs["warden.scope.access_denied"] == "0" {
						t.Errorf("the denied collection %+v, its read %+v: want error status, the scope failed and denied", c, read[0])
					}
				} else if c.Status != "unset" || read[0].Status != "unset" {
					t.Errorf("collection of %s has status %s (read %s), want none", c.Attrs["warden.scope"], c.Status, read[0].Status)
				}
			}
			forgerTrace := forger.SpanContext().TraceID().String()
			for _, s := range rcv.Named("POST /v1/reconcile") {
				if s.TraceID == forgerTrace {
					t.Errorf("a caller without the token joined its trace: %+v", s)
				}
			}
			if n := len(rcv.Named("POST /v1/reconcile")); n != 2 {
				t.Errorf("%d request spans, want the accepted one and the refused one", n)
			}

			// 3. The event.
			eventReq := childrenOf(all, telemetrytest.Span{SpanID: announcer.SpanContext().SpanID().String(), TraceID: announcer.SpanContext().TraceID().String()}, "POST /v1/events")
			if len(eventReq) != 1 || eventReq[0].Attrs["http.response.status_code"] != "202" {
				t.Fatalf("event request spans: %+v", eventReq)
			}
			var refresh []telemetrytest.Span
			for _, e := range childrenOf(all, eventReq[0], "enqueue") {
				refresh = append(refresh, childrenOf(all, e, daemon.KindRefresh)...)
			}
			if len(refresh) != 1 || refresh[0].Attrs["warden.uid"] != arn || refresh[0].Attrs["warden.event"] == "" {
				t.Fatalf("refreshes under the event's request: %+v; want one of %s", refresh, arn)
			}
			if got := childrenOf(all, refresh[0], "refresh"); len(got) != 1 || got[0].Status != "unset" {
				t.Errorf("the refresh's read: %+v", got)
			}
			var fixed bool
			for _, e := range childrenOf(all, refresh[0], "enqueue") {
				for _, r := range childrenOf(all, e, daemon.KindRemediate) {
					for _, a := range childrenOf(all, r, "apply") {
						if a.Attrs["warden.remediation.state"] == string(remediate.StateVerified) && r.TraceID == announcer.SpanContext().TraceID().String() {
							fixed = true
						}
					}
				}
			}
			if !fixed {
				t.Errorf("no verified remediation under the event's refresh; spans of its trace: %v", names(inTrace(all, refresh[0].TraceID)))
			}
		})
	}
}

// The traceparent in a job's args is not part of its unique key: the same work asked
// for by two traces is one job, while the unique fields still tell jobs apart.
func TestDaemon_traceIsNotPartOfTheUniqueKey(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	drv := riversqlite.New(db)
	m, err := rivermigrate.New(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatal(err)
	}
	client, err := river.NewClient(drv, &river.Config{}) // insert-only: nothing is worked
	if err != nil {
		t.Fatal(err)
	}
	const (
		trace1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		trace2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	for _, c := range []struct {
		name          string
		first, second river.JobArgs // the same but for the trace
		other         river.JobArgs // another unique key
	}{
		{"sweep", daemon.SweepArgs{Target: "aws", Correlation: "a", Trace: trace1}, daemon.SweepArgs{Target: "aws", Correlation: "b", Trace: trace2},
			daemon.SweepArgs{Target: "gcp", Trace: trace1}},
		{"collect", daemon.CollectArgs{Target: "aws", Scope: "aws/1/iam", Trace: trace1}, daemon.CollectArgs{Target: "aws", Scope: "aws/1/iam", Trace: trace2},
			daemon.CollectArgs{Target: "aws", Scope: "aws/2/iam", Trace: trace1}},
		{"refresh", daemon.RefreshArgs{Target: "aws", UID: "arn:x", Source: "e1", Trace: trace1}, daemon.RefreshArgs{Target: "aws", UID: "arn:x", Source: "e1", Trace: trace2},
			daemon.RefreshArgs{Target: "aws", UID: "arn:x", Source: "e2", Trace: trace1}},
		{"remediate", daemon.RemediateArgs{Action: "act-1", Plan: &remediate.Plan{}, Trace: trace1}, daemon.RemediateArgs{Action: "act-1", Plan: &remediate.Plan{}, Trace: trace2},
			daemon.RemediateArgs{Action: "act-2", Plan: &remediate.Plan{}, Trace: trace1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, want := range []struct {
				args    river.JobArgs
				skipped bool
			}{{c.first, false}, {c.second, true}, {c.other, false}} {
				res, err := client.Insert(ctx, want.args, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.UniqueSkippedAsDuplicate != want.skipped {
					t.Errorf("insert %d (%+v): skipped as a duplicate %v, want %v", i, want.args, res.UniqueSkippedAsDuplicate, want.skipped)
				}
			}
		})
	}
}

// tracedPost posts body with the traceparent of ctx's span, and returns the answer.
func tracedPost(t *testing.T, ctx context.Context, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	if req.Header.Get("traceparent") == "" || !trace.SpanContextFromContext(ctx).IsSampled() {
		t.Fatal("the test's span is not sampled: no traceparent to send")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// childrenOf are the spans named name whose parent is parent, in parent's trace.
func childrenOf(all []telemetrytest.Span, parent telemetrytest.Span, name string) []telemetrytest.Span {
	var out []telemetrytest.Span
	for _, s := range all {
		if s.ParentID == parent.SpanID && s.TraceID == parent.TraceID && s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func withCorrelation(spans []telemetrytest.Span, correlation string) []telemetrytest.Span {
	var out []telemetrytest.Span
	for _, s := range spans {
		if s.Attrs["warden.correlation"] == correlation {
			out = append(out, s)
		}
	}
	return out
}

func inTrace(all []telemetrytest.Span, traceID string) []telemetrytest.Span {
	var out []telemetrytest.Span
	for _, s := range all {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

func names(spans []telemetrytest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name+"/"+s.Attrs["warden.scope"]+s.Attrs["warden.action"])
	}
	return out
}

// logLines decodes JSON log lines.
func logLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}
