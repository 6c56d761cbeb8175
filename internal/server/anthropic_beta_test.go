package server_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// postMessages sends a Messages request for model to the Anthropic door
// with the given anthropic-beta header values and returns the response's
// status and body.
func postMessages(t *testing.T, base, model string, betas ...string) (int, string) {
	t.Helper()
	return postMessagesBody(t, base, `{"model":"`+model+`","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, betas...)
}

// TestAnthropicBetaHeader: the betas an Anthropic SDK asks for with its
// anthropic-beta header reach an anthropic upstream, after the ones the
// provider's configuration sets, each once, and only the ones the
// provider's options.client_betas lets through; an openai upstream never
// sees the header, and the call to it works as without the header.
func TestAnthropicBetaHeader(t *testing.T) {
	text, err := os.ReadFile("../provider/anthropic/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	claude := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	picky := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	openaiText, err := os.ReadFile("../provider/openai/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	oai := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: openaiText} })
	t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
	cfg := config.Default()
	cfg.Providers = []provider.Config{
		{Name: "claude", Kind: "anthropic", BaseURL: claude.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY",
			Headers: map[string]string{"anthropic-beta": "context-1m-2025-08-07"}},
		{Name: "picky", Kind: "anthropic", BaseURL: picky.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY",
			Options: map[string]any{"client_betas": []any{"interleaved-thinking-2025-05-14"}}},
		{Name: "oai", Kind: "openai", BaseURL: oai.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"},
	}
	base := servertest.Start(t, cfg).HTTP(t)

	tests := []struct {
		name, model string
		betas       []string
		up          *pt.Upstream
		want        []string // the upstream's anthropic-beta header values
	}{
		{"anthropic: the client's betas after the configured one", "claude/claude-sonnet-4-5",
			[]string{"interleaved-thinking-2025-05-14, fine-grained-tool-streaming-2025-05-14", "context-1m-2025-08-07"}, claude,
			[]string{"context-1m-2025-08-07,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14"}},
		{"anthropic: no client betas, the configured one alone", "claude/claude-sonnet-4-5", nil, claude,
			[]string{"context-1m-2025-08-07"}},
		{"anthropic with client_betas: only those listed", "picky/claude-sonnet-4-5",
			[]string{"interleaved-thinking-2025-05-14,oauth-2025-04-20"}, picky, []string{"interleaved-thinking-2025-05-14"}},
		{"anthropic with client_betas: none of those listed", "picky/claude-sonnet-4-5",
			[]string{"oauth-2025-04-20"}, picky, nil},
		{"openai: never", "oai/gpt-4o-mini", []string{"interleaved-thinking-2025-05-14"}, oai, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.up.Requests())
			status, body := postMessages(t, base, tc.model, tc.betas...)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			reqs := tc.up.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("the upstream got %d requests, want 1", len(reqs)-before)
			}
			if got := reqs[len(reqs)-1].Header.Values("Anthropic-Beta"); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("upstream anthropic-beta %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("a malformed beta name is the client's error", func(t *testing.T) {
		status, body := postMessages(t, base, "claude/claude-sonnet-4-5", "a b")
		if status != http.StatusBadRequest || !strings.Contains(body, `"invalid_request_error"`) || !strings.Contains(body, "anthropic-beta") {
			t.Errorf("status %d, body %s; want a 400 invalid_request_error naming the header", status, body)
		}
	})
}

// TestClientBetasHoldForExtraHeaders: a provider's options.client_betas
// holds for the anthropic-beta header a request sets through
// provider_options.extra_headers (gRPC, or an HTTP door's llmrelay
// member) as for the Anthropic door's header: a beta it does not list
// fails the call before any upstream request, PERMISSION_DENIED
// PROVIDER_OPTION_NOT_ALLOWED naming the beta and the provider (the
// door's 403 permission_error), where the door's header drops it; one it
// lists reaches the upstream, after the operator's own betas, which are
// always sent; a provider without client_betas takes any.
func TestClientBetasHoldForExtraHeaders(t *testing.T) {
	text, err := os.ReadFile("../provider/anthropic/testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	picky := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	open := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	fixed := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: text} })
	t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
	cfg := config.Default()
	cfg.Providers = []provider.Config{
		{Name: "picky", Kind: "anthropic", BaseURL: picky.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY",
			Options: map[string]any{"client_betas": []any{"interleaved-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14"}}},
		{Name: "open", Kind: "anthropic", BaseURL: open.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"},
		{Name: "fixed", Kind: "anthropic", BaseURL: fixed.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY",
			Headers: map[string]string{"anthropic-beta": "context-1m-2025-08-07"}, Options: map[string]any{"client_betas": []any{}}},
	}
	// A route that starts with the provider taking every beta and may
	// fall back to the one that does not.
	cfg.Routes = []route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "open/claude-x"}, {Model: "picky/claude-x"}}}}
	in := servertest.Start(t, cfg)
	base := in.HTTP(t)

	generate := func(t *testing.T, model string, extra map[string]any) ([]*llmrelayv1.GenerateEvent, error) {
		t.Helper()
		opts, err := structpb.NewStruct(map[string]any{"extra_headers": extra})
		if err != nil {
			t.Fatal(err)
		}
		req := &llmrelayv1.GenerateRequest{Model: model, Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "go"}}, ProviderOptions: opts}
		return servertest.Collect(t.Context(), in.Client, req)
	}
	refused := func(t *testing.T, model, header, value, beta string) {
		t.Helper()
		events, err := generate(t, model, map[string]any{header: value})
		optionRefused(t, events, err, "provider_options.extra_headers."+header, map[string]string{"option": "extra_headers", "beta": beta, "provider": "picky"})
		if !strings.Contains(status.Convert(err).Message(), beta) {
			t.Errorf("message %q, want it to name beta %s", status.Convert(err).Message(), beta)
		}
	}
	t.Run("gRPC: a beta client_betas does not list", func(t *testing.T) {
		refused(t, "picky/claude-x", "anthropic-beta", "mcp-client-2025-04-04", "mcp-client-2025-04-04")
	})
	t.Run("gRPC: one among listed ones, in any case", func(t *testing.T) {
		refused(t, "picky/claude-x", "Anthropic-Beta", "interleaved-thinking-2025-05-14, code-execution-2025-08-25", "code-execution-2025-08-25")
	})
	t.Run("gRPC: a route one of whose targets does not list it", func(t *testing.T) {
		refused(t, "smart", "anthropic-beta", "mcp-client-2025-04-04", "mcp-client-2025-04-04")
	})
	t.Run("the Anthropic door's llmrelay member", func(t *testing.T) {
		status, body := postMessagesBody(t, base, `{"model":"picky/claude-x","max_tokens":64,"messages":[{"role":"user","content":"hi"}],`+
			`"llmrelay":{"provider_options":{"extra_headers":{"anthropic-beta":"mcp-client-2025-04-04"}}}}`)
		typ, msg := anthropicError(t, status, body)
		want := `llmrelay.provider_options.extra_headers.anthropic-beta: beta "mcp-client-2025-04-04" is not allowed with provider "picky"`
		if status != http.StatusForbidden || typ != "permission_error" || !strings.HasPrefix(msg, want) {
			t.Errorf("%d %s %q, want 403 permission_error starting %q", status, typ, msg, want)
		}
	})
	if reqs := slices.Concat(picky.Requests(), open.Requests(), fixed.Requests()); len(reqs) != 0 {
		var got []string
		for _, r := range reqs {
			got = append(got, r.Header.Get("Anthropic-Beta"))
		}
		t.Fatalf("the upstreams got %d requests with anthropic-beta %q, want the refused calls to make none", len(reqs), got)
	}

	sent := func(t *testing.T, up *pt.Upstream, want string) {
		t.Helper()
		reqs := up.Requests()
		if len(reqs) == 0 {
			t.Fatal("the upstream got no request")
		}
		if got := reqs[len(reqs)-1].Header.Values("Anthropic-Beta"); strings.Join(got, "|") != want {
			t.Errorf("upstream anthropic-beta %q, want %q", got, want)
		}
	}
	t.Run("gRPC: listed betas reach the upstream", func(t *testing.T) {
		if _, err := generate(t, "picky/claude-x", map[string]any{"anthropic-beta": "interleaved-thinking-2025-05-14"}); err != nil {
			t.Fatal(err)
		}
		sent(t, picky, "interleaved-thinking-2025-05-14")
	})
	t.Run("the Anthropic door: listed betas of extra_headers and of the header", func(t *testing.T) {
		status, body := postMessagesBody(t, base, `{"model":"picky/claude-x","max_tokens":64,`+
			`"messages":[{"role":"user","content":"hi"}],"llmrelay":{"provider_options":{"extra_headers":{"anthropic-beta":"interleaved-thinking-2025-05-14"}}}}`,
			"fine-grained-tool-streaming-2025-05-14,oauth-2025-04-20")
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		sent(t, picky, "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14")
	})
	t.Run("the operator's betas, with client_betas: []", func(t *testing.T) {
		if status, body := postMessages(t, base, "fixed/claude-x", "interleaved-thinking-2025-05-14"); status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		sent(t, fixed, "context-1m-2025-08-07")
	})
	t.Run("gRPC: without client_betas, any beta", func(t *testing.T) {
		if _, err := generate(t, "open/claude-x", map[string]any{"anthropic-beta": "mcp-client-2025-04-04"}); err != nil {
			t.Fatal(err)
		}
		sent(t, open, "mcp-client-2025-04-04")
	})
}
