package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"testing"

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
