package anthropic_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestCountTokens: the adapter counts with Anthropic's POST
// /v1/messages/count_tokens, beside /v1/messages, with the headers a
// generation is sent (the key, anthropic-version, the client's betas) and
// the input members of the Messages request it would send, without its
// generation members, which the endpoint refuses.
func TestCountTokens(t *testing.T) {
	u := pt.NewUpstream(t, func(int, *http.Request) pt.Reply {
		return pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"input_tokens":42}`)}
	})
	p := newProvider(t, u.URL+"/v1")
	counter, ok := p.(provider.TokenCounter)
	if !ok {
		t.Fatal("the anthropic provider is no provider.TokenCounter")
	}
	req := pt.NewRequest("claude-sonnet-4-5")
	req.Messages = append([]provider.Message{{Role: provider.RoleSystem, Content: "Be brief."}}, req.Messages...)
	maxTokens, temp := 100, 0.5
	req.Generation = provider.Generation{MaxOutputTokens: &maxTokens, Temperature: &temp, Stop: []string{"END"}}
	req.Tools = []provider.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}
	req.Options = map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": float64(2048)}}
	ctx := provider.WithClientBetas(t.Context(), []string{"token-counting-2024-11-01"})
	n, err := counter.CountTokens(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if n != 42 {
		t.Errorf("count %d, want 42", n)
	}
	reqs := u.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.URI != "/v1/messages/count_tokens" {
		t.Errorf("%s %s, want POST /v1/messages/count_tokens", got.Method, got.URI)
	}
	for k, want := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": anthropic.Version, "Anthropic-Beta": "token-counting-2024-11-01", "Accept": "application/json"} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	var members []string
	for k := range body {
		members = append(members, k)
	}
	slices.Sort(members)
	if want := []string{"messages", "model", "system", "thinking", "tool_choice", "tools"}; !slices.Equal(members, want) {
		t.Errorf("body members %v, want %v:\n%s", members, want, got.Body)
	}
	if string(body["model"]) != `"claude-sonnet-4-5"` || !strings.HasPrefix(string(body["system"]), `"Be brief.`) {
		t.Errorf("body %s", got.Body)
	}
}

// TestCountTokensFailures: the endpoint's errors are the adapter's typed
// errors, classified by its error table, and an answer without
// input_tokens is a protocol error.
func TestCountTokensFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply pt.Reply
		kind  provider.ErrorKind
		class provider.Class
	}{
		{"rejected", pt.Reply{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"messages: Field required"}}`)}, provider.KindHTTP, provider.ClassRejected},
		{"overloaded", pt.Reply{Status: 529, Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}, provider.KindHTTP, provider.ClassOverloaded},
		{"no input_tokens", pt.Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"tokens":3}`)}, provider.KindProtocol, provider.ClassProtocol},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return tc.reply })
			_, err := newProvider(t, u.URL).(provider.TokenCounter).CountTokens(t.Context(), pt.NewRequest("claude-sonnet-4-5"))
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Kind != tc.kind || pe.Class != tc.class {
				t.Fatalf("error %#v, want kind %v class %v", err, tc.kind, tc.class)
			}
			if strings.Contains(pe.Message, testKey) {
				t.Errorf("the message quotes the key: %s", pe.Message)
			}
		})
	}
}
