package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestSDKParallelToolCallsReachAnthropic: openai-go's parallel_tool_calls
// false, through the OpenAI door to an anthropic provider, arrives as
// tool_choice.disable_parallel_tool_use, Anthropic's switch for at most
// one tool call per reply; true, or unset, sends nothing. The loopback
// upstream refuses, as Anthropic does, a body member the Messages API does
// not know, such as parallel_tool_calls itself.
func TestSDKParallelToolCallsReachAnthropic(t *testing.T) {
	sse, err := os.ReadFile("../provider/anthropic/testdata/tool_calls.sse")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"model": true, "max_tokens": true, "system": true, "messages": true, "stream": true,
		"temperature": true, "top_p": true, "stop_sequences": true, "tools": true, "tool_choice": true}
	var claude *pt.Upstream
	claude = pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(claude.Requests()[n].Body, &body); err != nil {
			return pt.Reply{Status: http.StatusBadRequest, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"not JSON"}}`)}
		}
		for k := range body {
			if !known[k] {
				return pt.Reply{Status: http.StatusBadRequest, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"` + k + `: Extra inputs are not permitted"}}`)}
			}
		}
		return pt.Reply{Body: sse}
	})
	t.Setenv("LLMRELAY_TEST_CLAUDE_KEY", "sk-ant-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "claude", Kind: "anthropic", BaseURL: claude.URL, APIKeyEnv: "LLMRELAY_TEST_CLAUDE_KEY"})
	})
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))

	tests := []struct {
		name     string
		parallel param.Opt[bool]
		want     any // tool_choice.disable_parallel_tool_use, nil for absent
	}{
		{"parallel_tool_calls false", openai.Bool(false), true},
		{"parallel_tool_calls true", openai.Bool(true), nil},
		{"parallel_tool_calls unset", param.Opt[bool]{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(claude.Requests())
			c, err := client.Chat.Completions.New(ctxOf(t), openai.ChatCompletionNewParams{
				Model:    "claude/claude-sonnet-4-5",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather and the time in Paris?")},
				Tools: []openai.ChatCompletionToolUnionParam{
					openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object"}}),
					openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_time", Parameters: openai.FunctionParameters{"type": "object"}}),
				},
				ParallelToolCalls: tc.parallel,
			})
			if err != nil {
				var apiErr *openai.Error
				if errors.As(err, &apiErr) {
					t.Fatal(apiErr.RawJSON())
				}
				t.Fatal(err)
			}
			if c.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("finish_reason %q, want tool_calls", c.Choices[0].FinishReason)
			}
			reqs := claude.Requests()
			if len(reqs) != n+1 {
				t.Fatalf("the upstream got %d requests, want 1", len(reqs)-n)
			}
			var body struct {
				ToolChoice map[string]any `json:"tool_choice"`
			}
			if err := json.Unmarshal(reqs[n].Body, &body); err != nil {
				t.Fatal(err)
			}
			if got := body.ToolChoice["disable_parallel_tool_use"]; got != tc.want || body.ToolChoice["type"] != "auto" {
				t.Errorf("tool_choice %v, want type auto and disable_parallel_tool_use %v", body.ToolChoice, tc.want)
			}
		})
	}
}

// interleavedCalls is an OpenAI Chat Completions stream of two parallel
// tool calls whose fragments interleave, as some OpenAI-compatible
// servers send them: both calls start, then their arguments come in
// turns.
const interleavedCalls = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":\"Europe/"}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}

data: [DONE]

`

// TestOpenAIResponsesSDKInterleavedToolCalls: parallel tool calls whose
// fragments interleave upstream reach openai-go's Responses stream whole:
// each call's item takes all its arguments before it is done, and
// response.completed has both calls with their arguments. The door used
// to end the first call's item when the second call started, with
// arguments "", and send its arguments after it was done, so that
// response.completed (which the SDKs' stream helpers return) lost them.
func TestOpenAIResponsesSDKInterleavedToolCalls(t *testing.T) {
	upstream := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: []byte(interleavedCalls)} })
	t.Setenv("LLMRELAY_TEST_GPT_KEY", "sk-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gpt", Kind: "openai", BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_GPT_KEY"})
	})
	client := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0))
	want := map[string]string{"call_a": `{"city":"Paris"}`, "call_b": `{"tz":"Europe/Paris"}`}

	stream := client.Responses.NewStreaming(ctxOf(t), responses.ResponseNewParams{
		Model: "gpt/gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather and the time in Paris?")},
		Tools: []responses.ToolUnionParam{
			responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false),
			responses.ToolParamOfFunction("get_time", map[string]any{"type": "object"}, false),
		},
	})
	calls := map[string]string{}    // item id: call id
	streamed := map[string]string{} // item id: the arguments of its deltas
	done := map[string]bool{}       // item id: its output_item.done came
	var completed responses.Response
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.output_item.added":
			calls[ev.Item.ID] = ev.Item.CallID
		case "response.function_call_arguments.delta":
			if done[ev.ItemID] {
				t.Errorf("arguments %q for item %s after it was done", ev.Delta, ev.ItemID)
			}
			streamed[ev.ItemID] += ev.Delta
		case "response.output_item.done":
			done[ev.Item.ID] = true
			if got := ev.Item.Arguments.OfString; got != want[ev.Item.CallID] {
				t.Errorf("item %s done with arguments %q, want %q", ev.Item.CallID, got, want[ev.Item.CallID])
			}
		case "response.completed":
			completed = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for id, call := range calls {
		if streamed[id] != want[call] || !done[id] {
			t.Errorf("call %s streamed %q (done %v), want %q", call, streamed[id], done[id], want[call])
		}
	}
	var got []string
	for _, item := range completed.Output {
		c := item.AsFunctionCall()
		got = append(got, c.CallID+" "+c.Arguments)
	}
	if wantOutput := []string{`call_a {"city":"Paris"}`, `call_b {"tz":"Europe/Paris"}`}; !slices.Equal(got, wantOutput) {
		t.Errorf("response.completed's output %q, want %q", got, wantOutput)
	}
}

// callFragment is one fragment of an OpenAI Chat Completions stream: a
// tool call's, with the call's index, and its id and name when it starts
// it; or text.
type callFragment struct {
	index                int
	id, name, args, text string
}

// callChunks is an OpenAI Chat Completions stream with a chunk for each
// fragment, in the order given, that ends with finish_reason tool_calls.
func callChunks(t *testing.T, frags ...callFragment) []byte {
	t.Helper()
	var b []byte
	chunk := func(delta any, finish any) {
		c, err := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(append(b, "data: "...), c...), "\n\n"...)
	}
	chunk(map[string]any{"role": "assistant", "content": nil}, nil)
	for _, f := range frags {
		if f.text != "" {
			chunk(map[string]any{"content": f.text}, nil)
			continue
		}
		call := map[string]any{"index": f.index, "function": map[string]any{"arguments": f.args}}
		if f.id != "" {
			call["id"], call["type"] = f.id, "function"
			call["function"].(map[string]any)["name"] = f.name
		}
		chunk(map[string]any{"tool_calls": []any{call}}, nil)
	}
	chunk(map[string]any{}, "tool_calls")
	return append(b, "data: [DONE]\n\n"...)
}

// TestAnthropicSDKInterleavedToolCalls: parallel tool calls whose
// fragments interleave upstream reach anthropic-sdk-go's stream in
// Anthropic's block order: one block open at a time, a call's block
// started only once the block before it stopped, no delta to a block
// after its stop, and each call's input what the upstream sent. The door
// used to stop the first call's block when the second call started and
// send the rest of its arguments to it after its content_block_stop,
// which clients with a strict state machine refuse.
func TestAnthropicSDKInterleavedToolCalls(t *testing.T) {
	tests := []struct {
		name     string
		upstream []byte
		want     []string // each block's id and input (text: "text" and the text), in order
	}{
		{"two calls in turns", []byte(interleavedCalls),
			[]string{`call_a {"city":"Paris"}`, `call_b {"tz":"Europe/Paris"}`}},
		{"the first call's arguments end last", callChunks(t,
			callFragment{index: 0, id: "call_a", name: "get_weather"},
			callFragment{index: 1, id: "call_b", name: "get_time"},
			callFragment{index: 2, id: "call_c", name: "search"},
			callFragment{index: 0, args: `{"city":`},
			callFragment{index: 1, args: `{"tz":"UTC"}`},
			callFragment{index: 2, args: `{"q":`},
			callFragment{index: 2, args: `"rain"}`},
			callFragment{index: 0, args: `"Paris"}`}),
			[]string{`call_a {"city":"Paris"}`, `call_b {"tz":"UTC"}`, `call_c {"q":"rain"}`}},
		{"the first call's arguments never whole", callChunks(t,
			callFragment{index: 0, id: "call_a", name: "get_weather"},
			callFragment{index: 1, id: "call_b", name: "get_time"},
			callFragment{index: 0, args: `{"city":"Paris"`},
			callFragment{index: 1, args: `{"tz":"UTC"}`}),
			[]string{`call_a {"city":"Paris"`, `call_b {"tz":"UTC"}`}},
		{"text while a call waits", callChunks(t,
			callFragment{index: 0, id: "call_a", name: "get_weather"},
			callFragment{index: 1, id: "call_b", name: "get_time"},
			callFragment{index: 0, args: `{"city":`},
			callFragment{index: 1, args: `{"tz":"UTC"}`},
			callFragment{text: "Checking."}),
			[]string{`call_a {"city":`, `call_b {"tz":"UTC"}`, `text Checking.`}},
	}
	upstream := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply { return pt.Reply{Body: tests[n].upstream} })
	t.Setenv("LLMRELAY_TEST_GPT_KEY", "sk-test")
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "gpt", Kind: "openai", BaseURL: upstream.URL, APIKeyEnv: "LLMRELAY_TEST_GPT_KEY"})
	})
	client := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0))
	tools := []anthropic.ToolUnionParam{
		{OfTool: &anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{}}},
		{OfTool: &anthropic.ToolParam{Name: "get_time", InputSchema: anthropic.ToolInputSchemaParam{}}},
		{OfTool: &anthropic.ToolParam{Name: "search", InputSchema: anthropic.ToolInputSchemaParam{}}},
	}

	for _, tc := range tests { // in order: the upstream answers request n with tests[n]
		t.Run(tc.name, func(t *testing.T) {
			stream := client.Messages.NewStreaming(ctxOf(t), anthropic.MessageNewParams{
				Model: "gpt/gpt-4o-mini", MaxTokens: 256, Tools: tools,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather and the time in Paris?"))},
			})
			var msg anthropic.Message
			open := -1                   // the open block's index, -1 for none
			streamed := map[int]string{} // a block's partial_json, joined
			for stream.Next() {
				ev := stream.Current()
				index := int(ev.Index)
				switch ev.Type {
				case "content_block_start":
					if open != -1 {
						t.Errorf("block %d starts while block %d is open", index, open)
					}
					open = index
				case "content_block_delta":
					if index != open {
						t.Errorf("%s %q to block %d while block %d is open", ev.Delta.Type, ev.Delta.PartialJSON, index, open)
					}
					streamed[index] += ev.Delta.PartialJSON
				case "content_block_stop":
					if index != open {
						t.Errorf("stop of block %d while block %d is open", index, open)
					}
					open = -1
				}
				if err := msg.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if open != -1 {
				t.Errorf("block %d never stopped", open)
			}
			var got []string
			for i, block := range msg.Content {
				if block.Type == "text" {
					got = append(got, "text "+block.Text)
					continue
				}
				got = append(got, block.ID+" "+streamed[i])
			}
			if !slices.Equal(got, tc.want) || msg.StopReason != "tool_use" {
				t.Errorf("blocks %q (stop_reason %s), want %q", got, msg.StopReason, tc.want)
			}
		})
	}
}
