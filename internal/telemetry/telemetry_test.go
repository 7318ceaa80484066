package telemetry_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/warden-sec/warden/internal/telemetry"
	"github.com/warden-sec/warden/internal/telemetry/telemetrytest"
)

// clearEnv unsets the variables Setup and the exporter read, for the test's duration.
func clearEnv(t *testing.T) {
	for _, v := range []string{telemetry.EnvEndpoint, telemetry.EnvTracesEndpoint, telemetry.EnvSDKDisabled,
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_SERVICE_NAME",
		"OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"} {
		t.Setenv(v, "")
	}
}

// Spans made with the provider reach the collector at Endpoint over OTLP/HTTP when the
// provider is shut down: parent and child in one trace, the error recorded, warden's
// name and version in the resource, and the API key of OTEL_EXPORTER_OTLP_HEADERS sent
// to the collector and never logged.
func TestSetup_exportsSpansToTheEndpoint(t *testing.T) {
	clearEnv(t)
	const key = "key-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key="+key)
	rcv := telemetrytest.Start(t)
	var logs telemetrytest.LogBuffer
	ctx := context.Background()
	tp, shutdown, err := telemetry.Setup(ctx, telemetry.Options{Endpoint: rcv.URL(), ServiceVersion: "v1.2.3",
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	tr := tp.Tracer("telemetry_test")
	pctx, parent := tr.Start(ctx, "parent")
	_, child := tr.Start(pctx, "child")
	child.RecordError(errors.New("it broke"))
	child.SetStatus(codes.Error, "it broke")
	child.End()
	parent.End()
	if n := len(rcv.Spans()); n != 0 {
		t.Errorf("%d spans exported before the batch was flushed: the processor should batch", n)
	}
	if err := shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	spans := rcv.Spans()
	if len(spans) != 2 || len(rcv.Refused()) != 0 {
		t.Fatalf("received %+v (refused %v), want the two spans", spans, rcv.Refused())
	}
	p, ok := rcv.ByID(parent.SpanContext().SpanID().String())
	c, ok2 := rcv.ByID(child.SpanContext().SpanID().String())
	if !ok || !ok2 {
		t.Fatalf("spans %+v lack the parent or the child", spans)
	}
	if p.ParentID != "" || c.ParentID != p.SpanID || c.TraceID != p.TraceID || c.TraceID != parent.SpanContext().TraceID().String() {
		t.Errorf("parent %+v, child %+v: want the child under the parent, in one trace", p, c)
	}
	if c.Status != "error" || c.StatusMessage != "it broke" || len(c.Events) != 1 || c.Events[0] != "exception" {
		t.Errorf("child status %s %q events %v: want the error and its exception event", c.Status, c.StatusMessage, c.Events)
	}
	if p.Resource["service.name"] != "warden" || p.Resource["service.version"] != "v1.2.3" || p.Resource["telemetry.sdk.language"] != "go" {
		t.Errorf("resource %v: want service warden v1.2.3 and the SDK's description", p.Resource)
	}
	hs := rcv.Headers()
	if len(hs) == 0 || hs[0].Get("X-Api-Key") != key {
		t.Errorf("the export requests' headers %v lack the key of OTEL_EXPORTER_OTLP_HEADERS", hs)
	}
	if !strings.Contains(logs.String(), `"msg":"traces exported over OTLP/HTTP"`) || !strings.Contains(logs.String(), rcv.URL()+"/v1/traces") {
		t.Errorf("logs %s: want Setup's choice with the traces' URL", logs.String())
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("the logs show the API key: %s", logs.String())
	}
	// Shutting down twice (a deferred call after an explicit one) is harmless.
	if err := shutdown(ctx); err != nil {
		t.Errorf("second shutdown: %v", err)
	}
}

// Without Endpoint, the standard variables say where traces go: OTEL_EXPORTER_OTLP_ENDPOINT
// is a base URL (/v1/traces is added), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT the URL itself,
// and Endpoint wins over both.
func TestSetup_honoursTheStandardVariables(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      func(base string) map[string]string
		endpoint func(base string) string
	}{
		{"base endpoint", func(b string) map[string]string { return map[string]string{telemetry.EnvEndpoint: b} }, nil},
		{"traces endpoint", func(b string) map[string]string {
			return map[string]string{telemetry.EnvTracesEndpoint: b + "/v1/traces", telemetry.EnvEndpoint: "http://127.0.0.1:1"}
		}, nil},
		{"option over variables", func(string) map[string]string {
			return map[string]string{telemetry.EnvTracesEndpoint: "http://127.0.0.1:1/v1/traces"}
		}, func(b string) string { return b + "/v1/traces" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			rcv := telemetrytest.Start(t)
			for k, v := range c.env(rcv.URL()) {
				t.Setenv(k, v)
			}
			o := telemetry.Options{ShutdownTimeout: 10 * time.Second}
			if c.endpoint != nil {
				o.Endpoint = c.endpoint(rcv.URL())
			}
			tp, shutdown, err := telemetry.Setup(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			_, span := tp.Tracer("telemetry_test").Start(context.Background(), "one")
			span.End()
			if err := shutdown(context.Background()); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			if got := rcv.Named("one"); len(got) != 1 || len(rcv.Refused()) != 0 {
				t.Errorf("received %+v, refused %v: want the span at %s/v1/traces", rcv.Spans(), rcv.Refused(), rcv.URL())
			}
		})
	}
}

// No endpoint anywhere, or OTEL_SDK_DISABLED=true: a no-op provider, which records
// nothing and exports nothing, and a shutdown that does nothing.
func TestSetup_noEndpointIsNoExporter(t *testing.T) {
	rcv := telemetrytest.Start(t)
	for name, env := range map[string]map[string]string{
		"no endpoint":  {},
		"sdk disabled": {telemetry.EnvSDKDisabled: "true", telemetry.EnvEndpoint: rcv.URL()},
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range env {
				t.Setenv(k, v)
			}
			endpoint := ""
			if name == "sdk disabled" {
				endpoint = rcv.URL()
			}
			tp, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{Endpoint: endpoint})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tp.(noop.TracerProvider); !ok {
				t.Errorf("provider %T, want the no-op one", tp)
			}
			_, span := tp.Tracer("telemetry_test").Start(context.Background(), "nothing")
			span.End()
			if span.IsRecording() || span.SpanContext().IsValid() {
				t.Errorf("a no-op provider's span records (%v) or has an id (%v)", span.IsRecording(), span.SpanContext())
			}
			if err := shutdown(context.Background()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
	if n := len(rcv.Spans()) + len(rcv.Headers()); n != 0 {
		t.Errorf("%d spans or requests reached the collector with traces off", n)
	}
}

// Sampling is parent-based: with a ratio of 0 a new trace is not recorded, but a span
// whose remote parent was sampled (a caller's traceparent) is, in the caller's trace.
func TestSetup_sampleRatioIsParentBased(t *testing.T) {
	clearEnv(t)
	rcv := telemetrytest.Start(t)
	zero := 0.0
	tp, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{Endpoint: rcv.URL(), SampleRatio: &zero})
	if err != nil {
		t.Fatal(err)
	}
	tr := tp.Tracer("telemetry_test")
	_, root := tr.Start(context.Background(), "root")
	root.End()
	if root.IsRecording() || root.SpanContext().IsSampled() {
		t.Errorf("a new trace was sampled at ratio 0")
	}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	remote := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true}))
	_, child := tr.Start(remote, "child of a sampled caller")
	child.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rcv.Spans()
	if len(got) != 1 || got[0].Name != "child of a sampled caller" || got[0].TraceID != tid.String() || got[0].ParentID != sid.String() {
		t.Errorf("received %+v: want only the sampled caller's child, in its trace", got)
	}
}

// Shutdown flushes within ShutdownTimeout: a collector that never answers does not hold
// the process.
func TestSetup_shutdownIsBounded(t *testing.T) {
	clearEnv(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handler lets go, then Close
	tp, shutdown, err := telemetry.Setup(context.Background(), telemetry.Options{Endpoint: srv.URL, ShutdownTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("telemetry_test").Start(context.Background(), "stuck")
	span.End()
	began := time.Now()
	err = shutdown(context.Background())
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("shutdown took %v, want about the 300ms timeout", took)
	}
	if err == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("shutdown error %v: want the flush's failure, naming the endpoint", err)
	}
}

func TestSetup_refusesBadOptions(t *testing.T) {
	clearEnv(t)
	two := 2.0
	for _, c := range []struct {
		name string
		o    telemetry.Options
		want string
	}{
		{"grpc scheme", telemetry.Options{Endpoint: "grpc://collector:4317"}, "want an http:// or https:// URL"},
		{"no scheme", telemetry.Options{Endpoint: "collector:4318"}, "want an http:// or https:// URL"},
		{"no host", telemetry.Options{Endpoint: "http:///v1/traces"}, "no host"},
		{"credentials", telemetry.Options{Endpoint: "https://user:hunter2@collector:4318"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{"ratio", telemetry.Options{Endpoint: "http://collector:4318", SampleRatio: &two}, "sample ratio 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := telemetry.Setup(context.Background(), c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://collector:4318":            "http://collector:4318",
		"https://otlp.example.com/base/":   "https://otlp.example.com/base/",
		" http://127.0.0.1:4318/v1/traces": "http://127.0.0.1:4318/v1/traces",
	} {
		u, err := telemetry.ParseEndpoint(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseEndpoint(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}
