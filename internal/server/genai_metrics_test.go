package server_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// TestGenAIMetricsAndUsagePerKey is the done-when test of the metrics:
// after a call with a named key, Prometheus exposes time to first token,
// duration and token usage with the key's name, the tokens per key and
// model, and their cost at the configured prices; a failed call's duration
// carries its reason. The call's finish log line carries its usage.
func TestGenAIMetricsAndUsagePerKey(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "checkout", SHA256: auth.HashKey(keyFull), Scopes: []string{"generate"}, Models: []string{"*"}}}
	// $2 and $8 per million input and output tokens.
	cfg.Pricing.Models = map[string]usage.Price{"mock/echo": {usage.Input: 2, usage.Output: 8}}
	var logs bytes.Buffer
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))

	ctx := bearer(t.Context(), keyFull)
	if _, err := servertest.Collect(ctx, in.Client, echoRequest("hello brave new world")); err != nil {
		t.Fatal(err)
	}
	failing := withOptions(t, echoRequest("no"), map[string]any{"faults": []any{map[string]any{"status": 400}}})
	if _, err := servertest.Collect(ctx, in.Client, failing); err == nil {
		t.Fatal("the failing call succeeded")
	}

	body := in.Server.Metrics().Text()
	labels := `gen_ai_operation_name="chat",interface="grpc",key="checkout",model="echo",provider="mock",route="",team=""`
	for _, want := range []string{
		metrics.NameTimeToFirstToken + `_count{` + labels + `} 1`,
		metrics.NameRequestDuration + `_count{error_type="",` + labels + `} 1`,
		metrics.NameRequestDuration + `_count{error_type="PROVIDER_REJECTED",` + labels + `} 1`,
		metrics.NameTokenUsage + `_sum{` + labels + `,token_type="input"} 4`,
		metrics.NameTokenUsage + `_sum{` + labels + `,token_type="output"} 4`,
		metrics.NameTokenUsage + `_count{` + labels + `,token_type="output"} 1`,
		metrics.NameTokens + `{` + labels + `,type="input"} 4`,
		metrics.NameTokens + `{` + labels + `,type="output"} 4`,
		// (4 × 2 + 4 × 8) / 1e6
		metrics.NameCost + `{` + labels + `} 4e-05`,
		metrics.NameConfigReloads + `{result="failure"} 0`,
		metrics.NameConfigLastReloadSuccessful + ` 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(body, "gen_ai_", "llmrelay_tokens", "llmrelay_cost"))
	}
	line := grepLines(logs.String(), `msg="finished call"`)
	for _, want := range []string{"key=checkout", "usage.input_tokens=4", "usage.output_tokens=4", "usage.cost=4e-05"} {
		if !strings.Contains(line, want) {
			t.Errorf("the finish line lacks %s:\n%s", want, line)
		}
	}
}

// grepLines returns the lines of s that contain any of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// TestUsageKindsPerKey: the kinds of token that are part of input and
// output (reasoning, cache reads and writes), as a provider reports them,
// reach the per-key token metric and the finish line, and a price of
// their own takes them out of their whole.
func TestUsageKindsPerKey(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "checkout", SHA256: auth.HashKey(keyFull), Scopes: []string{"generate"}, Models: []string{"*"}}}
	cfg.Pricing.Models = map[string]usage.Price{"mock/echo": {usage.Input: 2, usage.Output: 8, "cached_input": 0.5}}
	var logs bytes.Buffer
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))

	req := withOptions(t, echoRequest("hello"), map[string]any{"faults": []any{map[string]any{"usage": map[string]any{
		"input_tokens": 1000, "output_tokens": 500, "reasoning_tokens": 200, "cached_input_tokens": 600, "cache_creation_input_tokens": 100,
	}}}})
	if _, err := servertest.Collect(bearer(t.Context(), keyFull), in.Client, req); err != nil {
		t.Fatal(err)
	}
	body := in.Server.Metrics().Text()
	labels := `gen_ai_operation_name="chat",interface="grpc",key="checkout",model="echo",provider="mock",route="",team=""`
	for kind, n := range map[string]string{"input": "1000", "output": "500", "reasoning": "200", "cached_input": "600", "cache_creation_input": "100"} {
		if want := metrics.NameTokens + `{` + labels + `,type="` + kind + `"} ` + n; !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// (1000 - 600) × 2 + 600 × 0.5 + 500 × 8, per million: the cache
	// writes have no price of their own and stay in the input.
	if want := metrics.NameCost + `{` + labels + `} 0.0051`; !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s:\n%s", want, grepLines(body, metrics.NameCost))
	}
	line := grepLines(logs.String(), `msg="finished call"`)
	for _, want := range []string{"usage.input_tokens=1000", "usage.output_tokens=500", "usage.reasoning_tokens=200",
		"usage.cached_input_tokens=600", "usage.cache_creation_input_tokens=100", "usage.cost=0.0051"} {
		if !strings.Contains(line, want) {
			t.Errorf("the finish line lacks %s:\n%s", want, line)
		}
	}
}

// TestOperationNameSeparatesChatFromEmbeddings: the call metrics carry
// the GenAI conventions' gen_ai.operation.name, so that one key's chat
// and embedding tokens (and their cost) on the same model are separate
// series, by whichever door they came: Generate and the chat completions
// door are "chat", Embed and the embeddings door "embeddings".
func TestOperationNameSeparatesChatFromEmbeddings(t *testing.T) {
	cfg, _ := embedConfig(t)
	in := servertest.Start(t, cfg)
	base := in.HTTP(t)
	ctx := bearer(t.Context(), "app-secret")
	if _, err := servertest.Collect(ctx, in.Client, echoRequest("hello brave new world")); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Client.Embed(ctx, &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"hello world"}}); err != nil {
		t.Fatal(err)
	}
	postJSON(t, base, "/v1/chat/completions", "app-secret", `{"model":"mock/echo","messages":[{"role":"user","content":"one two three"}]}`)
	postJSON(t, base, "/v1/embeddings", "app-secret", `{"model":"mock/echo","input":"one two three four five"}`)

	metricsText := in.Server.Metrics().Text()
	series := func(op, iface string) string {
		return `gen_ai_operation_name="` + op + `",interface="` + iface + `",key="app",model="echo",provider="mock",route="",team=""`
	}
	for _, want := range []string{
		// A token a word; mock/echo costs 2 USD per million input tokens.
		metrics.NameTokens + `{` + series("chat", "grpc") + `,type="input"} 4`,
		metrics.NameTokens + `{` + series("embeddings", "grpc") + `,type="input"} 2`,
		metrics.NameTokens + `{` + series("chat", "openai") + `,type="input"} 3`,
		metrics.NameTokens + `{` + series("embeddings", "openai") + `,type="input"} 5`,
		metrics.NameCost + `{` + series("chat", "grpc") + `} 8e-06`,
		metrics.NameCost + `{` + series("embeddings", "grpc") + `} 4e-06`,
		metrics.NameTokenUsage + `_sum{` + series("embeddings", "grpc") + `,token_type="input"} 2`,
		metrics.NameTokenUsage + `_sum{` + series("chat", "grpc") + `,token_type="input"} 4`,
		metrics.NameTimeToFirstToken + `_count{` + series("chat", "openai") + `} 1`,
		metrics.NameRequestDuration + `_count{error_type="",` + series("chat", "grpc") + `} 1`,
	} {
		if !strings.Contains(metricsText, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(metricsText, "gen_ai_", "llmrelay_tokens", "llmrelay_cost"))
	}
}
