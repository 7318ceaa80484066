// Package telemetry sets up warden's OpenTelemetry traces: spans batched and exported
// over OTLP/HTTP (protobuf) to a collector when one is configured, and a no-op provider,
// which records nothing and costs nothing, when none is.
//
// The exporter is the SDK's own, so the standard OTEL_EXPORTER_OTLP_* variables apply:
// headers (OTEL_EXPORTER_OTLP_HEADERS, …_TRACES_HEADERS, which usually carry the
// collector's API key and are never logged), certificates, compression, timeout. Only
// OTLP over HTTP is spoken: no gRPC exporter is linked in.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The standard variables Setup reads itself (the exporter reads the others).
const (
	// EnvEndpoint is a base URL: traces go to its path + /v1/traces.
	EnvEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// EnvTracesEndpoint is the traces' URL, used as it is; it wins over EnvEndpoint.
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	// EnvSDKDisabled set to "true" turns traces off whatever else is configured.
	EnvSDKDisabled = "OTEL_SDK_DISABLED"
)

// Defaults of Options.
const (
	DefaultServiceName     = "warden"
	DefaultShutdownTimeout = 5 * time.Second
	// TracesPath is where an OTLP/HTTP collector takes traces, below its base URL.
	TracesPath = "/v1/traces"
)

// Options configure Setup.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP base URL (http://collector:4318): traces are
	// posted to its path + /v1/traces, unless the path already ends so. http:// sends in
	// clear text, https:// over TLS. Empty: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
	// $OTEL_EXPORTER_OTLP_ENDPOINT, else no traces.
	Endpoint string
	// ServiceName and ServiceVersion name the process in every span's resource
	// (default "warden"); $OTEL_SERVICE_NAME and $OTEL_RESOURCE_ATTRIBUTES override them.
	ServiceName, ServiceVersion string
	// SampleRatio is the share of new traces recorded, between 0 and 1. Sampling is
	// parent-based: a span whose parent (a caller's traceparent, the job that enqueued
	// it) was recorded is recorded, one whose parent was not is not, so a trace is whole
	// or absent. Nil: the SDK's default, every trace (or $OTEL_TRACES_SAMPLER's choice).
	SampleRatio *float64
	// ShutdownTimeout bounds the flush of the spans still batched when the provider is
	// shut down (default DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// Logger hears what Setup chose and the exporter's failures (default: discarded).
	Logger *slog.Logger
}

// Setup builds the tracer provider Options describe, and the function that flushes and
// stops it (call it once, when the process ends; it is bounded by ShutdownTimeout).
// Without an endpoint, or with $OTEL_SDK_DISABLED=true, the provider is a no-op one and
// shutdown does nothing.
//
// The exporter's failures (a collector down, a refused batch) are logged as warnings:
// the SDK reports them through OpenTelemetry's process-wide error handler, which Setup
// points at Options.Logger. Spans that cannot be sent are dropped; nothing waits on them.
func Setup(ctx context.Context, o Options) (trace.TracerProvider, func(context.Context) error, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	off := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvSDKDisabled)), "true") {
		log.Info("traces off: " + EnvSDKDisabled + " is true")
		return noop.NewTracerProvider(), off, nil
	}
	if o.SampleRatio != nil && !(*o.SampleRatio >= 0 && *o.SampleRatio <= 1) {
		return nil, nil, fmt.Errorf("set up traces: sample ratio %v: want a share between 0 and 1", *o.SampleRatio)
	}
	var opts []otlptracehttp.Option
	var shown string // the URL traces go to, for the logs: no credentials, no query
	switch {
	case o.Endpoint != "":
		u, err := ParseEndpoint(o.Endpoint)
		if err != nil {
			return nil, nil, fmt.Errorf("set up traces: %w", err)
		}
		u.Path = tracesPath(u.Path)
		// WithEndpointURL takes the scheme (http: no TLS), the host and the path as they
		// are; the variables' headers, certificates and timeout still apply.
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		shown = u.String()
	case strings.TrimSpace(os.Getenv(EnvTracesEndpoint)) != "":
		shown = redact(os.Getenv(EnvTracesEndpoint), false)
	case strings.TrimSpace(os.Getenv(EnvEndpoint)) != "":
		shown = redact(os.Getenv(EnvEndpoint), true)
	default:
		return noop.NewTracerProvider(), off, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(v); p == "grpc" {
			log.Warn("traces: warden exports OTLP over HTTP only: "+v+"=grpc is not honoured (point the endpoint at the collector's HTTP port, 4318)", "endpoint", shown)
			break
		}
	}
	// With no explicit endpoint the exporter reads the variables itself (the URL, and
	// whether it is http or https).
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("set up traces: the OTLP/HTTP exporter for %s: %w", shown, err)
	}
	name := o.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	if o.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(o.ServiceVersion))
	}
	// The variables come last, so that an operator's OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES win over warden's own names.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithHost(), resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, nil, fmt.Errorf("set up traces: describe the process: %w", err)
	}
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: the rest of the resource is kept.
		log.Warn("traces: part of the process description is unusable", "err", err)
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	ratio := "default"
	if o.SampleRatio != nil {
		tpOpts = append(tpOpts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*o.SampleRatio))))
		ratio = fmt.Sprint(*o.SampleRatio)
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("traces: export failed: spans dropped", "endpoint", shown, "err", err)
	}))
	log.Info("traces exported over OTLP/HTTP", "endpoint", shown, "service", name, "sample_ratio", ratio)
	timeout := o.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	shutdown := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("flush the last traces to %s: %w", shown, err)
		}
		return nil
	}
	return tp, shutdown, nil
}

// ParseEndpoint checks an OTLP/HTTP endpoint as daemon.otlp_endpoint takes it: an
// http:// or https:// URL with a host, and no user or password in it (a collector's
// credentials go in OTEL_EXPORTER_OTLP_HEADERS, which is never logged).
func ParseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		// Not the text itself: it may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("endpoint: not a URL: %v", err)
	}
	shown := u.Redacted()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("endpoint %q: want an http:// or https:// URL (OTLP over HTTP, e.g. http://collector:4318)", shown)
	case u.Host == "":
		return nil, fmt.Errorf("endpoint %q: no host", shown)
	case u.User != nil:
		return nil, fmt.Errorf("endpoint %q: a user or password in the URL: put the collector's credentials in OTEL_EXPORTER_OTLP_HEADERS", shown)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("endpoint %q: a query or fragment has no place in it", shown)
	}
	return u, nil
}

// tracesPath is the path traces are posted to below a base URL's path.
func tracesPath(p string) string {
	p = strings.TrimRight(p, "/")
	if strings.HasSuffix(p, TracesPath) {
		return p
	}
	return p + TracesPath
}

// redact is an endpoint variable's URL fit for the logs: without user, password or
// query, and with /v1/traces added to a base URL.
func redact(s string, base bool) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	if base {
		u.Path = strings.TrimRight(u.Path, "/") + TracesPath
	}
	return u.String()
}
