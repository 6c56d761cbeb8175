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
	calls        []provider.ToolCall
	finish       provider.FinishReason
	usage        provider.Usage
}

var recordings = []recorded{
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
	{file: "openrouter_claude_reasoning_processing_comments.sse", text: "2 + 2 = 4", reasoning: "This is a simple arithmetic question. 2+2 equals 4.", format: provider.FormatReasoning,
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 43, OutputTokens: 36, ReasoningTokens: 13}},
	// OpenRouter counts grok-4's reasoning inside completion_tokens (874 =
	// 687 + 187): output stays 187.
	{file: "openrouter_grok4_usage_cached_reasoning.sse",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 687, OutputTokens: 187, ReasoningTokens: 118, CachedInputTokens: 679}},
	// An error after the finish reason ends nothing: the reply finished
	// (length) and its usage follows.
	{file: "openrouter_minimax_inband_error.sse", reasoning: "We need to respond to a greeting. The user", format: provider.FormatReasoning,
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
			pt.CheckRecorded(t, tc.file, r, act, pt.RecordedWant{Calls: tc.calls, Finish: tc.finish, Usage: tc.usage}, *update)
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
	got := r.Reasoning[0].Text
	if tc.reasoning != "" && got != tc.reasoning || !strings.Contains(got, tc.reasoningHas) || got == "" {
		t.Errorf("reasoning = %q, want %q (containing %q)", got, tc.reasoning, tc.reasoningHas)
	}
	if r.Text != "" && strings.Contains(r.Text, got) {
		t.Errorf("the reasoning leaked into the text %q", r.Text)
	}
}
