package telemetry

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/llmrelay/llmrelay/internal/logtest"
	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestWanted(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    bool
		wantErr bool
	}{
		{"nothing set: off", nil, false, false},
		{"an endpoint: on", map[string]string{EnvEndpoint: "http://127.0.0.1:4318"}, true, false},
		{"a traces endpoint: on", map[string]string{EnvTracesEndpoint: "http://127.0.0.1:4318/v1/traces"}, true, false},
		{"otlp without an endpoint: on (the exporter's default)", map[string]string{EnvTracesExporter: "otlp"}, true, false},
		{"none wins over an endpoint", map[string]string{EnvTracesExporter: "none", EnvEndpoint: "http://x:4318"}, false, false},
		{"the SDK disabled wins", map[string]string{EnvSDKDisabled: "TRUE", EnvTracesExporter: "otlp"}, false, false},
		{"an exporter llmrelay lacks", map[string]string{EnvTracesExporter: "zipkin"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := wanted(func(k string) string { return tt.env[k] })
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("wanted = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
			if tt.wantErr && !errors.Is(err, ErrUnsupported) {
				t.Errorf("error %v does not wrap ErrUnsupported", err)
			}
		})
	}
}

func TestSetupOff(t *testing.T) {
	tr, err := Setup(t.Context(), func(string) string { return "" }, Options{})
	if err != nil || tr != nil {
		t.Fatalf("Setup = %v, %v; want nil, nil", tr, err)
	}
	if tr.Enabled() || tr.ServerHandler() != nil || tr.Protocol() != "" || tr.ForceFlush(t.Context()) != nil || tr.Shutdown(t.Context()) != nil {
		t.Error("a nil Tracing does something")
	}
}

// TestUntracedCallsCostNothing: for a call that is not traced (tracing
// off, or a sampler left it out) the span helpers return at once without
// allocating.
func TestUntracedCallsCostNothing(t *testing.T) {
	ctx := context.Background()
	target := provider.Target{Entry: &provider.Entry{Config: provider.Config{Name: "up", Kind: "openai"}}, Model: "m"}
	req := &provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "hi"}}}
	allocs := testing.AllocsPerRun(100, func() {
		actx, span := StartAttempt(ctx, Attempt{N: 1, Target: target, Request: req, CaptureContent: true})
		AttemptFailed(actx, AttemptFailure{Class: "transport", Retried: true, RetryReason: "TRANSPORT"})
		span.EndAttempt(AttemptEnd{Model: "m", Usage: provider.Usage{InputTokens: 1}})
		w := StartWait(ctx, Wait{Next: 2, Delay: time.Second, Reason: "TRANSPORT"})
		w.EndWait(nil)
		EndCall(ctx, Call{Target: target, Attempts: 2})
		if actx != ctx || span.Recording() || w.Recording() {
			t.Fatal("a span was started for an untraced call")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per untraced call, want 0", allocs)
	}
}

func TestProviderName(t *testing.T) {
	for kind, want := range map[string]string{"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini", "mock": "llmrelay.mock"} {
		if got := ProviderName(kind); got != want {
			t.Errorf("ProviderName(%q) = %q, want %q", kind, got, want)
		}
	}
}

// TestExportErrorsLeaveTheCollectorsCredentialsOut: a collector that
// refuses the exporter's credentials and quotes them in its answer (as
// some gateways do) must not put them in llmrelay's log: the exporter
// quotes the answer's body in its error, which is logged at warn.
func TestExportErrorsLeaveTheCollectorsCredentialsOut(t *testing.T) {
	const secret = "otel-collector-token-5d2a"
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "invalid credentials: "+r.Header.Get("Authorization"))
	}))
	t.Cleanup(collector.Close)
	t.Setenv(EnvEndpoint, collector.URL)
	t.Setenv(EnvProtocol, ProtocolHTTPProtobuf)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20"+secret)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	var logs logtest.Buffer
	tr, err := Setup(t.Context(), os.Getenv, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	defer func() { _ = tr.Shutdown(context.Background()) }()
	_, span := tr.TracerProvider().Tracer("test").Start(t.Context(), "call")
	span.End()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(logs.String(), "msg=tracing") {
		if time.Now().After(deadline) {
			t.Fatalf("no export error logged:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := logs.String(); strings.Contains(s, secret) || !strings.Contains(s, "invalid credentials") {
		t.Fatalf("the log, want the collector's answer without the token:\n%s", s)
	}
}
