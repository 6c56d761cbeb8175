package openai_test

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// recorded is what a recorded real stream (testdata/recorded, see its
// SOURCES.md) must decode to. The whole event sequence is in the golden
// file testdata/golden/<file>.events; the fields here are the facts the
// recording was kept for.
type recorded struct {
	file string
	// text is the reply's text; reasoning the text of its reasoning
	// (one block) and format its format; refusal the refusal.
	text, reasoning, format, refusal string
	// reasoningHas, when set, is a piece the reasoning must contain (for
	// trimmed recordings, whose whole reasoning is not worth spelling out).
	reasoningHas string
	// encrypted: the reasoning is one encrypted block (OpenRouter's
	// reasoning.encrypted) with this id and upstream format, and no text.
	encrypted *provider.Reasoning
	calls     []provider.ToolCall
	finish    provider.FinishReason
	// stopSequence is the stop string the stream says ended it.
	stopSequence string
	usage        provider.Usage
}

var recordings = []recorded{
	// Hand-written (SOURCES.md): vLLM's stop_reason beside finish_reason
	// stop names the stop string that ended the reply; a token id (a
	// number) names none.
	{file: "vllm_stop_reason_string.handwritten.sse", text: "Thought: I should look it up.\nAction: search[vLLM]",
		finish: provider.FinishStop, stopSequence: "\nObservation:", usage: provider.Usage{InputTokens: 31, OutputTokens: 14}},
	{file: "vllm_stop_reason_token.handwritten.sse", text: "Thought: I should look it up.\nAction: search[vLLM]",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 31, OutputTokens: 14}},
	{file: "deepseek_reasoner_reasoning_content.sse", text: "Hello there! 😊 How can I help today?", format: provider.FormatReasoningContent, reasoningHas: "Hmm, the user just said",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 6, OutputTokens: 212, ReasoningTokens: 198}},
	{file: "deepseek_keepalive_before_first_chunk.composed.sse", text: "Hello there! 😊 How can I help today?", format: provider.FormatReasoningContent, reasoningHas: "Hmm, the user just said",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 6, OutputTokens: 212, ReasoningTokens: 198}},
	{file: "deepseek_reasoner_tool_call.sse", format: provider.FormatReasoningContent, reasoningHas: "weather",
		calls:  []provider.ToolCall{{ID: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", Name: "weather", Arguments: `{"location": "San Francisco"}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 339, OutputTokens: 83, ReasoningTokens: 39, CachedInputTokens: 320}},
	// xAI counts reasoning outside completion_tokens (total 354 = 12 + 2
	// + 340): output is 2 + 340.
	{file: "xai_grok3mini_reasoning_content.sse", format: provider.FormatReasoningContent, reasoningHas: "First, the user said",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 12, OutputTokens: 342, ReasoningTokens: 340, CachedInputTokens: 11}},
	{file: "qwen3max_reasoning_content.sse", format: provider.FormatReasoningContent, reasoningHas: "",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 24, OutputTokens: 1355, ReasoningTokens: 1084}},
	{file: "groq_qwen3_delta_reasoning.sse", format: provider.FormatReasoning,
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 17, OutputTokens: 1107, ReasoningTokens: 963}},
	// gpt-oss on Groq, the attempt after its tool_use_failed: reasoning
	// (with Groq's `channel` field), then a whole tool call in one fragment.
	{file: "groq_gptoss_tool_call_second_try.sse", format: provider.FormatReasoning, reasoningHas: "",
		calls:  []provider.ToolCall{{ID: "fc_bfb39741-3748-4def-9886-a93fc9c64a90", Name: "get_something_by_name", Arguments: `{"name":"example"}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 304, OutputTokens: 49, ReasoningTokens: 23}},
	// OpenRouter's reasoning_details carry the reasoning (delta.reasoning
	// repeats their text, and is not read twice), with Claude's signature.
	{file: "openrouter_claude_reasoning_processing_comments.sse", text: "2 + 2 = 4", reasoning: "This is a simple arithmetic question. 2+2 equals 4.", format: provider.FormatOpenRouterDetails,
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 43, OutputTokens: 36, ReasoningTokens: 13}},
	// OpenRouter counts grok-4's reasoning inside completion_tokens (874 =
	// 687 + 187): output stays 187. Its reasoning is encrypted.
	{file: "openrouter_grok4_usage_cached_reasoning.sse", format: provider.FormatOpenRouterDetails,
		encrypted: &provider.Reasoning{ID: "rs_619f3702-e30e-6ba5-7b57-466db8036365_us-east-1", ProviderFormat: "xai-responses-v1"},
		finish:    provider.FinishStop, usage: provider.Usage{InputTokens: 687, OutputTokens: 187, ReasoningTokens: 118, CachedInputTokens: 679}},
	{file: "openrouter_o3_reasoning_encrypted.sse", text: "I’m ChatGPT, a large-language-model assistant created by OpenAI. I generate text responses and can help answer questions, explain concepts, brainstorm ideas, draft or edit writing, and more. While I strive to be accurate and helpful, I don’t have personal feelings or consciousness, and my knowledge is limited to the information I was trained on (most of it up to late 2023). If there’s something specific you’d like help with, just let me know!", format: provider.FormatOpenRouterDetails,
		encrypted: &provider.Reasoning{ID: "rs_0aa4f2c435e6d1dc0169082486816c8193a029b5fc4ef1764f", ProviderFormat: "openai-responses-v1"},
		finish:    provider.FinishStop, usage: provider.Usage{InputTokens: 9, OutputTokens: 104}},
	// An error after the finish reason ends nothing: the reply finished
	// (length) and its usage follows.
	{file: "openrouter_minimax_inband_error.sse", reasoning: "We need to respond to a greeting. The user", format: provider.FormatOpenRouterDetails,
		finish: provider.FinishLength, usage: provider.Usage{InputTokens: 43, OutputTokens: 10, ReasoningTokens: 11}},
	{file: "magistral_medium_thinking_parts_then_string.sse", format: provider.FormatMistralThinking, reasoningHas: "Okay, the user is",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 10, OutputTokens: 232}},
	{file: "magistral_medium_2507_thinking_and_text_parts.sse", text: "2 + 2 = 4",
		reasoning: "The user is asking for 2+2. This is basic arithmetic. 2+2=4.", format: provider.FormatMistralThinking,
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 10, OutputTokens: 46}},
	{file: "openai_gpt4o_refusal.sse", refusal: "I'm sorry, I can't assist with that request.",
		finish: provider.FinishRefusal, usage: provider.Usage{InputTokens: 79, OutputTokens: 11}},
	{file: "azure_prompt_filter_results.sse", text: "Capital of Denmark.",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 15, OutputTokens: 78, ReasoningTokens: 64}},
	{file: "qwen3max_tool_call_later_fragments_empty_id.sse",
		calls:  []provider.ToolCall{{ID: "call_eee11723464a4b9eb8cee71d", Name: "weather", Arguments: `{"location": "San Francisco"}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 295, OutputTokens: 22}},
	{file: "mistral_glm_tool_call_later_fragment_empty_name.sse",
		calls:  []provider.ToolCall{{Name: "webSearchTool", Arguments: `{"query": "current Berlin weather"}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 171, OutputTokens: 14, CachedInputTokens: 128}},
	{file: "tool_call_name_after_id.handwritten.sse",
		calls:  []provider.ToolCall{{ID: "call_late_name_0", Name: "get_weather", Arguments: `{"city": "Paris"}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 52, OutputTokens: 17}},
}

// TestRecordedStreams replays each recorded real stream over loopback HTTP
// and checks what the adapter makes of it: text, reasoning (never in the
// text), refusal, tool calls assembled from split fragments, usage by the
// documented rule, the finish reason, and the whole event sequence against
// its golden file (go test -update rewrites them).
func TestRecordedStreams(t *testing.T) {
	for _, tc := range recordings {
		t.Run(strings.TrimSuffix(tc.file, ".sse"), func(t *testing.T) {
			r, act := pt.ReplayRecorded(t, tc.file, newProvider, pt.NewRequest("recorded"))
			if r.Err != nil {
				t.Fatalf("stream failed: %v", r.Err)
			}
			if tc.text != "" && r.Text != tc.text || tc.text == "" && len(tc.calls) > 0 && strings.TrimSpace(r.Text) != "" {
				t.Errorf("text = %q, want %q", r.Text, tc.text)
			}
			if r.Refusal != tc.refusal {
				t.Errorf("refusal = %q, want %q", r.Refusal, tc.refusal)
			}
			checkReasoning(t, r, tc)
			pt.CheckRecorded(t, tc.file, r, act, pt.RecordedWant{Calls: tc.calls, Finish: tc.finish, StopSequence: tc.stopSequence, Usage: tc.usage}, *update)
		})
	}
}

func checkReasoning(t *testing.T, r pt.Result, tc recorded) {
	t.Helper()
	if tc.format == "" {
		if len(r.Reasoning) != 0 {
			t.Errorf("reasoning %+v, want none", r.Reasoning)
		}
		return
	}
	if len(r.Reasoning) != 1 || r.Reasoning[0].Format != tc.format {
		t.Fatalf("reasoning %+v, want one block of format %s", r.Reasoning, tc.format)
	}
	if e := tc.encrypted; e != nil {
		if b := r.Reasoning[0]; b.Text != "" || b.Redacted == "" || b.Kind != "reasoning.encrypted" || b.ID != e.ID || b.ProviderFormat != e.ProviderFormat {
			t.Errorf("reasoning %+v, want an encrypted block with id %s and format %s", b, e.ID, e.ProviderFormat)
		}
		return
	}
	got := r.Reasoning[0].Text
	if tc.reasoning != "" && got != tc.reasoning || !strings.Contains(got, tc.reasoningHas) || got == "" {
		t.Errorf("reasoning = %q, want %q (containing %q)", got, tc.reasoning, tc.reasoningHas)
	}
	if r.Text != "" && strings.Contains(r.Text, got) {
		t.Errorf("the reasoning leaked into the text %q", r.Text)
	}
}

// TestGroqToolUseFailed: Groq reports a tool call the model got wrong as an
// `error` event under HTTP 200, type invalid_request_error, code
// tool_use_failed, status_code 400, after the model's reasoning (both
// recorded: arguments that do not fit the tool's schema, and no call where
// tool_choice required one). It is the model's output the provider
// refused, not the request: ClassInvalidOutput, which the plan retries
// once per call, with the 400 it stands for and Groq's message.
func TestGroqToolUseFailed(t *testing.T) {
	for file, message := range map[string]string{
		"groq_gptoss_tool_use_failed.sse":         "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema",
		"groq_gptoss_tool_use_failed_no_call.sse": "Tool choice is required, but model did not call a tool",
	} {
		t.Run(strings.TrimSuffix(file, ".sse"), func(t *testing.T) {
			r, _ := pt.ReplayRecorded(t, file, newProvider, pt.NewRequest("openai/gpt-oss-120b"))
			pe := pt.ProviderError(r.Err)
			if pe == nil || pe.Kind != provider.KindInStream || pe.FailureClass() != provider.ClassInvalidOutput || pe.Status != 400 ||
				pe.Code != "tool_use_failed" || !strings.HasPrefix(pe.Message, message) {
				t.Fatalf("error %#v, want an in-stream invalid-output error (400, tool_use_failed) saying %q", pe, message)
			}
			if len(r.Reasoning) != 1 || r.Reasoning[0].Text == "" || len(r.ToolCalls) != 0 {
				t.Errorf("before the error: reasoning %+v, calls %+v; want the streamed reasoning and no call", r.Reasoning, r.ToolCalls)
			}
		})
	}
}
