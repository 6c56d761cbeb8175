package service_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// panicking is a provider kind whose every attempt panics: a bug in an
// adapter, on the handler's goroutine.
type panicking struct{}

func (panicking) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	panic("boom in an adapter")
}

func init() {
	provider.Register("service-test-panicking", func(provider.Config) (provider.Provider, error) { return panicking{}, nil })
}

// TestPanickingCallIsLoggedAndCounted: the recovery link wraps the handler,
// so a call that panics is still seen by the metrics and logging links, as
// INTERNAL, and the server keeps serving.
func TestPanickingCallIsLoggedAndCounted(t *testing.T) {
	logs := &syncBuffer{}
	cfg := config.Default()
	cfg.Providers = append(config.DefaultProviders(), provider.Config{Name: "buggy", Kind: "service-test-panicking"})
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	req := echo(t, "hi", "", nil)
	req.Model = "buggy/any"
	_, err := servertest.Collect(t.Context(), in.Client, req)
	if st := status.Convert(err); st.Code() != codes.Internal || strings.Contains(st.Message(), "boom") {
		t.Fatalf("status %v, want INTERNAL without the panic value", st)
	}

	// Counted by the metrics link with its code...
	handled := map[string]string{"grpc_service": "llmrelay.v1.LLMService", "grpc_method": "Generate", "grpc_code": "Internal"}
	if got := metricValue(t, in.Server.Metrics(), "grpc_server_handled_total", handled); got != 1 {
		t.Errorf("grpc_server_handled_total%v = %v, want 1", handled, got)
	}
	// ... and logged by the logging link with its code and reason, besides
	// the recovery's own line with the stack.
	finished := logs.records(t, "finished call")
	if len(finished) != 1 || finished[0]["grpc.code"] != "Internal" || finished[0]["reason"] != "INTERNAL" {
		t.Errorf("finish lines %v, want one with grpc.code Internal and reason INTERNAL", finished)
	}
	panics := logs.records(t, "panic in call handler")
	if len(panics) != 1 || panics[0]["panic"] != "boom in an adapter" || panics[0]["request_id"] != finished[0]["request_id"] {
		t.Errorf("panic lines %v, want one with the panic value and the call's request_id", panics)
	}

	if _, err := servertest.Collect(t.Context(), in.Client, echo(t, "still serving", "", nil)); err != nil {
		t.Fatalf("a call after the panic: %v", err)
	}
}
