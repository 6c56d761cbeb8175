package service_test

import (
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestRequestShapeIsRefusedBeforeTheFirstAttempt: a request that the
// provider's wire format cannot carry (tool-call arguments that are not a
// JSON object, for providers that embed them as objects) fails with
// INVALID_ARGUMENT naming the field before any attempt: nothing reaches the
// upstream, no attempt is counted and no provider error is recorded.
func TestRequestShapeIsRefusedBeforeTheFirstAttempt(t *testing.T) {
	for _, kind := range []string{"anthropic", "gemini"} {
		t.Run(kind, func(t *testing.T) {
			upstream := pt.Replay(t, pt.Reply{Body: []byte("data: {}\n\n")})
			t.Setenv("LLMRELAY_TEST_KEY", "test-key")
			cfg := config.Default()
			cfg.Providers = []provider.Config{{Name: "up", Kind: kind, BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_KEY"}}
			in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
			req := &llmrelayv1.GenerateRequest{
				Model: "up/some-model",
				Messages: []*llmrelayv1.Message{
					{Role: llmrelayv1.Role_ROLE_USER, Content: "weather in Paris?"},
					{Role: llmrelayv1.Role_ROLE_ASSISTANT, ToolCalls: []*llmrelayv1.ToolCall{{Id: "call_1", Name: "get_weather", Arguments: `["Paris"]`}}},
					{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: "call_1", Content: "sunny"},
				},
			}
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if len(events) != 0 {
				t.Errorf("got events %v, want none", events)
			}
			st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
			var br *errdetails.BadRequest
			for _, d := range st.Details() {
				if b, ok := d.(*errdetails.BadRequest); ok {
					br = b
				}
			}
			if v := br.GetFieldViolations(); len(v) != 1 || v[0].GetField() != "messages[1].tool_calls[0].arguments" {
				t.Errorf("BadRequest = %v, want one violation of messages[1].tool_calls[0].arguments", br)
			}
			if _, counted := errorInfo(st).GetMetadata()["attempts"]; counted {
				t.Errorf("ErrorInfo metadata %v counts attempts for a call that made none", errorInfo(st).GetMetadata())
			}
			if n := len(upstream.Requests()); n != 0 {
				t.Errorf("the upstream received %d requests, want none", n)
			}
			m := in.Server.Metrics()
			if got := metricValue(t, m, "llmrelay_provider_errors_total", map[string]string{"provider": "up"}); got != 0 {
				t.Errorf("llmrelay_provider_errors_total = %v, want 0: the provider was never called", got)
			}
			if got := metricValue(t, m, "llmrelay_attempts_per_call", map[string]string{"provider": "up"}); got != 0 {
				t.Errorf("llmrelay_attempts_per_call has %v samples, want none", got)
			}
		})
	}
}

// TestDuplicateToolNamesAreRefused: two of a request's tools with one name
// leave the model's call of that name ambiguous (whose parameters? which
// function runs?), and OpenAI, Anthropic and Gemini each refuse such a
// request after a round trip while the mock ran it. Every kind now gets
// INVALID_ARGUMENT on the second tool's name before any attempt.
func TestDuplicateToolNamesAreRefused(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic", "gemini", "mock"} {
		t.Run(kind, func(t *testing.T) {
			upstream := pt.Replay(t, pt.Reply{Body: []byte("data: {}\n\n")})
			t.Setenv("LLMRELAY_TEST_KEY", "test-key")
			cfg := config.Default()
			cfg.Providers = []provider.Config{{Name: "up", Kind: kind, BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_KEY"}}
			if kind == "mock" {
				cfg.Providers = []provider.Config{{Name: "up", Kind: kind}}
			}
			in := servertest.Start(t, cfg, server.WithRetryTimer(&recordingTimer{}))
			req := &llmrelayv1.GenerateRequest{
				Model:    "up/echo",
				Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "weather in Paris?"}},
				Tools: []*llmrelayv1.Tool{
					{Name: "get_weather", Description: "today's weather"},
					{Name: "get_time"},
					{Name: "get_weather", Description: "the forecast"},
				},
			}
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if len(events) != 0 {
				t.Errorf("got events %v, want none", events)
			}
			st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
			if v := fieldViolations(st); len(v) != 1 || !strings.HasPrefix(v[0], "tools[2].name: ") || !strings.Contains(v[0], "tools[0]") {
				t.Errorf("field violations %q, want one on tools[2].name naming tools[0]", v)
			}
			if n := len(upstream.Requests()); n != 0 {
				t.Errorf("the upstream received %d requests, want none", n)
			}
		})
	}
}
