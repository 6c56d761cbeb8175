package httpapi_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// TestServerToolsStreamedOrNotAlike: a call that runs server tools over
// two turns, each of which reasons and speaks, reaches an SDK as the same
// reply whether it streamed or not: OpenAI Responses' response (as
// response.completed carries it) has the same items in the same order,
// their ids apart; Chat Completions' message the same text and
// reasoning; Anthropic's message the same blocks in the same order.
func TestServerToolsStreamedOrNotAlike(t *testing.T) {
	g := mcptest.NewGoServer(t)
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Tools.MCPServers = []servertools.ServerConfig{{Name: "go", URL: g.URL, Allow: []string{"*"}, Timeout: 2 * time.Minute}}
		cfg.Auth.Keys[0].Tools = []string{"go/*"}
	})
	// mock/think reasons in every turn. Turn 1 says something and calls
	// go/echo; turn 2 answers from its result, or, in the mixed case, says
	// something more and calls the client's own tool, or calls go/echo
	// again, past max_tool_turns (an incomplete response).
	echo := map[string]any{"name": "go__echo", "arguments": map[string]any{"message": "hi"}}
	scripts := map[string]map[string]any{
		"answered": {"script": []map[string]any{{"text": "Let me ask. ", "tool_calls": []any{echo}}}},
		"a call left to the client": {"script": []map[string]any{
			{"text": "Let me ask. ", "tool_calls": []any{echo}},
			{"text": "Now the weather. ", "tool_calls": []any{map[string]any{"name": "weather", "arguments": map[string]any{"city": "Paris"}}}},
		}},
		"stopped at max_tool_turns": {"max_tool_turns": 1, "script": []map[string]any{
			{"text": "Let me ask. ", "tool_calls": []any{echo}},
			{"text": "Once more. ", "tool_calls": []any{echo}},
		}},
	}
	ext := func(s map[string]any) map[string]any {
		e := map[string]any{"server_tools": []string{"go/echo"}, "provider_options": map[string]any{"script": s["script"]}}
		if n, ok := s["max_tool_turns"]; ok {
			e["max_tool_turns"] = n
		}
		return e
	}
	const prompt = "use the tool"

	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey))
	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey))
	for name, script := range scripts {
		opt := ooption.WithJSONSet("llmrelay", ext(script))

		t.Run("openai responses, "+name, func(t *testing.T) {
			params := responses.ResponseNewParams{
				Model: "mock/think", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(prompt)},
				Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "weather", Parameters: map[string]any{"type": "object"}}}},
			}
			streamed, err := readResponseStream(t, oc.Responses.NewStreaming(ctxOf(t), params, opt))
			if err != nil {
				t.Fatal(err)
			}
			whole, err := oc.Responses.New(ctxOf(t), params, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, want := withoutIDs(t, whole.RawJSON()), withoutIDs(t, streamed.terminal.RawJSON())
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got["output"])
				w, _ := json.Marshal(want["output"])
				t.Errorf("the response not streamed, %s:\n%s\nis not the stream's, %s:\n%s", whole.Status, g, streamed.terminal.Status, w)
			}
			if _, stopped := scripts[name]["max_tool_turns"]; stopped != (whole.Status == responses.ResponseStatusIncomplete) {
				t.Errorf("status %s", whole.Status)
			}
			if n := len(whole.Output); n < 4 {
				t.Errorf("%d items, want each turn's reasoning and text: %s", n, whole.RawJSON())
			}
		})

		t.Run("openai chat completions, "+name, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{
				Model: "mock/think", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
					Name: "weather", Parameters: openai.FunctionParameters{"type": "object"},
				})},
			}
			stream := oc.Chat.Completions.NewStreaming(ctxOf(t), params, opt)
			var acc openai.ChatCompletionAccumulator
			streamedReasoning := ""
			for stream.Next() {
				chunk := stream.Current()
				acc.AddChunk(chunk)
				for _, c := range chunk.Choices {
					if f, ok := c.Delta.JSON.ExtraFields["reasoning_content"]; ok {
						var s string
						_ = json.Unmarshal([]byte(f.Raw()), &s)
						streamedReasoning += s
					}
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			whole, err := oc.Chat.Completions.New(ctxOf(t), params, opt)
			if err != nil {
				t.Fatal(err)
			}
			s, w := acc.Choices[0], whole.Choices[0]
			var wholeReasoning string
			_ = json.Unmarshal([]byte(w.Message.JSON.ExtraFields["reasoning_content"].Raw()), &wholeReasoning)
			calls := func(tcs []openai.ChatCompletionMessageToolCallUnion) (out []string) {
				for _, tc := range tcs {
					out = append(out, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
				}
				return out
			}
			if w.Message.Content != s.Message.Content || wholeReasoning != streamedReasoning || w.FinishReason != s.FinishReason ||
				!reflect.DeepEqual(calls(w.Message.ToolCalls), calls(s.Message.ToolCalls)) {
				t.Errorf("not streamed: %q, reasoning %q, calls %q, %s; streamed: %q, reasoning %q, calls %q, %s",
					w.Message.Content, wholeReasoning, calls(w.Message.ToolCalls), w.FinishReason,
					s.Message.Content, streamedReasoning, calls(s.Message.ToolCalls), s.FinishReason)
			}
			if wholeReasoning == "" || w.Message.Content == "" {
				t.Errorf("no text or reasoning: %s", whole.RawJSON())
			}
		})

		t.Run("anthropic, "+name, func(t *testing.T) {
			params := anthropic.MessageNewParams{
				Model: "mock/think", MaxTokens: 256, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "weather", InputSchema: anthropic.ToolInputSchemaParam{}}}},
			}
			aopt := aoption.WithJSONSet("llmrelay", ext(script))
			streamed := accumulated(t, ac.Messages.NewStreaming(ctxOf(t), params, aopt))
			whole, err := ac.Messages.New(ctxOf(t), params, aopt)
			if err != nil {
				t.Fatal(err)
			}
			got, want := blocks(whole), blocks(&streamed)
			if !reflect.DeepEqual(got, want) || whole.StopReason != streamed.StopReason {
				t.Errorf("not streamed, %s:\n%q\nstreamed, %s:\n%q", whole.StopReason, got, streamed.StopReason, want)
			}
			if len(got) < 4 {
				t.Errorf("%d blocks, want each turn's thinking and text: %q", len(got), got)
			}
		})
	}
}

// withoutIDs is a response as JSON values, without the members that
// differ from one call to the next: its id, its time, its items' ids.
func withoutIDs(t *testing.T, raw string) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	delete(r, "id")
	delete(r, "created_at")
	items, _ := r["output"].([]any)
	for _, it := range items {
		delete(it.(map[string]any), "id")
	}
	return r
}

// blocks are a message's content blocks as the SDK reads them.
func blocks(m *anthropic.Message) []string {
	var out []string
	for _, b := range m.Content {
		input, _ := json.Marshal(b.Input)
		out = append(out, b.Type+"|"+b.Text+"|"+b.Thinking+"|"+b.Signature+"|"+b.ID+"|"+b.Name+"|"+string(input))
	}
	return out
}
