package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
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
	provider.Register("server-test-panicking", func(provider.Config) (provider.Provider, error) { return panicking{}, nil })
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the JSON log records with the given message.
func (l *lockedBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// TestPanickingCallIsLoggedAndCounted: the recovery link wraps the handler,
// so a call that panics is still seen by the metrics and logging links, as
// INTERNAL, and the server keeps serving.
func TestPanickingCallIsLoggedAndCounted(t *testing.T) {
	logs := &lockedBuffer{}
	cfg := config.Default()
	cfg.Providers = append(config.DefaultProviders(), provider.Config{Name: "buggy", Kind: "server-test-panicking"})
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	req := echoRequest("hi")
	req.Model = "buggy/any"
	_, err := servertest.Collect(t.Context(), in.Client, req)
	if st := status.Convert(err); st.Code() != codes.Internal || strings.Contains(st.Message(), "boom") {
		t.Fatalf("status %v, want INTERNAL without the panic value", st)
	}

	// Counted by the metrics link with its code...
	if got := handledCalls(t, in, "Generate", "Internal"); got != 1 {
		t.Errorf("grpc_server_handled_total{grpc_method=Generate,grpc_code=Internal} = %v, want 1", got)
	}
	// ... and logged by the logging link with its code and reason, after
	// the recovery's own line with the stack.
	finished := logs.records(t, "finished call")
	if len(finished) != 1 || finished[0]["grpc.code"] != "Internal" || finished[0]["reason"] != "INTERNAL" {
		t.Errorf("finish lines %v, want one with grpc.code Internal and reason INTERNAL", finished)
	}
	panics := logs.records(t, "panic in call handler")
	if len(panics) != 1 || panics[0]["panic"] != "boom in an adapter" || panics[0]["request_id"] != finished[0]["request_id"] {
		t.Errorf("panic lines %v, want one with the panic value and the call's request_id", panics)
	}

	if _, err := servertest.Collect(t.Context(), in.Client, echoRequest("still serving")); err != nil {
		t.Fatalf("a call after the panic: %v", err)
	}
}

// handledCalls returns grpc_server_handled_total for a LLMService method
// and code.
func handledCalls(t *testing.T, in *servertest.Instance, method, code string) float64 {
	t.Helper()
	families, err := in.Server.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "grpc_server_handled_total" {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			want := map[string]string{"grpc_method": method, "grpc_code": code, "grpc_service": "llmrelay.v1.LLMService"}
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue samples
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
