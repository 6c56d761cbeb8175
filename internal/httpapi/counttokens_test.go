package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// POST /v1/messages/count_tokens (the Anthropic SDKs'
// messages.count_tokens, which Claude Code and context-managing agents
// call before they send) is counted by the provider of the model's first
// target that can count: an anthropic provider's count_tokens endpoint.

const countConfig = `
providers:
  - {name: claude, kind: anthropic, base_url: %q, api_key_env: LLMRELAY_TEST_ANTHROPIC_KEY, models: [claude-up]}
  - {name: gpt, kind: openai, base_url: %q, api_key_env: LLMRELAY_TEST_OPENAI_KEY, models: [gpt-up]}
  - {name: mock, kind: mock}
routes:
  - {name: gpt-then-claude, targets: [{model: gpt/gpt-up}, {model: claude/claude-up}]}
  - {name: no-claude, targets: [{model: gpt/gpt-up}, {model: mock/echo}]}
  - {name: claude-in-a-second, timeout: 1s, targets: [{model: claude/claude-up}]}
auth:
  keys:
    - {name: full, sha256: %s, scopes: [generate], models: ["*"]}
    - {name: gpt-only, sha256: %s, scopes: [generate], models: ["gpt/*"]}
    - {name: lister, sha256: %s, scopes: [models.list], models: ["*"]}
    - {name: slow, sha256: %s, scopes: [generate], models: ["*"], requests_per_second: 0.02, burst: 1}
`

// countUpstreams starts an Anthropic-format upstream that answers every
// count with input_tokens 17 (refusing, as Anthropic does, a member the
// endpoint does not take; holding a request that says "stall me"
// unanswered), an OpenAI-format one that must hear nothing,
// and llmrelay in front of both.
func countUpstreams(t *testing.T) (base string, claude, gpt *pt.Upstream) {
	t.Helper()
	input := map[string]bool{"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true, "thinking": true, "output_config": true}
	claude = pt.NewUpstream(t, func(n int, r *http.Request) pt.Reply {
		jsonReply := func(status int, body string) pt.Reply {
			return pt.Reply{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
		}
		if strings.Contains(string(claude.Requests()[n].Body), "overload me") {
			return jsonReply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}
		if strings.Contains(string(claude.Requests()[n].Body), "stall me") {
			return pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Fault: pt.FaultStall}
		}
		if r.URL.Path != "/v1/messages/count_tokens" {
			return jsonReply(404, `{"type":"error","error":{"type":"not_found_error","message":"Not found"}}`)
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(claude.Requests()[n].Body, &body); err != nil {
			return jsonReply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"not JSON"}}`)
		}
		for k := range body {
			if !input[k] {
				return jsonReply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"`+k+`: Extra inputs are not permitted"}}`)
			}
		}
		return jsonReply(200, `{"input_tokens":17}`)
	})
	gpt = pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Status: 500} })
	t.Setenv("LLMRELAY_TEST_ANTHROPIC_KEY", "sk-ant-upstream-0123456789")
	t.Setenv("LLMRELAY_TEST_OPENAI_KEY", "sk-openai-upstream-0123456789")
	cfg, err := config.Parse(fmt.Appendf(nil, countConfig, claude.URL+"/v1", gpt.URL+"/v1",
		auth.HashKey("sk-full"), auth.HashKey("sk-gpt-only"), auth.HashKey("sk-lister"), auth.HashKey("sk-slow")))
	if err != nil {
		t.Fatal(err)
	}
	return servertest.Start(t, cfg, server.WithRetryTimer(retrytest.Instant{})).HTTP(t), claude, gpt
}

// countRequest is a count as the SDKs send it.
func countRequest(key, body string) request {
	r := request{path: "/v1/messages/count_tokens", body: body, headers: map[string]string{"Anthropic-Version": "2023-06-01"}}
	if key != "" {
		r.headers["X-Api-Key"] = key
	}
	return r
}

func TestCountTokensAtAnAnthropicProvider(t *testing.T) {
	base, claude, gpt := countUpstreams(t)
	const body = `{"model":%q,"system":"Be brief.","messages":[{"role":"user","content":"What is the weather in Paris?"}],` +
		`"tools":[{"name":"get_weather","input_schema":{"type":"object"}}],"thinking":{"type":"enabled","budget_tokens":2048}}`

	for _, tc := range []struct{ name, model string }{
		{"a provider's model", "claude/claude-up"},
		// The route's first target is an openai provider's, which
		// cannot count: the anthropic one after it counts.
		{"a route", "gpt-then-claude"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(claude.Requests())
			req := countRequest("sk-full", fmt.Sprintf(body, tc.model))
			req.headers["Anthropic-Beta"] = "token-efficient-tools-2025-02-19"
			r := call(t, base, req)
			if r.status != 200 || strings.TrimSpace(r.body) != `{"input_tokens":17}` {
				t.Fatalf("%d %s, want 200 {\"input_tokens\":17}", r.status, r.body)
			}
			if r.header.Get("Llmrelay-Provider") != "claude" || r.header.Get("Llmrelay-Model") != "claude-up" || r.header.Get("Request-Id") == "" {
				t.Errorf("headers %v, want the provider and model that counted and the request id", r.header)
			}
			reqs := claude.Requests()
			if len(reqs) != n+1 {
				t.Fatalf("the anthropic upstream got %d requests, want 1", len(reqs)-n)
			}
			got := reqs[n]
			if got.Method != http.MethodPost || got.URI != "/v1/messages/count_tokens" {
				t.Errorf("%s %s, want POST /v1/messages/count_tokens", got.Method, got.URI)
			}
			for k, want := range map[string]string{"X-Api-Key": "sk-ant-upstream-0123456789", "Anthropic-Version": "2023-06-01",
				"Anthropic-Beta": "token-efficient-tools-2025-02-19"} {
				if v := got.Header.Get(k); v != want {
					t.Errorf("upstream header %s = %q, want %q", k, v, want)
				}
			}
			var sent struct {
				Model    string `json:"model"`
				System   string `json:"system"`
				Messages []struct {
					Role string `json:"role"`
				} `json:"messages"`
				Tools    []map[string]any `json:"tools"`
				Thinking map[string]any   `json:"thinking"`
			}
			if err := json.Unmarshal(got.Body, &sent); err != nil {
				t.Fatal(err)
			}
			if sent.Model != "claude-up" || sent.System != "Be brief." || len(sent.Messages) != 1 || len(sent.Tools) != 1 || sent.Thinking["type"] != "enabled" {
				t.Errorf("upstream body %s, want the target's model and the request's input", got.Body)
			}
			if len(gpt.Requests()) != 0 {
				t.Errorf("the openai upstream got %d requests", len(gpt.Requests()))
			}
		})
	}

	t.Run("a model none of whose providers counts", func(t *testing.T) {
		n := len(claude.Requests())
		for _, tc := range []struct{ model, names string }{
			{"gpt/gpt-up", "gpt/gpt-up (kind openai)"},
			{"no-claude", "gpt/gpt-up (kind openai), mock/echo (kind mock)"},
		} {
			r := call(t, base, countRequest("sk-full", fmt.Sprintf(body, tc.model)))
			v := r.json(t)
			msg, _ := path(v, "error.message").(string)
			if r.status != 404 || path(v, "error.type") != "not_found_error" || path(v, "llmrelay.reason") != "TOKEN_COUNTING_NOT_SUPPORTED" ||
				!strings.Contains(msg, "model "+tc.model+" cannot count tokens") || !strings.Contains(msg, tc.names) {
				t.Errorf("%s: %d %s, want a 404 TOKEN_COUNTING_NOT_SUPPORTED naming %s", tc.model, r.status, r.body, tc.names)
			}
		}
		if len(claude.Requests()) != n || len(gpt.Requests()) != 0 {
			t.Error("an upstream was asked")
		}
	})

	t.Run("the provider's failure", func(t *testing.T) {
		// One request, not retried: the SDK is told not to retry it
		// either, as for a generation whose attempts are exhausted.
		n := len(claude.Requests())
		r := call(t, base, countRequest("sk-full", `{"model":"gpt-then-claude","messages":[{"role":"user","content":"overload me"}]}`))
		v := r.json(t)
		if r.status != 529 || path(v, "error.type") != "overloaded_error" || path(v, "llmrelay.reason") != "RETRIES_EXHAUSTED" ||
			r.header.Get("X-Should-Retry") != "false" || r.header.Get("Llmrelay-Provider") != "claude" {
			t.Errorf("%d %v %s, want 529 overloaded_error from claude", r.status, r.header, r.body)
		}
		if got := len(claude.Requests()) - n; got != 1 {
			t.Errorf("the upstream got %d requests, want 1", got)
		}
	})
}

// TestCountTokensIsAdmittedAsAGeneration: a count is authenticated and
// checked as a Messages request is (the generate scope, the key's models,
// the request's model and messages), with the same answer, and nothing
// reaches the provider.
func TestCountTokensIsAdmittedAsAGeneration(t *testing.T) {
	base, claude, _ := countUpstreams(t)
	messages := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, key, body string
		status          int
		errType, reason string
	}{
		{"no key", "", `{"model":"claude/claude-up",` + messages + `}`, 401, "authentication_error", "CREDENTIALS_MISSING"},
		{"an unknown key", "sk-nope", `{"model":"claude/claude-up",` + messages + `}`, 401, "authentication_error", "API_KEY_UNKNOWN"},
		{"a key without the generate scope", "sk-lister", `{"model":"claude/claude-up",` + messages + `}`, 403, "permission_error", "SCOPE_MISSING"},
		{"a key that may not use the model", "sk-gpt-only", `{"model":"claude/claude-up",` + messages + `}`, 403, "permission_error", "MODEL_NOT_ALLOWED"},
		{"a key that may not use the route", "sk-gpt-only", `{"model":"gpt-then-claude",` + messages + `}`, 403, "permission_error", "MODEL_NOT_ALLOWED"},
		{"an unknown model", "sk-full", `{"model":"claude-nope",` + messages + `}`, 404, "not_found_error", "UNKNOWN_MODEL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count := call(t, base, countRequest(tc.key, tc.body))
			v := count.json(t)
			if count.status != tc.status || path(v, "error.type") != tc.errType || path(v, "llmrelay.reason") != tc.reason {
				t.Errorf("count: %d %s, want %d %s %s", count.status, count.body, tc.status, tc.errType, tc.reason)
			}
			// The same request to /v1/messages gets the same answer.
			gen := countRequest(tc.key, strings.Replace(tc.body, "{", `{"max_tokens":10,`, 1))
			gen.path = "/v1/messages"
			g := call(t, base, gen)
			if gv := g.json(t); g.status != count.status || path(gv, "error.message") != path(v, "error.message") {
				t.Errorf("count: %d %s\nmessages: %d %s", count.status, count.body, g.status, g.body)
			}
		})
	}
	for _, tc := range []struct{ name, body, message string }{
		{"without a model", `{` + messages + `}`, "model: Field required"},
		{"without messages", `{"model":"claude/claude-up"}`, "messages: Field required"},
		{"with max_tokens", `{"model":"claude/claude-up","max_tokens":10,` + messages + `}`, "max_tokens: Extra inputs are not permitted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, base, countRequest("sk-full", tc.body))
			if v := r.json(t); r.status != 400 || path(v, "type") != "error" || path(v, "error.type") != "invalid_request_error" || path(v, "error.message") != tc.message {
				t.Errorf("%d %s, want 400 invalid_request_error %q", r.status, r.body, tc.message)
			}
		})
	}
	t.Run("the key's rate", func(t *testing.T) {
		// A count takes one of the key's requests, as every call does.
		body := `{"model":"mock/echo",` + messages + `}`
		if r := call(t, base, countRequest("sk-slow", body)); r.status != 404 {
			t.Errorf("the first count: %d %s, want the 404 of a model that cannot count", r.status, r.body)
		}
		r := call(t, base, countRequest("sk-slow", body))
		if v := r.json(t); r.status != 429 || path(v, "error.type") != "rate_limit_error" || path(v, "llmrelay.reason") != "RATE_LIMITED" {
			t.Errorf("the second count: %d %s, want 429 RATE_LIMITED", r.status, r.body)
		}
	})
	t.Run("another method", func(t *testing.T) {
		r := call(t, base, request{method: http.MethodGet, path: "/v1/messages/count_tokens"})
		if r.status != 405 || r.header.Get("Allow") != "POST" || path(r.json(t), "type") != "error" {
			t.Errorf("%d %v %s", r.status, r.header, r.body)
		}
	})
	if n := len(claude.Requests()); n != 0 {
		t.Errorf("the upstream got %d requests", n)
	}
}

// TestCountTokensHonoursTheSDKTimeout: an SDK's request timeout
// (X-Stainless-Timeout) is a count's deadline, as it is a generation's
// that is not streamed: a count its provider does not answer ends at the
// timeout with a 504 timeout_error, its provider's request cancelled.
// The header was ignored: the count waited for deadlines.default (120 s)
// while the SDK gave up and sent it again.
func TestCountTokensHonoursTheSDKTimeout(t *testing.T) {
	countEndsAtTimeout(t, "claude/claude-up", map[string]string{"X-Stainless-Timeout": "1"})
}

// TestCountTokensHonoursTheRouteTimeout: a route's timeout bounds a
// count through it as it bounds a generation. It was not applied: the
// count waited for deadlines.default (120 s).
func TestCountTokensHonoursTheRouteTimeout(t *testing.T) {
	countEndsAtTimeout(t, "claude-in-a-second", nil) // a route with timeout: 1s
}

// countEndsAtTimeout counts a prompt that its provider does not answer
// for model, with header, whose timeout is 1s: the count must end then
// with a 504 timeout_error, its provider's request cancelled.
func countEndsAtTimeout(t *testing.T, model string, header map[string]string) {
	t.Helper()
	base, claude, _ := countUpstreams(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages/count_tokens",
		strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"stall me"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Anthropic-Version": "2023-06-01", "X-Api-Key": "sk-full"} {
		req.Header.Set(k, v)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	sent := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("no answer within 20s of a count with a timeout of 1s: %v", err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusGatewayTimeout || path(body, "error.type") != "timeout_error" || path(body, "llmrelay.reason") != "DEADLINE_EXCEEDED" {
		t.Errorf("%d %v, want 504 timeout_error DEADLINE_EXCEEDED", resp.StatusCode, body)
	}
	if took := time.Since(sent); took < 900*time.Millisecond {
		t.Errorf("answered after %v, before the timeout of 1s", took)
	}
	select {
	case <-claude.Gone():
	case <-ctx.Done():
		t.Error("the provider's request was not cancelled")
	}
}

// TestAnthropicSDKCountsTokens: the official Go SDK's
// Messages.CountTokens gets the provider's count, from one request.
func TestAnthropicSDKCountsTokens(t *testing.T) {
	base, claude, _ := countUpstreams(t)
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("sk-full"), aoption.WithMaxRetries(0))
	var n counter
	got, err := client.Messages.CountTokens(ctxOf(t), anthropic.MessageCountTokensParams{
		Model:    "gpt-then-claude",
		System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("Be brief.")},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))},
	}, aoption.WithMiddleware(n.anthropic))
	if err != nil {
		t.Fatalf("%v %s", err, errorJSON(err))
	}
	if got.InputTokens != 17 {
		t.Errorf("input_tokens %d, want 17", got.InputTokens)
	}
	if n.n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.n.Load())
	}
	reqs := claude.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"model":"claude-up"`) {
		t.Errorf("the upstream got %d requests, want 1 for claude-up: %v", len(reqs), reqs)
	}
}

// TestCountTokensNotSupportedIsNoServerError: a count for a model that
// cannot count is the client's to handle (Claude Code asks before every
// request and falls back to its own estimate), not a fault of the server:
// its finished call line is a warning, as a model that cannot embed is,
// not an error an operator is paged for on every request.
func TestCountTokensNotSupportedIsNoServerError(t *testing.T) {
	var logs servertest.LockedBuffer
	in := servertest.Start(t, nil, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	r := call(t, in.HTTP(t), countRequest("", `{"model":"mock/echo","messages":[{"role":"user","content":"hi"}]}`))
	if r.status != http.StatusNotFound {
		t.Fatalf("%d %s, want 404", r.status, r.body)
	}
	var line string
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, `msg="finished call"`) && strings.Contains(l, "TOKEN_COUNTING_NOT_SUPPORTED") {
			line = l
		}
	}
	if !strings.Contains(line, "level=WARN") {
		t.Errorf("the count's finished call line is %q, want it at WARN", line)
	}
}

// TestCountTokensAtAnEjectedTarget: a route whose target that can count
// is ejected (outlier detection, after its generations failed) still
// counts there: a count is one request that counts in no target's health,
// and the model can count. It answered 404 TOKEN_COUNTING_NOT_SUPPORTED
// ("model claude-first cannot count tokens", naming only the targets left)
// for as long as the ejection lasted, which a client such as Claude Code
// takes for the model never counting.
func TestCountTokensAtAnEjectedTarget(t *testing.T) {
	claude := pt.NewUpstream(t, func(_ int, r *http.Request) pt.Reply {
		if r.URL.Path == "/v1/messages/count_tokens" {
			return pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"input_tokens":17}`)}
		}
		return pt.Reply{Status: 529, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}
	})
	t.Setenv("LLMRELAY_TEST_ANTHROPIC_KEY", "sk-ant-upstream-0123456789")
	cfg, err := config.Parse(fmt.Appendf(nil, `
providers:
  - {name: claude, kind: anthropic, base_url: %q, api_key_env: LLMRELAY_TEST_ANTHROPIC_KEY, models: [claude-up]}
  - {name: mock, kind: mock}
routes:
  - {name: claude-first, targets: [{model: claude/claude-up}, {model: mock/echo}]}
outlier_detection: {consecutive_failures: 1, base_ejection_time: 1h, max_ejection_time: 1h}
auth:
  keys:
    - {name: full, sha256: %s, scopes: [generate, models.list], models: ["*"]}
`, claude.URL+"/v1", auth.HashKey("sk-full")))
	if err != nil {
		t.Fatal(err)
	}
	base := servertest.Start(t, cfg, server.WithRetryTimer(retrytest.Instant{})).HTTP(t)

	// A generation: claude fails, the call falls back to the mock, and
	// claude is ejected.
	gen := countRequest("sk-full", `{"model":"claude-first","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	gen.path = "/v1/messages"
	if r := call(t, base, gen); r.status != 200 || r.header.Get("Llmrelay-Provider") != "mock" {
		t.Fatalf("the generation: %d %v %s, want 200 from the mock", r.status, r.header, r.body)
	}

	n := len(claude.Requests())
	r := call(t, base, countRequest("sk-full", `{"model":"claude-first","messages":[{"role":"user","content":"hi"}]}`))
	if r.status != 200 || strings.TrimSpace(r.body) != `{"input_tokens":17}` || r.header.Get("Llmrelay-Provider") != "claude" {
		t.Fatalf("the count: %d %v %s, want 200 {\"input_tokens\":17} counted by claude", r.status, r.header, r.body)
	}
	if got := len(claude.Requests()) - n; got != 1 {
		t.Errorf("claude got %d count requests, want 1", got)
	}
}
