package service_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// openRouterDetail returns an OpenAI-compatible stream whose reply is one
// OpenRouter reasoning detail, the JSON object detail, and the text "ok".
func openRouterDetail(detail string) []byte {
	return []byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning_details":[` + detail + `]}}]}` + "\n\n" +
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"}}]}` + "\n\n" +
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n")
}

// TestAReplysStringsGoBackAsTheNextAssistantMessage: an upstream (broken
// or hostile) that answers with a value longer than a request's message
// takes of it fails the call as a protocol error, not retried, where the
// provider needs the value back as it came or the value names no tool a
// request may offer: a tool call's name (128 characters), a reasoning
// block's id (256), kind or provider format (64), a provider tool
// block's kind (128), id (256) or name (128). The client never receives
// such a reply, which it could not send back.
func TestAReplysStringsGoBackAsTheNextAssistantMessage(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name, kind string
		body       []byte
	}{
		{"a tool call's name", "anthropic", manyBlocks(1, func(int) string {
			return `{"type":"tool_use","id":"toolu_1","name":"` + long(129) + `","input":{}}`
		})},
		{"a reasoning block's id", "openai", openRouterDetail(`{"type":"reasoning.encrypted","data":"e","id":"` + long(257) + `","format":"openai-responses-v1","index":0}`)},
		{"a reasoning block's kind", "openai", openRouterDetail(`{"type":"` + long(65) + `","data":"e","id":"rs_1","format":"openai-responses-v1","index":0}`)},
		{"a reasoning block's provider format", "openai", openRouterDetail(`{"type":"reasoning.encrypted","data":"e","id":"rs_1","format":"` + long(65) + `","index":0}`)},
		{"a provider tool block's kind", "anthropic", manyBlocks(1, func(int) string {
			return `{"type":"` + long(117) + `_tool_result","tool_use_id":"srvtoolu_1","content":[]}`
		})},
		{"a provider tool block's id", "anthropic", manyBlocks(1, func(int) string {
			return `{"type":"server_tool_use","id":"` + long(257) + `","name":"web_search","input":{}}`
		})},
		{"a provider tool block's name", "anthropic", manyBlocks(1, func(int) string {
			return `{"type":"server_tool_use","id":"srvtoolu_1","name":"` + long(129) + `","input":{}}`
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &llmrelayv1.GenerateRequest{
				Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
				Tools:    []*llmrelayv1.Tool{{Name: "f"}},
			}
			// One value past what a message takes: a protocol error, once.
			replyPastItsBound(t, tc.kind, tc.body, req, 1, 0)
		})
	}
}

// TestALongToolCallIDIsFitted: a tool call whose id is longer than a
// request's message takes (256 characters) is not refused (the provider
// needs the same id in the call and its result, not its own back): the
// call's delta and the final carry it fitted, the same in both, and the
// reply goes back as the next request's assistant message with a result
// for the call, which reaches the provider with the fitted id in both.
func TestALongToolCallIDIsFitted(t *testing.T) {
	id := "toolu_" + strings.Repeat("9", 300)
	first := manyBlocks(1, func(int) string { return `{"type":"tool_use","id":"` + id + `","name":"f","input":{}}` })
	up, in := startBehind(t, "anthropic", firstThenOK(first))
	ask := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "call f"}
	tools := []*llmrelayv1.Tool{{Name: "f"}}
	events, err := servertest.Collect(t.Context(), in.Client, &llmrelayv1.GenerateRequest{Model: "up/some-model", Messages: []*llmrelayv1.Message{ask}, Tools: tools})
	if err != nil {
		t.Fatalf("the reply failed: %v", err)
	}
	var shown []string
	for _, ev := range events {
		if d := ev.GetDelta().GetToolCall(); d.GetId() != "" {
			shown = append(shown, d.GetId())
		}
	}
	reply := events[len(events)-1].GetFinal().GetMessage()
	if len(reply.GetToolCalls()) != 1 {
		t.Fatalf("the reply holds %d tool calls, want 1", len(reply.GetToolCalls()))
	}
	got := reply.GetToolCalls()[0].GetId()
	if len(got) > 256 || !strings.HasPrefix(got, "toolu_999") {
		t.Fatalf("the final's call id is %d bytes (%.20q...), want at most 256, the provider's cut", len(got), got)
	}
	if len(shown) != 1 || shown[0] != got {
		t.Errorf("the call's deltas carried the ids %.40q, want the final's %.40q", shown, got)
	}

	if n := bytes.Count(sendBack(t, up, in, ask, reply, tools), []byte(fmt.Sprintf("%q", got))); n != 2 {
		t.Errorf("the next request sent the provider the fitted id %d times, want 2 (the call and its result)", n)
	}
}
