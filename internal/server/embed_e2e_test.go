package server_test

import (
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/mock"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// embedConfig is a config with the admin key, the mock provider, a mock
// that answers every request 503 (down), an anthropic provider on a
// loopback upstream that counts its requests, a route that falls back
// from down to mock, one from mock to claude, and keys: app (generate),
// indexer (embed), lister (models.list), tiny (embed, a budget of 1
// token), all on mock/echo priced at 2 USD per million input tokens.
func embedConfig(t *testing.T) (*config.Config, *atomic.Int64) {
	t.Helper()
	var upstream atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		upstream.Add(1)
		http.Error(w, "{}", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("EMBED_TEST_ANTHROPIC_KEY", "k")
	cfg := governanceConfig(nil, "")
	cfg.Providers = append(cfg.Providers,
		provider.Config{Name: "down", Kind: "mock", Options: map[string]any{"fault": map[string]any{"status": 503}}},
		provider.Config{Name: "claude", Kind: "anthropic", BaseURL: srv.URL, APIKeyEnv: "EMBED_TEST_ANTHROPIC_KEY", Models: []string{"claude-x"}})
	cfg.Routes = []route.Config{
		{Name: "search", Targets: []route.TargetConfig{{Model: "down/echo"}, {Model: "mock/echo"}}},
		{Name: "mixed", Targets: []route.TargetConfig{{Model: "mock/echo"}, {Model: "claude/claude-x"}}},
	}
	cfg.Retry.InitialBackoff, cfg.Retry.MaxBackoff = time.Millisecond, time.Millisecond
	cfg.Pricing.Models = map[string]usage.Price{"mock/echo": {"input": 2, "output": 0}}
	key := func(name string, scopes ...string) config.APIKey {
		return config.APIKey{Name: name, SHA256: auth.HashKey(name + "-secret"), Scopes: scopes, Models: []string{"*"}}
	}
	tiny := key("tiny", "embed")
	tiny.Budgets = []spend.Budget{{Window: spend.Day, MaxTokens: 1}}
	cfg.Auth.Keys = append(cfg.Auth.Keys, key("app", "generate"), key("indexer", "embed"), config.APIKey{
		Name: "lister", SHA256: auth.HashKey("lister-secret"), Scopes: []string{"models.list"}}, tiny)
	return cfg, &upstream
}

// TestEmbed: an Embed call through the production chain returns one unit
// vector per input, in order, of the dimensions asked for, the same for
// the same text, with the mock's usage; a key with the embed scope may
// embed but not generate, one with generate may embed, one with neither
// is refused.
func TestEmbed(t *testing.T) {
	cfg, _ := embedConfig(t)
	in := servertest.Start(t, cfg)
	dims := uint32(16)
	req := &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"the cat sat", "a dog", "the cat sat"}, Dimensions: &dims}
	for _, key := range []string{"indexer-secret", "app-secret"} {
		resp, err := in.Client.Embed(bearer(t.Context(), key), req)
		if err != nil {
			t.Fatalf("Embed with %s: %v", key, err)
		}
		if len(resp.GetEmbeddings()) != 3 || resp.GetProvider() != "mock" || resp.GetModel() != "echo" || resp.GetAttempts() != 1 {
			t.Fatalf("Embed: %d embeddings from %s/%s after %d attempts", len(resp.GetEmbeddings()), resp.GetProvider(), resp.GetModel(), resp.GetAttempts())
		}
		if got := resp.GetUsage().GetInputTokens(); got != 8 {
			t.Errorf("usage.input_tokens = %d, want 8 (a token a word)", got)
		}
		for i, e := range resp.GetEmbeddings() {
			var sum float64
			for _, v := range e.GetValues() {
				sum += float64(v) * float64(v)
			}
			if len(e.GetValues()) != 16 || math.Abs(sum-1) > 1e-5 {
				t.Errorf("embeddings[%d]: %d values of norm² %v, want 16 of unit length", i, len(e.GetValues()), sum)
			}
		}
		want := mock.Vector("a dog", 16)
		for j, v := range resp.GetEmbeddings()[1].GetValues() {
			if v != want[j] {
				t.Fatalf("embeddings[1] is not the vector of inputs[1]")
			}
		}
		if e := resp.GetEmbeddings(); e[0].GetValues()[0] != e[2].GetValues()[0] || e[0].GetValues()[0] == e[1].GetValues()[0] {
			t.Errorf("the same text gave different vectors, or different texts the same")
		}
	}
	_, err := in.Client.Embed(bearer(t.Context(), "lister-secret"), req)
	if code, info, _ := errorInfo(err); code != codes.PermissionDenied || info.GetReason() != "SCOPE_MISSING" || info.GetMetadata()["scope"] != "embed,generate" {
		t.Errorf("Embed with a models.list key: %v, want PERMISSION_DENIED SCOPE_MISSING naming embed and generate", err)
	}
	_, err = generate(t.Context(), in, "indexer-secret", echoRequest("hi"))
	if code, info, _ := errorInfo(err); code != codes.PermissionDenied || info.GetReason() != "SCOPE_MISSING" {
		t.Errorf("Generate with an embed key: %v, want PERMISSION_DENIED SCOPE_MISSING", err)
	}
}

// TestEmbedRefusals: a request that breaks the contract's rules is
// INVALID_ARGUMENT with the field named; a route with a target that
// cannot embed is FAILED_PRECONDITION EMBEDDINGS_NOT_SUPPORTED before any
// upstream request.
func TestEmbedRefusals(t *testing.T) {
	cfg, upstream := embedConfig(t)
	in := servertest.Start(t, cfg)
	zero := uint32(0)
	for _, tt := range []struct {
		name  string
		req   *llmrelayv1.EmbedRequest
		field string
	}{
		{"no inputs", &llmrelayv1.EmbedRequest{Model: "mock/echo"}, "inputs"},
		{"an empty input", &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"a", ""}}, "inputs[1]"},
		{"too many inputs", &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: make([]string, 2049)}, "inputs"},
		{"zero dimensions", &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"a"}, Dimensions: &zero}, "dimensions"},
		{"no model", &llmrelayv1.EmbedRequest{Inputs: []string{"a"}}, "model"},
		{"a request id that is not a UUID", &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"a"}, RequestId: "x"}, "request_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "too many inputs" {
				for i := range tt.req.Inputs {
					tt.req.Inputs[i] = "x"
				}
			}
			_, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), tt.req)
			st := wantError(t, err, codes.InvalidArgument, "INVALID_REQUEST")
			if f := detail[*errdetails.BadRequest](st).GetFieldViolations(); len(f) == 0 || f[0].GetField() != tt.field {
				t.Errorf("field violation on %q, want %q", f, tt.field)
			}
		})
	}
	_, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "mixed", Inputs: []string{"a"}})
	code, info, _ := errorInfo(err)
	if code != codes.FailedPrecondition || info.GetReason() != "EMBEDDINGS_NOT_SUPPORTED" || info.GetMetadata()["provider"] != "claude" || info.GetMetadata()["provider_kind"] != "anthropic" {
		t.Errorf("Embed on a route with an anthropic target: %v (%v), want FAILED_PRECONDITION EMBEDDINGS_NOT_SUPPORTED naming claude", err, info.GetMetadata())
	}
	if n := upstream.Load(); n != 0 {
		t.Errorf("the anthropic upstream saw %d requests, want none", n)
	}
}

// TestEmbedRouteFallsBackOn503: a route's first target answers 503 to
// every attempt; the plan retries it, then falls back to the next target,
// which answers.
func TestEmbedRouteFallsBackOn503(t *testing.T) {
	cfg, _ := embedConfig(t)
	in := servertest.Start(t, cfg)
	resp, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "search", Inputs: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetProvider() != "mock" || resp.GetRoute() != "search" || resp.GetAttempts() != 4 {
		t.Fatalf("served by %s (route %q) after %d attempts, want mock on route search after 4 (3 to down, then the fallback)",
			resp.GetProvider(), resp.GetRoute(), resp.GetAttempts())
	}
	// Without a route to fall back on, the same failures end the call.
	_, err = in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "down/echo", Inputs: []string{"hello"}})
	if code, info, _ := errorInfo(err); code != codes.Unavailable || info.GetMetadata()["attempts"] != "3" {
		t.Errorf("Embed on down/echo: %v, want UNAVAILABLE after 3 attempts", err)
	}
}

// TestEmbedFinishLineNamesItsRoute: the finish line of an Embed call on
// a route that fell back names the route, as a Generate's does: the
// attempts of the call, each to one of the route's targets, do not make
// the call record forget what the model resolved to.
func TestEmbedFinishLineNamesItsRoute(t *testing.T) {
	cfg, _ := embedConfig(t)
	var logs servertest.LockedBuffer
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if _, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "search", Inputs: []string{"hello"}}); err != nil {
		t.Fatal(err)
	}
	var line string
	for deadline := time.Now().Add(10 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		line = grepLines(logs.String(), `msg="finished call"`)
	}
	for _, want := range []string{" key=indexer ", " model=search ", " route=search ", " attempts=4 ", " grpc.method=Embed ", " grpc.code=OK "} {
		if !strings.Contains(line, want) {
			t.Errorf("the finish line lacks %q:\n%s", want, line)
		}
	}
	if strings.Contains(logs.String(), "indexer-secret") {
		t.Errorf("the log holds the key's secret:\n%s", logs.String())
	}
}

// TestEmbedTokenUsageHasNoOutput: an Embed call's input tokens are
// observed in gen_ai_client_token_usage, and nothing as output tokens: an
// embedding has none, and a 0 per Embed would drag the output tokens'
// distribution of the key's Generate calls towards 0.
func TestEmbedTokenUsageHasNoOutput(t *testing.T) {
	cfg, _ := embedConfig(t)
	in := servertest.Start(t, cfg)
	if _, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"hello world"}}); err != nil {
		t.Fatal(err)
	}
	body := in.Server.Metrics().Text()
	series := grepLines(body, metrics.NameTokenUsage+"_count{")
	if !strings.Contains(series, `key="indexer"`) || !strings.Contains(series, `token_type="input"} 1`) {
		t.Errorf("the Embed's input tokens are not observed once:\n%s", series)
	}
	if out := grepLines(series, `token_type="output"`); out != "" && !strings.HasSuffix(out, " 0") {
		t.Errorf("the Embed observed output tokens:\n%s", out)
	}
}

// TestEmbedRetriesAndFallbacksAreObserved: an Embed call's retries and
// its fallback count and are logged as a Generate's: a route that falls
// back for every Embed shows in llmrelay_fallbacks_total, and the call's
// request id finds its "retrying" and "falling back" lines.
func TestEmbedRetriesAndFallbacksAreObserved(t *testing.T) {
	cfg, _ := embedConfig(t)
	var logs servertest.LockedBuffer
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if _, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "search", Inputs: []string{"hello"}}); err != nil {
		t.Fatal(err)
	}
	body := in.Server.Metrics().Text()
	for _, want := range []string{
		// 3 attempts to down: 2 retries on it, then the fallback.
		metrics.NameRetries + `{provider="down",reason="OVERLOADED"} 3`,
		metrics.NameFallbacks + `{from="down/echo",route="search",to="mock/echo"} 1`,
		metrics.NameProviderErrors + `{class="overloaded",provider="down"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(body, "llmrelay_retries", "llmrelay_fallbacks", "llmrelay_provider_errors"))
		}
	}
	var finished string
	for deadline := time.Now().Add(10 * time.Second); finished == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		finished = grepLines(logs.String(), `msg="finished call"`)
	}
	_, rest, _ := strings.Cut(finished, "request_id=")
	id, _, _ := strings.Cut(rest, " ")
	retrying := grepLines(logs.String(), `msg=retrying request_id=`+id+` provider=down`)
	fallingBack := grepLines(logs.String(), `msg="falling back" request_id=`+id+` route=search from=down/echo to=mock/echo`)
	if n := strings.Count(retrying, "\n") + 1; retrying == "" || n != 2 || fallingBack == "" {
		t.Errorf("want 2 retrying lines and a falling back line for request %s, got:\n%s\n%s", id, retrying, fallingBack)
	}
}

// TestEmbedChargesBudgets: an Embed call's input tokens, at the model's
// price, are its key's usage; a key whose budget cannot take the call's
// estimate is refused BUDGET_EXHAUSTED.
func TestEmbedChargesBudgets(t *testing.T) {
	cfg, _ := embedConfig(t)
	in := servertest.Start(t, cfg)
	resp, err := in.Client.Embed(bearer(t.Context(), "indexer-secret"), &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"one two three", "four"}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := adminv1.NewUsageServiceClient(in.Conn).GetUsage(bearer(t.Context(), adminSecret), &adminv1.GetUsageRequest{Key: "indexer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.GetRecords()) != 1 {
		t.Fatalf("usage records %v, want the key's", u.GetRecords())
	}
	rec := u.GetRecords()[0]
	if rec.GetCalls() != 1 || rec.GetUsage().GetInputTokens() != 4 || rec.GetUsage().GetOutputTokens() != 0 || resp.GetUsage().GetInputTokens() != 4 {
		t.Errorf("usage record %v, reply usage %v; want one call of 4 input tokens", rec, resp.GetUsage())
	}
	if want := 4 * 2e-6; math.Abs(rec.GetCostUsd()-want) > 1e-12 {
		t.Errorf("cost %v USD, want %v (4 tokens at 2 USD per million)", rec.GetCostUsd(), want)
	}
	_, err = in.Client.Embed(bearer(t.Context(), "tiny-secret"), &llmrelayv1.EmbedRequest{Model: "mock/echo", Inputs: []string{"one two three"}})
	if code, info, _ := errorInfo(err); code != codes.ResourceExhausted || info.GetReason() != "BUDGET_EXHAUSTED" {
		t.Errorf("Embed over a key's budget: %v, want RESOURCE_EXHAUSTED BUDGET_EXHAUSTED", err)
	}
}
