package telemetry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
)

// HTTPServerHandler returns h served in each request's server span, made
// by otelhttp as otelgrpc makes a gRPC call's: it continues the trace
// context the request's headers carry (Propagator: W3C traceparent,
// tracestate, baggage), or starts a trace, and is named as the HTTP
// semantic conventions name a server span, the method and the route of
// the request's ServeMux pattern ("POST /v1/chat/completions"; the method
// alone for a request without a pattern), with their http.*, url.*,
// network.*, server.* and client.* attributes. The request h gets holds
// the span in its context, where the engine's spans find their parent and
// the call's attributes (EndCall) their span. The span's status is an
// error for a response status of 500 or more. With tracing off, it
// returns h, at no cost.
func (t *Tracing) HTTPServerHandler(h http.Handler) http.Handler {
	if t == nil {
		return h
	}
	return otelhttp.NewHandler(h, "",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(Propagator),
		// llmrelay's metrics are Prometheus' (internal/metrics).
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
	)
}
