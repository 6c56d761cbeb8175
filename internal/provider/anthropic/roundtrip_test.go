package anthropic_test

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic/anthropictest"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// streamBlocks rebuilds a recorded stream's content blocks independently
// of the adapter (anthropictest.Blocks).
func streamBlocks(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/recorded/" + file)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := anthropictest.Blocks(b)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// withoutKey returns the blocks, each without key.
func withoutKey(blocks []map[string]any, key string) []map[string]any {
	out := make([]map[string]any, len(blocks))
	for i, b := range blocks {
		out[i] = maps.Clone(b)
		delete(out[i], key)
	}
	return out
}

// types lists the blocks' types.
func types(blocks []map[string]any) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i], _ = b["type"].(string)
	}
	return out
}

// followUp sends a decoded reply back as the assistant turn after the
// user's question, the way a client sends final.message back, and returns
// the assistant turn's content blocks as the adapter sent them.
func followUp(t *testing.T, reply pt.Result, question string, opts map[string]any) []map[string]any {
	t.Helper()
	req := &provider.Request{
		Model: "claude-sonnet-4-5",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: question},
			{Role: provider.RoleAssistant, Content: reply.Text, Reasoning: reply.Reasoning, ToolCalls: reply.ToolCalls,
				ProviderTools: reply.ProviderTools, Parts: reply.Parts},
		},
		Options: opts,
		Attempt: 1,
	}
	u := pt.Replay(t, pt.Fixture{File: "text.sse"}.Reply(t))
	got := pt.CaptureRequest(t, u, newProvider(t, u.URL), req)
	return sentAssistant(t, got.Body)
}

// TestPauseTurnRoundTrip plays the recorded paused turn (256 KB: thinking,
// text, ten web searches Anthropic ran itself, text between them, an
// eleventh search left without its result): the reply decodes to
// FinishPaused with every block in the order it came, and the follow-up
// request built from it, the way Anthropic's docs continue a paused turn
// (the paused reply as the last assistant turn), sends every block back as
// the stream gave it, equal in content, in order; and as the real client
// sent it in the recorded follow-up the API accepted (which left out the
// response-only `caller` field).
func TestPauseTurnRoundTrip(t *testing.T) {
	const file = "pause_turn_web_search.sse"
	reply, _ := pt.ReplayRecorded(t, file, newProvider, pt.NewRequest("claude-sonnet-4-5"))
	if reply.Err != nil {
		t.Fatal(reply.Err)
	}
	want := streamBlocks(t, file)
	if reply.Finish != provider.FinishPaused {
		t.Errorf("finish %v, want paused", reply.Finish)
	}
	var uses int
	for _, b := range want {
		if b["type"] == "server_tool_use" {
			uses++
		}
	}
	if uses != 11 || len(reply.ProviderTools) != 21 || len(reply.ToolCalls) != 0 {
		t.Fatalf("%d provider tool blocks (%d server_tool_use in the stream), %d client tool calls; want 21 blocks of 11 uses and 10 results, no client tool call",
			len(reply.ProviderTools), uses, len(reply.ToolCalls))
	}
	// The decoded order, part by part, is the stream's block order.
	var order []string
	for _, p := range reply.Parts {
		switch p.Kind {
		case provider.PartText:
			order = append(order, "text")
		case provider.PartReasoning:
			order = append(order, "thinking")
		case provider.PartProviderTool:
			order = append(order, reply.ProviderTools[p.Index].Kind)
		default:
			order = append(order, "tool_use")
		}
	}
	if !reflect.DeepEqual(order, types(want)) {
		t.Fatalf("decoded order %v,\nthe stream's %v", order, types(want))
	}

	question, opts := recordedQuestion(t)
	sent := followUp(t, reply, question, opts)
	if !reflect.DeepEqual(sent, want) {
		for i := range max(len(sent), len(want)) {
			if i >= len(sent) || i >= len(want) || !reflect.DeepEqual(sent[i], want[i]) {
				t.Fatalf("%d blocks sent, %d in the stream; block %d differs:\n sent %.600v\n want %.600v", len(sent), len(want), i, at(sent, i), at(want, i))
			}
		}
	}
	// The cassette stores the follow-up parsed, its smart quotes and
	// dashes made ASCII (pydantic-ai's json_body_serializer): compare so.
	recorded, _ := turn2Request(t, "pause_turn_web_search_turn2.request.json")
	if got := asciiQuotes(withoutKey(sent, "caller")); !reflect.DeepEqual(got, recorded) {
		for i := range got {
			if !reflect.DeepEqual(got[i], at(recorded, i)) {
				t.Fatalf("block %d sent differs from the recorded follow-up's (caller aside):\n sent %.600v\n recorded %.600v", i, got[i], at(recorded, i))
			}
		}
		t.Errorf("%d blocks sent, the recorded follow-up has %d", len(got), len(recorded))
	}
}

// asciiQuotes replaces in every string of v the characters pydantic-ai's
// cassette serializer makes ASCII (tests/json_body_serializer.py).
func asciiQuotes[T any](v T) T {
	r := strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`, "\u2013", "-", "\u2014", "--", "\u2026", "...")
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return r.Replace(v)
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, x := range v {
				out[k] = walk(x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = walk(x)
			}
			return out
		case []map[string]any:
			out := make([]map[string]any, len(v))
			for i, x := range v {
				out[i] = walk(x).(map[string]any)
			}
			return out
		}
		return v
	}
	return walk(v).(T)
}

func at(blocks []map[string]any, i int) map[string]any {
	if i < len(blocks) {
		return blocks[i]
	}
	return nil
}

// recordedQuestion returns the recorded follow-up's question and its
// thinking and tools options.
func recordedQuestion(t *testing.T) (string, map[string]any) {
	t.Helper()
	b, err := os.ReadFile("testdata/recorded/pause_turn_web_search_turn2.request.json")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
		Thinking map[string]any `json:"thinking"`
		Tools    []any          `json:"tools"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages[0].Content[0].Text, map[string]any{"thinking": body.Thinking}
}

// TestInterleavedThinkingRoundTrip: a reply that thinks, calls a tool,
// thinks again and calls a second tool goes back in that order, each
// thinking block with its signature (the rule of Anthropic's interleaved
// thinking), not grouped.
func TestInterleavedThinkingRoundTrip(t *testing.T) {
	const file = "interleaved_thinking_two_tools.composed.sse"
	reply, _ := pt.ReplayRecorded(t, file, newProvider, pt.NewRequest("claude-sonnet-4-5"))
	if reply.Err != nil {
		t.Fatal(reply.Err)
	}
	wantParts := []provider.Part{{Kind: provider.PartReasoning, Index: 0}, {Kind: provider.PartToolCall, Index: 0},
		{Kind: provider.PartReasoning, Index: 1}, {Kind: provider.PartToolCall, Index: 1}}
	if !reflect.DeepEqual(reply.Parts, wantParts) {
		t.Fatalf("parts %+v, want thinking, call, thinking, call", reply.Parts)
	}
	sent := followUp(t, reply, "Use the tools.", nil)
	if want := withoutKey(streamBlocks(t, file), "caller"); !reflect.DeepEqual(sent, want) {
		t.Errorf("sent %v\nwant %v", sent, want)
	}
	// Without the order, the same blocks go grouped: what the order keeps
	// from happening.
	reply.Parts = nil
	if got := types(followUp(t, reply, "Use the tools.", nil)); !reflect.DeepEqual(got, []string{"thinking", "thinking", "tool_use", "tool_use"}) {
		t.Errorf("without parts: %v", got)
	}
}
