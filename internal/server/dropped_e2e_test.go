package server_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// TestReasoningDroppedByAnEarlierTurn: a conversation begun at DeepSeek
// (its reasoning_content) goes on through a route from Anthropic to an
// OpenAI-compatible target, with a server tool. Turn 1 is Claude's, which
// is not sent DeepSeek's reasoning and thinks and calls the tool; turn 2
// falls back to the OpenAI-compatible target, which is not sent Claude's
// thinking. Both replies are in the final (the transcript, the message),
// so annotations["reasoning.dropped"] names what either turn's provider
// was not sent, not only the last turn's.
func TestReasoningDroppedByAnEarlierTurn(t *testing.T) {
	g := mcptest.NewGoServer(t)
	claude := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
		if n > 0 {
			body, err := os.ReadFile("../provider/anthropic/testdata/error_529.json")
			if err != nil {
				t.Error(err)
			}
			return pt.Reply{Status: 529, Body: body}
		}
		return pt.Reply{Body: anthropicSSE(
			`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Echo it."}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkD"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"go__echo","input":{}}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"message\":\"hi\"}"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}`,
			`{"type":"message_stop"}`,
		)}
	})
	oai := pt.NewUpstream(t, func(int, *http.Request) pt.Reply { return pt.Reply{Body: []byte(okStream)} })
	t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
	cfg := toolsConfig(goServer(g))
	cfg.Providers = []provider.Config{
		{Name: "claude", Kind: "anthropic", BaseURL: claude.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"},
		{Name: "oai", Kind: "openai", BaseURL: oai.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"},
	}
	cfg.Routes = []route.Config{{Name: "smart", Targets: []route.TargetConfig{{Model: "claude/claude-sonnet-4-5"}, {Model: "oai/deepseek-chat"}}}}
	in := servertest.Start(t, cfg)
	events, err := servertest.Collect(t.Context(), in.Client, &llmrelayv1.GenerateRequest{
		Model: "smart",
		Messages: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_USER, Content: "Hello?"},
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "Hello.", Reasoning: []*llmrelayv1.Reasoning{
				{Text: "Greet back.", Format: provider.FormatReasoningContent},
			}},
			{Role: llmrelayv1.Role_ROLE_USER, Content: "Say hi through the echo tool."},
		},
		ServerTools: []string{"go/echo"},
		Retry:       &llmrelayv1.RetryPolicy{MaxAttempts: 1},
	})
	if err != nil {
		t.Fatalf("Generate: %v (events %v)", err, eventLines(events))
	}
	f := final(t, events)
	if f.GetTurns() != 2 || f.GetProvider() != "oai" || len(f.GetTranscript()) != 3 || len(f.GetTranscript()[0].GetReasoning()) != 1 {
		t.Fatalf("final: turns %d by %q, transcript %q; want 2 turns, the last by oai, Claude's thinking turn first",
			f.GetTurns(), f.GetProvider(), transcript(f))
	}
	want := strings.Join([]string{provider.FormatAnthropic, provider.FormatReasoningContent}, ",")
	if got := f.GetAnnotations()[engine.AnnotationReasoningDropped]; got != want {
		t.Errorf("annotations %v, want %s %q", f.GetAnnotations(), engine.AnnotationReasoningDropped, want)
	}
}

// TestGeminisOwnThoughtsAreNotReportedDropped: Gemini puts the
// thoughtSignature of a turn that calls a function on the call, not on the
// thought summary before it (https://ai.google.dev/gemini-api/docs/thought-signatures),
// so its own reply has a reasoning block without a signature. Sent back to
// Gemini, the block has nothing the API takes (the thought text never goes
// back; only signatures do), and the call goes back with its signature:
// the final of turn 2 has no reasoning.dropped annotation. Counting such a
// block as dropped would annotate every Gemini tool turn with thoughts.
func TestGeminisOwnThoughtsAreNotReportedDropped(t *testing.T) {
	const thought = "**Multiplying**\n\nThe multiply tool gives the product."
	call, err := os.ReadFile("../provider/gemini/testdata/recorded/gemini3flash_function_call_signature_turn1.sse")
	if err != nil {
		t.Fatal(err)
	}
	turn1 := append([]byte(`data: {"candidates": [{"content": {"parts": [{"text": "`+strings.ReplaceAll(thought, "\n", `\n`)+`","thought": true}],"role": "model"},"index": 0}],`+
		`"usageMetadata": {"promptTokenCount": 60,"totalTokenCount": 72,"thoughtsTokenCount": 12},"modelVersion": "gemini-3-flash-preview"}`+"\r\n\r\n"), call...)
	u := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
		if n == 0 {
			return pt.Reply{Body: turn1}
		}
		return recordedReply(t, "gemini", "gemini3pro_function_call_signature_turn2.sse")
	})
	t.Setenv("LLMRELAY_TEST_GEMINI_KEY", "AIza-test")
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "gemini", Kind: "gemini", BaseURL: u.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"}}
	in := servertest.Start(t, cfg)
	req := &llmrelayv1.GenerateRequest{
		Model:    "gemini/gemini-3-flash-preview",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "What is 5 times 3?"}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 1},
	}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	m := final(t, events).GetMessage()
	r, calls := m.GetReasoning(), m.GetToolCalls()
	if len(r) != 1 || r[0].GetFormat() != provider.FormatGemini || r[0].GetText() != thought || r[0].GetSignature() != "" ||
		len(calls) != 1 || calls[0].GetSignature() == "" {
		t.Fatalf("turn 1: reasoning %v, calls %v; want the thought unsigned and the call signed", r, calls)
	}
	req.Messages = append(req.Messages, m, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: calls[0].GetId(), Content: "15"})
	events, err = servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("turn 2: %v", err)
	}
	if a, ok := final(t, events).GetAnnotations()[engine.AnnotationReasoningDropped]; ok {
		t.Errorf("turn 2: %s %q, want none: Gemini was sent everything of its reply it takes", engine.AnnotationReasoningDropped, a)
	}
	reqs := u.Requests()
	body := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(body, `"thoughtSignature":"`+calls[0].GetSignature()+`"`) || strings.Contains(body, "Multiplying") {
		t.Errorf("turn 2 request %s: want the call's signature back, not the thought", body)
	}
}
