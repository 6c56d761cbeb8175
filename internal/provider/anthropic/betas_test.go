package anthropic_test

import (
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestClientBetasHoldForExtraHeaders: with options.client_betas, a beta
// in the anthropic-beta header of extra_headers (in any case) that the
// list does not name is refused, an *provider.OptionNotAllowedError naming
// it, the header and the provider, by ValidateRequest, PrepareRequest,
// Stream and CountTokens alike, none of which reaches the upstream; the
// betas it names are sent.
func TestClientBetasHoldForExtraHeaders(t *testing.T) {
	text, err := os.ReadFile("testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	u := pt.NewUpstream(t, func(_ int, r *http.Request) pt.Reply {
		if r.URL.Path == "/v1/messages/count_tokens" {
			return pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"input_tokens":42}`)}
		}
		return pt.Reply{Body: text}
	})
	p := pt.HTTPProvider(t, anthropic.New, provider.Config{Name: "claude", Kind: anthropic.Kind, BaseURL: u.URL + "/v1", APIKeyEnv: testKeyEnv,
		Options: map[string]any{"client_betas": []any{"interleaved-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14"}}}, testKey)
	calls := map[string]func(*provider.Request) error{
		"ValidateRequest": func(req *provider.Request) error { return p.(provider.RequestValidator).ValidateRequest(req) },
		"PrepareRequest": func(req *provider.Request) error {
			_, err := p.(provider.RequestPreparer).PrepareRequest(req)
			return err
		},
		"Stream": func(req *provider.Request) error { return pt.Collect(t.Context(), p, req).Err },
		"CountTokens": func(req *provider.Request) error {
			_, err := p.(provider.TokenCounter).CountTokens(t.Context(), req)
			return err
		},
	}
	tests := []struct {
		name   string
		extra  map[string]any
		header string // of the error; "" for none
		beta   string
		sent   string // the upstream's anthropic-beta, without an error
	}{
		{"a beta not listed", map[string]any{"anthropic-beta": "mcp-client-2025-04-04"}, "anthropic-beta", "mcp-client-2025-04-04", ""},
		{"one among listed ones", map[string]any{"Anthropic-Beta": "interleaved-thinking-2025-05-14, code-execution-2025-08-25"}, "Anthropic-Beta", "code-execution-2025-08-25", ""},
		{"listed ones", map[string]any{"anthropic-beta": "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14"}, "", "",
			"interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14"},
		{"another header", map[string]any{"x-trace": "mcp-client-2025-04-04"}, "", "", ""},
	}
	for _, tc := range tests {
		for name, call := range calls {
			t.Run(tc.name+": "+name, func(t *testing.T) {
				before := len(u.Requests())
				req := pt.NewRequest("claude-sonnet-4-5")
				req.Options = map[string]any{provider.ExtraHeadersKey: tc.extra}
				err := call(req)
				if tc.beta == "" {
					if err != nil {
						t.Fatal(err)
					}
					if reqs := u.Requests(); len(reqs) > before {
						if got := reqs[len(reqs)-1].Header.Get("Anthropic-Beta"); got != tc.sent {
							t.Errorf("upstream anthropic-beta %q, want %q", got, tc.sent)
						}
					}
					return
				}
				var ne *provider.OptionNotAllowedError
				if !errors.As(err, &ne) || ne.Provider != "claude" || ne.Option != provider.ExtraHeadersKey || ne.Header != tc.header || ne.Beta != tc.beta ||
					ne.Field() != "provider_options.extra_headers."+tc.header {
					t.Errorf("error %v, want an *OptionNotAllowedError naming beta %s of header %s of claude", err, tc.beta, tc.header)
				}
				if n := len(u.Requests()) - before; n != 0 {
					t.Errorf("the upstream got %d requests, want none", n)
				}
			})
		}
	}
}
