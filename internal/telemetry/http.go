package telemetry

import (
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// httpMethods are the methods http.request.method names as they are; any
// other is "_OTHER", with the method in http.request.method_original, and
// the span is named "HTTP" (the HTTP conventions' rules, which keep the
// attribute's values and the span names bounded).
var httpMethods = map[string]bool{
	http.MethodConnect: true, http.MethodDelete: true, http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true,
	http.MethodPatch: true, http.MethodPost: true, http.MethodPut: true, http.MethodTrace: true,
}

// StartHTTPServer starts the server span of a request to the HTTP doors
// (internal/httpapi), as otelgrpc starts a gRPC call's: it continues the
// trace context the request's headers carry (Propagator: W3C traceparent,
// tracestate, baggage), or starts a trace, and is named after the request's
// route as the HTTP semantic conventions name a server span ("POST
// /v1/chat/completions"; the method alone for a path without a route).
// It returns r with the span in its context, where the engine's spans
// find their parent and the call's attributes (EndCall) their span, and
// end, which records the response's status and ends the span: a status of
// 500 or more makes the span's status an error, as the conventions say for
// a server (0: no response was written). With tracing off, it returns r
// and an end that does nothing, at no cost.
//
// It is not otelhttp's handler, which was tried (v0.72.0) and kept every
// attribute and test here, but cost 42 more allocations and 3.3 KB more
// per traced request (BenchmarkDoorChat/traced in internal/server: 663
// allocations, 57.1 KB against 621, 53.8 KB): its httpsnoop wrapper of the
// response writer alone made some 15, and it records its metrics, and
// builds their attribute set, even through a no-op meter provider. It also
// sets client.address from the first X-Forwarded-For entry, which any
// client can write; llmrelay believes that header only from
// auth.trusted_proxies.
func (t *Tracing) StartHTTPServer(r *http.Request, route string) (*http.Request, func(status int)) {
	if t == nil {
		return r, func(int) {}
	}
	ctx := Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	method := r.Method
	attrs := make([]attribute.KeyValue, 0, 10)
	if !httpMethods[method] {
		method = "_OTHER"
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
	}
	name := method
	if name == "_OTHER" {
		name = "HTTP"
	}
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method), semconv.URLPath(r.URL.Path), semconv.URLScheme(scheme(r)),
		semconv.NetworkProtocolVersion(strconv.Itoa(r.ProtoMajor)+"."+strconv.Itoa(r.ProtoMinor)))
	if route != "" {
		name += " " + route
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	if host, port, err := net.SplitHostPort(r.Host); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	} else if r.Host != "" {
		attrs = append(attrs, semconv.ServerAddress(r.Host))
	}
	if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		attrs = append(attrs, semconv.NetworkPeerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.NetworkPeerPort(p))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	ctx, sp := t.tp.Tracer(instrumentationScope).Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return r.WithContext(ctx), func(status int) {
		if status > 0 {
			sp.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if status >= http.StatusInternalServerError {
				sp.SetStatus(codes.Error, "")
			}
		}
		sp.End()
	}
}

// scheme is the request's URL scheme, as its server received it.
func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
