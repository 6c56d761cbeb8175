package anthropic_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// recorded is what a recorded real stream (testdata/recorded, see its
// SOURCES.md) must decode to; the whole event sequence is in the golden
// file testdata/golden/<file>.events.
type recorded struct {
	file string
	// textHas is a piece the reply's text contains.
	textHas string
	// thinking is the reasoning blocks: the text of a thinking block (or
	// "" for a redacted one) and the length of its signature or data.
	thinking []thinkingBlock
	calls    []provider.ToolCall
	finish   provider.FinishReason
	// stopSequence is the stop sequence the stream says ended it.
	stopSequence string
	usage        provider.Usage
}

type thinkingBlock struct {
	text         string
	textHas      string
	signature    int // length
	redactedData int // length
}

const turn1Thinking = "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a short joke about it\n\nLet me first call the fixed_version tool to see what version it returns."

var recordings = []recorded{
	{file: "thinking_tool_use_turn1.sse",
		thinking: []thinkingBlock{{text: turn1Thinking, signature: 524}},
		calls:    []provider.ToolCall{{ID: "toolu_01825dXWLSoJwCst1qTsiWdb", Name: "fixed_version", Arguments: "{}"}},
		finish:   provider.FinishToolCalls, usage: provider.Usage{InputTokens: 598, OutputTokens: 92, ReasoningTokens: 53}},
	{file: "thinking_tool_use_turn2.sse", textHas: "0.32a0",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 707, OutputTokens: 89}},
	{file: "redacted_thinking.sse", textHas: "I notice that you've sent what appears to be",
		thinking: []thinkingBlock{{redactedData: 744}, {redactedData: 296}},
		finish:   provider.FinishStop, usage: provider.Usage{InputTokens: 92, OutputTokens: 189}},
	{file: "thinking_text_pings.sse", textHas: "",
		thinking: []thinkingBlock{{textHas: "", signature: 504}},
		finish:   provider.FinishStop, usage: provider.Usage{InputTokens: 43, OutputTokens: 282}},
	// Server tools: server_tool_use and web_search_tool_result blocks are
	// the provider's own, never client tool calls.
	{file: "web_search_server_tool.sse",
		thinking: []thinkingBlock{{textHas: "", signature: -1}},
		finish:   provider.FinishStop, usage: provider.Usage{InputTokens: 22397, OutputTokens: 637}},
	{file: "mcp_tool_use_and_result.sse",
		thinking: []thinkingBlock{{textHas: "", signature: -1}},
		finish:   provider.FinishStop, usage: provider.Usage{InputTokens: 3042, OutputTokens: 354}},
	// The last usage is the bill: cache reads 6289 and writes 3337 are
	// input too.
	{file: "code_execution_prompt_cache_usage.sse",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 6 + 3337 + 6289, OutputTokens: 198, CachedInputTokens: 6289, CacheCreationInputTokens: 3337}},
	// A paused turn: thinking, text, ten web searches run by Anthropic
	// (server_tool_use + web_search_tool_result, results whole in their
	// start events), text between them, and an eleventh search left
	// without its result when the turn paused.
	{file: "pause_turn_web_search.sse", textHas: "Let me continue with the remaining searches",
		thinking: []thinkingBlock{{textHas: "The user wants me to run a series of web searches", signature: -1}},
		finish:   provider.FinishPaused, usage: provider.Usage{InputTokens: 404500, OutputTokens: 943, ReasoningTokens: 261}},
	// Composed (SOURCES.md): thinking, a tool call, thinking again, a
	// second tool call.
	{file: "interleaved_thinking_two_tools.composed.sse",
		thinking: []thinkingBlock{{text: turn1Thinking, signature: 524}, {textHas: "call get_weather", signature: -1}},
		calls: []provider.ToolCall{{ID: "toolu_01825dXWLSoJwCst1qTsiWdb", Name: "fixed_version", Arguments: "{}"},
			{ID: "toolu_handwritten_second_call", Name: "get_weather", Arguments: `{"city": "Paris"}`}},
		finish: provider.FinishToolCalls, usage: provider.Usage{InputTokens: 598, OutputTokens: 92, ReasoningTokens: 53}},
	// With compaction, the top-level usage is the last iteration only: the
	// bill is the sum of the iterations.
	{file: "compaction_block_cache_read.sse", textHas: "Hello!",
		finish: provider.FinishStop, usage: provider.Usage{InputTokens: 100 + 55096 + 181, OutputTokens: 83 + 8, CachedInputTokens: 55096}},
	// Composed (SOURCES.md): a reply ended by a stop sequence, which
	// message_delta names; the text stops before it.
	{file: "stop_sequence.composed.sse", textHas: "The version is **",
		finish: provider.FinishStop, stopSequence: "0.32a0", usage: provider.Usage{InputTokens: 707, OutputTokens: 5}},
}

// TestRecordedStreams replays each recorded real stream over loopback HTTP
// and checks what the adapter makes of it: thinking with its signature and
// redacted thinking kept opaque as reasoning (never text), pings and
// server-tool blocks that produce nothing, client tool calls only, usage
// with cache reads and writes, and the whole event sequence against its
// golden file (go test -update rewrites them).
func TestRecordedStreams(t *testing.T) {
	for _, tc := range recordings {
		t.Run(strings.TrimSuffix(tc.file, ".sse"), func(t *testing.T) {
			r, act := pt.ReplayRecorded(t, tc.file, newProvider, pt.NewRequest("recorded"))
			if r.Err != nil {
				t.Fatalf("stream failed: %v", r.Err)
			}
			if !strings.Contains(r.Text, tc.textHas) || r.Text == "" && tc.calls == nil {
				t.Errorf("text = %q, want it to contain %q", r.Text, tc.textHas)
			}
			if len(r.Reasoning) != len(tc.thinking) {
				t.Fatalf("reasoning %+v, want %d blocks", r.Reasoning, len(tc.thinking))
			}
			for i, want := range tc.thinking {
				got := r.Reasoning[i]
				switch {
				case got.Format != provider.FormatAnthropic:
					t.Errorf("block %d format %q, want anthropic", i, got.Format)
				case want.redactedData > 0 && (len(got.Redacted) != want.redactedData || got.Text != "" || got.Signature != ""):
					t.Errorf("block %d: %d bytes of redacted data, text %q; want %d bytes, no text", i, len(got.Redacted), got.Text, want.redactedData)
				case want.redactedData == 0 && (got.Text == "" || want.text != "" && got.Text != want.text || !strings.Contains(got.Text, want.textHas)):
					t.Errorf("block %d text %q, want %q", i, got.Text, want.text)
				case want.signature > 0 && len(got.Signature) != want.signature || want.signature < 0 && got.Signature == "":
					t.Errorf("block %d signature of %d bytes, want %d", i, len(got.Signature), want.signature)
				}
				if got.Text != "" && strings.Contains(r.Text, got.Text) || got.Redacted != "" && strings.Contains(r.Text, got.Redacted) {
					t.Errorf("reasoning block %d leaked into the text", i)
				}
			}
			pt.CheckRecorded(t, tc.file, r, act, pt.RecordedWant{Calls: tc.calls, Finish: tc.finish, StopSequence: tc.stopSequence, Usage: tc.usage}, *update)
		})
	}
}

// turn2Request reads a recorded follow-up request body: its assistant
// turn's content blocks and its thinking option.
func turn2Request(t *testing.T, file string) (assistant []map[string]any, thinking map[string]any) {
	t.Helper()
	b, err := os.ReadFile("testdata/recorded/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
		Thinking map[string]any `json:"thinking"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		if m.Role == "assistant" {
			return m.Content, body.Thinking
		}
	}
	t.Fatalf("%s has no assistant turn", file)
	return nil, nil
}

// sentAssistant returns the assistant turn's content blocks of a request
// body the adapter sent.
func sentAssistant(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var sent struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	for _, m := range sent.Messages {
		if m.Role == "assistant" {
			return m.Content
		}
	}
	t.Fatal("the request has no assistant turn")
	return nil
}

// TestThinkingToolUseRoundTrip plays the recorded two-turn conversation:
// turn 1's reply (thinking, its signature, a tool call), decoded, goes
// back as the assistant turn of turn 2. The assistant turn the adapter
// sends must be the one the real API accepted in the recorded turn 2
// request, block for block and byte for byte (thinking text and signature
// unchanged, thinking before tool_use); the whole body is a golden file.
func TestThinkingToolUseRoundTrip(t *testing.T) {
	turn1, _ := pt.ReplayRecorded(t, "thinking_tool_use_turn1.sse", newProvider, pt.NewRequest("claude-haiku-4-5-20251001"))
	if turn1.Err != nil {
		t.Fatal(turn1.Err)
	}
	want, thinking := turn2Request(t, "thinking_tool_use_turn2.request.json")
	maxTokens, temp := 64000, 1.0
	req := &provider.Request{
		Model: "claude-haiku-4-5-20251001",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "Use the fixed_version tool. Then tell me the version and make one short joke about it. Think about it first."},
			{Role: provider.RoleAssistant, Content: turn1.Text, Reasoning: turn1.Reasoning, ToolCalls: turn1.ToolCalls},
			{Role: provider.RoleTool, ToolCallID: turn1.ToolCalls[0].ID, Content: "0.32a0"},
		},
		Tools:      []provider.Tool{{Name: "fixed_version", Description: "Return a fixed test version string", Parameters: json.RawMessage(`{"properties":{},"type":"object"}`)}},
		Generation: provider.Generation{MaxOutputTokens: &maxTokens, Temperature: &temp},
		Options:    map[string]any{"thinking": thinking},
		Attempt:    1,
	}
	u := pt.Replay(t, pt.Fixture{File: "recorded/thinking_tool_use_turn2.sse"}.Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	if sent := sentAssistant(t, got.Body); !reflect.DeepEqual(sent, want) {
		t.Errorf("assistant turn sent:\n %v\nthe recorded turn 2 request's:\n %v", sent, want)
	}
	pt.GoldenJSON(t, "request_thinking_turn2.golden.json", got.Body, *update)
}

// TestRedactedThinkingRoundTrip: a redacted_thinking block goes back with
// its data unchanged, before the text, as in the recorded follow-up the
// API accepted.
func TestRedactedThinkingRoundTrip(t *testing.T) {
	want, thinking := turn2Request(t, "redacted_thinking_turn2.request.json")
	req := &provider.Request{
		Model: "claude-sonnet-4-5-20250929",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"},
			{Role: provider.RoleAssistant, Content: want[1]["text"].(string),
				Reasoning: []provider.Reasoning{{Redacted: want[0]["data"].(string), Format: provider.FormatAnthropic}}},
			{Role: provider.RoleUser, Content: "What was that?"},
		},
		Options: map[string]any{"thinking": thinking},
		Attempt: 1,
	}
	u := pt.Replay(t, pt.Fixture{File: "recorded/thinking_tool_use_turn2.sse"}.Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	if sent := sentAssistant(t, got.Body); !reflect.DeepEqual(sent, want) {
		t.Errorf("assistant turn sent:\n %v\nthe recorded follow-up's:\n %v", sent, want)
	}
}
