package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestHTTPServerSpanName: a server span is named after the request's
// method and route, the method alone without a route, and "HTTP" for a
// method the HTTP conventions do not know, whose http.request.method is
// "_OTHER" with the method itself in http.request.method_original.
func TestHTTPServerSpanName(t *testing.T) {
	tests := []struct {
		name, method, route string
		want                string
		wantAttrs           map[attribute.Key]string
	}{
		{"a method and a route", http.MethodPost, "/v1/chat/completions", "POST /v1/chat/completions",
			map[attribute.Key]string{"http.request.method": "POST", "http.route": "/v1/chat/completions"}},
		{"no route: the method alone", http.MethodGet, "", "GET",
			map[attribute.Key]string{"http.request.method": "GET"}},
		{"an unknown method: HTTP", "FOO", "", "HTTP",
			map[attribute.Key]string{"http.request.method": "_OTHER", "http.request.method_original": "FOO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tr := &Tracing{tp: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))}
			t.Cleanup(func() { _ = tr.tp.Shutdown(t.Context()) })
			r, end := tr.StartHTTPServer(httptest.NewRequest(tt.method, "http://relay.test/v1/chat/completions", nil), tt.route)
			if !trace.SpanFromContext(r.Context()).IsRecording() {
				t.Error("the request's context holds no recording span")
			}
			end(http.StatusNotFound)
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			if got := spans[0].Name; got != tt.want {
				t.Errorf("span %q, want %q", got, tt.want)
			}
			got := map[attribute.Key]string{}
			for _, kv := range spans[0].Attributes {
				got[kv.Key] = kv.Value.Emit()
			}
			for k, v := range tt.wantAttrs {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if _, ok := got["http.route"]; ok && tt.route == "" {
				t.Errorf("http.route = %q without a route", got["http.route"])
			}
		})
	}
}
