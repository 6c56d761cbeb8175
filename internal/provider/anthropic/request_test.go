package anthropic_test

import (
	"errors"
	"flag"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestRequestMapping(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL+"/v1"), pt.RichRequest("claude-sonnet-4-5"))
	pt.GoldenJSON(t, "request_rich.golden.json", got.Body, *update)
	if got.URI != "/v1/messages" {
		t.Errorf("URI = %s, want /v1/messages", got.URI)
	}
	for k, want := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": anthropic.Version} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if a, ok := got.Header["Authorization"]; ok {
		t.Errorf("Authorization = %q, want the key in x-api-key only", a)
	}
}

func TestConfiguredHeadersReplaceTheVersion(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	t.Setenv(testKeyEnv, testKey)
	p, err := anthropic.New(provider.Config{Kind: anthropic.Kind, BaseURL: u.URL, APIKeyEnv: testKeyEnv,
		Headers: map[string]string{"anthropic-version": "2099-01-01", "anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}})
	if err != nil {
		t.Fatal(err)
	}
	got := pt.CaptureRequest(t, u, p, pt.NewRequest("claude-sonnet-4-5"))
	if got.Header.Get("Anthropic-Version") != "2099-01-01" || got.Header.Get("Anthropic-Beta") == "" {
		t.Errorf("headers %v, want the configured version and beta", got.Header)
	}
}

func TestKeyIsRequired(t *testing.T) {
	if _, err := anthropic.New(provider.Config{Name: "claude", Kind: anthropic.Kind}); err == nil {
		t.Error("New without api_key_env succeeded, want an error")
	}
}

func TestToolArgumentsMustBeAnObject(t *testing.T) {
	u := pt.Replay(t, fixtures[pt.Text].Reply(t))
	req := pt.RichRequest("claude-sonnet-4-5")
	req.Messages[3].ToolCalls[1].Arguments = `["not", "an", "object"]`
	_, err := newProvider(t, u.URL).Stream(t.Context(), req)
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "messages[3].tool_calls[1].arguments" {
		t.Errorf("error = %v, want a field error on messages[3].tool_calls[1].arguments", err)
	}
	if len(u.Requests()) != 0 {
		t.Error("the invalid request was sent")
	}
}
