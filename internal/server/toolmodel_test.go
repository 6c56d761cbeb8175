package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// toolModel is an OpenAI-compatible upstream that behaves as a
// tool-calling model, in the Chat Completions streaming wire format (the
// chunks are shaped as the recorded tool_calls.sse of
// internal/provider/openai/testdata): asked with a conversation that does
// not end with tool results, it streams a call of the first tool it is
// offered, with the arguments args, in fragments; asked again with the
// results, it answers "The tool said: <results>". It records every
// request body.
type toolModel struct {
	srv  *httptest.Server
	args string

	mu     sync.Mutex
	bodies []chatRequest
}

// chatRequest is the part of a Chat Completions request the tests read.
type chatRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func startToolModel(t *testing.T, args string) *toolModel {
	m := &toolModel{args: args}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// URL is the provider's base_url.
func (m *toolModel) URL() string { return m.srv.URL + "/v1" }

// Requests returns the request bodies received so far.
func (m *toolModel) Requests() []chatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]chatRequest(nil), m.bodies...)
}

func (m *toolModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"not a chat completion","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, req)
	n := len(m.bodies)
	m.mu.Unlock()
	id := fmt.Sprintf("chatcmpl-tool%d", n)
	chunk := func(delta, finish string) string {
		return `data: {"id":"` + id + `","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":` +
			delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}` + "\n\n"
	}
	var out []string
	out = append(out, chunk(`{"role":"assistant","content":"","refusal":null}`, "null"))
	var results []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		s, _ := req.Messages[i].Content.(string)
		results = append([]string{s}, results...)
	}
	switch {
	case len(results) > 0:
		for _, w := range strings.SplitAfter("The tool said: "+strings.Join(results, "; "), " ") {
			b, _ := json.Marshal(w)
			out = append(out, chunk(`{"content":`+string(b)+`}`, "null"))
		}
		out = append(out, chunk(`{}`, `"stop"`))
	case len(req.Tools) > 0:
		name := req.Tools[0].Function.Name
		callID := fmt.Sprintf("call_%d", n)
		out = append(out,
			chunk(`{"content":"Let me"}`, "null"),
			chunk(`{"content":" check."}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"id":"`+callID+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, "null"))
		half := len(m.args) / 2
		for _, part := range []string{m.args[:half], m.args[half:]} {
			b, _ := json.Marshal(part)
			out = append(out, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(b)+`}}]}`, "null"))
		}
		out = append(out, chunk(`{}`, `"tool_calls"`))
	default:
		out = append(out, chunk(`{"content":"no tools"}`, "null"), chunk(`{}`, `"stop"`))
	}
	out = append(out,
		`data: {"id":"`+id+`","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_0ba0d124f1","choices":[],"usage":{"prompt_tokens":85,"completion_tokens":41,"total_tokens":126}}`+"\n\n",
		"data: [DONE]\n\n")
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range out {
		_, _ = io.WriteString(w, c)
		w.(http.Flusher).Flush()
	}
}
