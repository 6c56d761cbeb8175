package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

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
