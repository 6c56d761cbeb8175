// Package telemetry owns llmrelay's OpenTelemetry traces: whether they are
// on (the standard OTEL_* environment variables, read by Setup), the OTLP
// exporter, the gRPC server span (otelgrpc's stats handler), and every
// span llmrelay makes itself with its attributes: one span per attempt
// and per wait between attempts, named and attributed after the
// OpenTelemetry GenAI semantic conventions, plus llmrelay's own attributes
// (attrs.go).
//
// Traces are off unless the environment asks for them, and off costs
// nothing per call: no stats handler is installed, and every span helper
// returns at once, without allocating, when the call's context holds no
// recording span. The same holds for calls a sampler left out.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc/stats"
)

// The standard environment variables Setup reads itself. The exporters
// read the rest of OTEL_EXPORTER_OTLP_* (headers, certificates, timeout,
// compression), the SDK OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_* and the span
// limits, and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
// all from the process environment.
const (
	EnvSDKDisabled        = "OTEL_SDK_DISABLED"
	EnvTracesExporter     = "OTEL_TRACES_EXPORTER"
	EnvEndpoint           = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint     = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol           = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol     = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	ProtocolGRPC          = "grpc"
	ProtocolHTTPProtobuf  = "http/protobuf"
	defaultProtocol       = ProtocolHTTPProtobuf
	defaultServiceName    = "llmrelay"
	instrumentationScope  = "github.com/llmrelay/llmrelay"
	exporterOTLP, expNone = "otlp", "none"
)

// ErrUnsupported is wrapped by Setup's error for a value of a standard
// variable that llmrelay does not support (an exporter other than otlp or
// none, a protocol other than grpc or http/protobuf).
var ErrUnsupported = errors.New("unsupported")

// Options are what Setup needs besides the environment.
type Options struct {
	// ServiceVersion is the service.version resource attribute.
	ServiceVersion string
	// Logger receives the SDK's and exporter's errors (a collector that
	// cannot be reached); nil discards them.
	Logger *slog.Logger
}

// Tracing is llmrelay's tracing when it is on: the tracer provider with
// its OTLP exporter. A nil *Tracing is tracing off; every method works on
// it.
type Tracing struct {
	tp       *sdktrace.TracerProvider
	protocol string
}

// Setup reads the standard OTEL_* variables through getenv and returns the
// tracing they ask for, or nil when they ask for none. Tracing is on when
// OTEL_TRACES_EXPORTER is otlp, or when it is unset and an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set; OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true turn it off.
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks grpc or http/protobuf (the
// default, as the specification says). Nothing connects yet: spans are
// exported in batches once calls make them.
func Setup(ctx context.Context, getenv func(string) string, o Options) (*Tracing, error) {
	on, err := wanted(getenv)
	if err != nil || !on {
		return nil, err
	}
	protocol := strings.TrimSpace(firstSet(getenv, EnvTracesProtocol, EnvProtocol))
	if protocol == "" {
		protocol = defaultProtocol
	}
	var exp sdktrace.SpanExporter
	switch protocol {
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx)
	case ProtocolHTTPProtobuf:
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("%s=%q: %w: use %s or %s", EnvProtocol, protocol, ErrUnsupported, ProtocolGRPC, ProtocolHTTPProtobuf)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", defaultServiceName),
			attribute.String("service.version", o.ServiceVersion),
		),
		// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the above.
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: the resource: %w", err)
	}
	if o.Logger != nil {
		log := o.Logger
		secrets := headerSecrets(getenv)
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "error", redact(err.Error(), secrets)) }))
	}
	return &Tracing{
		tp:       sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)),
		protocol: protocol,
	}, nil
}

// The exporter's headers (a collector's credentials): "k=v,k2=v2", the
// values URL-encoded.
const (
	EnvHeaders       = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
)

// headerSecrets returns the words of 8 characters or more of the
// exporter's header values: a collector's error may quote what it was sent
// ("invalid token: ..."), and the exporter quotes the collector's answer
// in its errors, which are logged.
func headerSecrets(getenv func(string) string) []string {
	var out []string
	for _, env := range []string{EnvHeaders, EnvTracesHeaders} {
		for pair := range strings.SplitSeq(getenv(env), ",") {
			_, v, ok := strings.Cut(pair, "=")
			if !ok {
				continue
			}
			words := strings.Fields(v)
			if u, err := url.QueryUnescape(v); err == nil {
				words = append(words, strings.Fields(u)...)
			}
			for _, w := range words {
				if len(w) >= 8 {
					out = append(out, w)
				}
			}
		}
	}
	return out
}

// redact returns s with each of secrets replaced by "[redacted]".
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// wanted reports whether the environment asks for traces.
func wanted(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return false, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(getenv(EnvTracesExporter))); exp {
	case expNone:
		return false, nil
	case exporterOTLP:
		return true, nil
	case "":
		return firstSet(getenv, EnvTracesEndpoint, EnvEndpoint) != "", nil
	default:
		return false, fmt.Errorf("%s=%q: %w: llmrelay exports traces with %q; %q turns them off", EnvTracesExporter, exp, ErrUnsupported, exporterOTLP, expNone)
	}
}

// firstSet returns the value of the first variable of names that is set.
func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// Enabled reports whether tracing is on.
func (t *Tracing) Enabled() bool { return t != nil }

// Protocol returns the OTLP protocol spans are exported with, "" when off.
func (t *Tracing) Protocol() string {
	if t == nil {
		return ""
	}
	return t.protocol
}

// TracerProvider returns the tracer provider; a no-op one when off.
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if t == nil {
		return tracenoop.NewTracerProvider()
	}
	return t.tp
}

// Propagator is how trace context crosses llmrelay: W3C trace context
// (traceparent, tracestate) and baggage, from clients and to providers.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// UpstreamPropagator is how trace context goes to providers: W3C trace
// context only. Baggage is not forwarded: what a client puts there is for
// its own services, not for a third party.
var UpstreamPropagator propagation.TextMapPropagator = propagation.TraceContext{}

// ServerHandler returns the gRPC stats handler that makes each call's
// server span, continuing the client's trace context; nil when off.
// Health checks get no span.
func (t *Tracing) ServerHandler() stats.Handler {
	if t == nil {
		return nil
	}
	return otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.tp),
		otelgrpc.WithPropagators(Propagator),
		// llmrelay's metrics are Prometheus' (internal/metrics).
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	)
}

// ForceFlush exports every span ended so far.
func (t *Tracing) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// Shutdown exports the spans not yet exported and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}
