package httpapi_test

import (
	"log/slog"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// TestServerToolsThroughTheDoors: a call that runs server tools (a real
// MCP server, the mock provider scripted as a tool-calling model) reaches
// an SDK as one reply: each turn's text, and only the tool calls left to
// the client; the server's calls, their progress and results are not
// shown (a client would take them for its own).
func TestServerToolsThroughTheDoors(t *testing.T) {
	g := mcptest.NewGoServer(t)
	lines := make(finishLines, 16)
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Tools.MCPServers = []servertools.ServerConfig{{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: 2 * time.Minute}}
		cfg.Auth.Keys[0].Tools = []string{"go/*"}
	}, server.WithLogger(slog.New(lines)))
	// Turn 1 says something and calls go/echo, and, in the mixed case, the
	// client's own tool; turn 2 answers from the result.
	script := func(clientCall bool) map[string]any {
		calls := []map[string]any{{"name": "go__echo", "arguments": map[string]any{"message": "hi"}}}
		if clientCall {
			calls = append(calls, map[string]any{"name": "weather", "arguments": map[string]any{"city": "Paris"}})
		}
		return map[string]any{"server_tools": []string{"go/echo"}, "provider_options": map[string]any{
			"script": []map[string]any{{"text": "Let me ask. ", "tool_calls": calls}},
		}}
	}

	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey))
	params := openai.ChatCompletionNewParams{Model: "mock/echo", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("use the tool")}}
	weather := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "weather", Parameters: openai.FunctionParameters{"type": "object"},
	})}

	t.Run("openai, streamed", func(t *testing.T) {
		stream := oc.Chat.Completions.NewStreaming(ctxOf(t), params, ooption.WithJSONSet("llmrelay", script(false)))
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		m := acc.Choices[0]
		if m.Message.Content != "Let me ask. Echo: hi" || len(m.Message.ToolCalls) != 0 || m.FinishReason != "stop" {
			t.Errorf("reply %q, %d tool calls, finish %s", m.Message.Content, len(m.Message.ToolCalls), m.FinishReason)
		}
		// The finish log line counts the turns and the server's tool calls,
		// as the gRPC door's does.
		line := lines.next(t)
		for k, want := range map[string]string{"interface": "openai", "http.status": "200", "turns": "2", "tool_calls": "1", "tool_errors": "0"} {
			if line[k] != want {
				t.Errorf("finish line %s=%q, want %q (%v)", k, line[k], want, line)
			}
		}
	})

	t.Run("openai, streamed, with a call left to the client", func(t *testing.T) {
		p := params
		p.Tools = weather
		stream := oc.Chat.Completions.NewStreaming(ctxOf(t), p, ooption.WithJSONSet("llmrelay", script(true)))
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		m := acc.Choices[0]
		if len(m.Message.ToolCalls) != 1 || m.Message.ToolCalls[0].Function.Name != "weather" || m.FinishReason != "tool_calls" {
			t.Errorf("tool calls %+v, finish %s", m.Message.ToolCalls, m.FinishReason)
		}
	})

	t.Run("openai, not streamed, with a call left to the client", func(t *testing.T) {
		p := params
		p.Tools = weather
		c, err := oc.Chat.Completions.New(ctxOf(t), p, ooption.WithJSONSet("llmrelay", script(true)))
		if err != nil {
			t.Fatal(err)
		}
		m := c.Choices[0]
		if len(m.Message.ToolCalls) != 1 || m.Message.ToolCalls[0].Function.Name != "weather" || m.FinishReason != "tool_calls" {
			t.Errorf("reply %s", c.RawJSON())
		}
	})

	// A reply that is not streamed shows what the streamed one does: every
	// turn's text, not the last turn's alone.
	t.Run("openai, not streamed: every turn's text", func(t *testing.T) {
		c, err := oc.Chat.Completions.New(ctxOf(t), params, ooption.WithJSONSet("llmrelay", script(false)))
		if err != nil {
			t.Fatal(err)
		}
		m := c.Choices[0]
		if m.Message.Content != "Let me ask. Echo: hi" || len(m.Message.ToolCalls) != 0 || m.FinishReason != "stop" {
			t.Errorf("reply %s", c.RawJSON())
		}
	})

	t.Run("openai, not streamed, with a call left to the client: every turn's text", func(t *testing.T) {
		p := params
		p.Tools = weather
		c, err := oc.Chat.Completions.New(ctxOf(t), p, ooption.WithJSONSet("llmrelay", script(true)))
		if err != nil {
			t.Fatal(err)
		}
		// The turn that called the client's tool is the last: its text is
		// the reply's.
		if m := c.Choices[0]; m.Message.Content != "Let me ask. " {
			t.Errorf("reply %s", c.RawJSON())
		}
	})

	t.Run("openai responses, not streamed: every turn's text", func(t *testing.T) {
		r, err := oc.Responses.New(ctxOf(t), responses.ResponseNewParams{
			Model: "mock/echo", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("use the tool")},
		}, ooption.WithJSONSet("llmrelay", script(false)))
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "Let me ask. Echo: hi" || r.Status != responses.ResponseStatusCompleted {
			t.Errorf("response %s", r.RawJSON())
		}
	})

	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey))
	aparams := anthropic.MessageNewParams{
		Model: "mock/echo", MaxTokens: 256, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("use the tool"))},
	}

	t.Run("anthropic, streamed: each turn's text is a block", func(t *testing.T) {
		stream := ac.Messages.NewStreaming(ctxOf(t), aparams, aoption.WithJSONSet("llmrelay", script(false)))
		msg := accumulated(t, stream)
		if len(msg.Content) != 2 || msg.Content[0].Text != "Let me ask. " || msg.Content[1].Text != "Echo: hi" || msg.StopReason != "end_turn" {
			t.Errorf("message %s", msg.RawJSON())
		}
	})

	t.Run("anthropic, not streamed: each turn's text is a block", func(t *testing.T) {
		msg, err := ac.Messages.New(ctxOf(t), aparams, aoption.WithJSONSet("llmrelay", script(false)))
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.Content) != 2 || msg.Content[0].Text != "Let me ask. " || msg.Content[1].Text != "Echo: hi" || msg.StopReason != "end_turn" {
			t.Errorf("message %s", msg.RawJSON())
		}
	})
}
