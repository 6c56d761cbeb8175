package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

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
