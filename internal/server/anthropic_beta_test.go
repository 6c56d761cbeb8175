package server_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// postMessages sends a Messages request to the Anthropic door with the
// given anthropic-beta header values and returns the response's status
// and body.
func postMessages(t *testing.T, base, model string, betas ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(`{"model":"`+model+`","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	for _, b := range betas {
		req.Header.Add("anthropic-beta", b)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
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
