package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

func TestChainOrder(t *testing.T) {
	s, err := New(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	links, err := s.interceptorChain(s.current.Load())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Name)
	}
	want := []string{"guard", "pushback", "metrics", "logging", "auth", "key_limits", "deadline",
		"request_size", "validate", "model_access", "resolve", "attach", "budget", "provider_queue", "drain", "recovery"}
	if !slices.Equal(names, want) {
		t.Errorf("chain %v,\nwant %v", names, want)
	}
	// The admission links run the engine's admission steps in its order,
	// which doors without a chain run with Admission.Admit.
	if i := slices.Index(names, engine.Order[0]); i < 0 || !slices.Equal(names[i:i+len(engine.Order)], engine.Order) {
		t.Errorf("chain %v does not run engine.Order %v in order", names, engine.Order)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	s, err := New(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := s.serveMetrics(lis)
	defer stop()
	s.metrics.RateLimited("rate")

	resp, err := http.Get("http://" + lis.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		// go-grpc-middleware's, pre-registered for every method.
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Generate",grpc_service="llmrelay.v1.LLMService",grpc_type="server_stream"} 0`,
		"grpc_server_handling_seconds_bucket",
		metrics.NameRateLimited + `{limit="rate"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
