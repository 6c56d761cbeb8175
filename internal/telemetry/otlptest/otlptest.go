// Package otlptest is an OpenTelemetry collector's trace receiver for
// tests, in process: it speaks the real OTLP protocol, over gRPC (the
// collector's TraceService, from go.opentelemetry.io/proto/otlp) and over
// HTTP (protobuf POSTs to /v1/traces), on 127.0.0.1, and keeps every span
// it receives.
package otlptest

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Receiver keeps the spans exported to it. Its methods are safe for
// concurrent use.
type Receiver struct {
	collectortrace.UnimplementedTraceServiceServer

	mu      sync.Mutex
	spans   []Span
	arrived chan struct{} // closed and replaced on every export
}

// Span is one received span with its resource's service name.
type Span struct {
	*tracepb.Span
	Service string
}

// TraceID and SpanID return the span's ids in hex, as traceparent writes
// them; ParentID its parent's ("" for a root).
func (s Span) TraceID() string  { return hex.EncodeToString(s.Span.GetTraceId()) }
func (s Span) SpanID() string   { return hex.EncodeToString(s.Span.GetSpanId()) }
func (s Span) ParentID() string { return hex.EncodeToString(s.Span.GetParentSpanId()) }

// Attr returns the value of the span's attribute key, and false when it
// has none.
func (s Span) Attr(key string) (*commonpb.AnyValue, bool) {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue(), true
		}
	}
	return nil, false
}

func newReceiver() *Receiver { return &Receiver{arrived: make(chan struct{})} }

// Export implements the collector's TraceService.
func (r *Receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) add(req *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, Span{Span: sp, Service: service})
			}
		}
	}
	close(r.arrived)
	r.arrived = make(chan struct{})
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Wait waits until the spans received satisfy done, or ctx ends; it
// returns them.
func (r *Receiver) Wait(ctx context.Context, done func([]Span) bool) ([]Span, error) {
	for {
		r.mu.Lock()
		spans, arrived := append([]Span(nil), r.spans...), r.arrived
		r.mu.Unlock()
		if done(spans) {
			return spans, nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return spans, ctx.Err()
		}
	}
}

// StartGRPC starts a receiver of OTLP over gRPC and returns it with its
// endpoint ("http://127.0.0.1:port", as OTEL_EXPORTER_OTLP_ENDPOINT
// takes it; http means without TLS). It stops when the test ends.
func StartGRPC(t testing.TB) (*Receiver, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := newReceiver()
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return r, "http://" + lis.Addr().String()
}

// StartHTTP starts a receiver of OTLP over HTTP with protobuf bodies and
// returns it with its endpoint (the base URL; the exporter appends
// /v1/traces). It stops when the test ends.
func StartHTTP(t testing.TB) (*Receiver, string) {
	t.Helper()
	r := newReceiver()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var export collectortrace.ExportTraceServiceRequest
		if req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &export) != nil {
			http.Error(w, "want an application/x-protobuf ExportTraceServiceRequest", http.StatusBadRequest)
			return
		}
		r.add(&export)
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return r, srv.URL
}
