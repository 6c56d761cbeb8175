package service_test

import (
	"fmt"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// manyThinkingBlocks returns an Anthropic stream whose reply is n empty
// thinking blocks and the text "ok": what the output limit meters of a
// block is its format's name.
func manyThinkingBlocks(n int) []byte {
	return manyBlocks(n, func(int) string { return `{"type":"thinking","thinking":""}` })
}

// manyBlocks returns an Anthropic stream whose reply is n content blocks,
// block(i) the i-th, and the text "ok".
func manyBlocks(n int, block func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":%s}\n\n", i, block(i))
		fmt.Fprintf(&b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", i)
	}
	fmt.Fprintf(&b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"text\",\"text\":\"ok\"}}\n\n", n)
	fmt.Fprintf(&b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", n)
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(b.String())
}

// TestReasoningBlocksInAReplyAreBounded: an Anthropic upstream that
// answers with more reasoning blocks than a reply may hold
// (provider.MaxReasoningBlocks, what a message may hold), each an empty
// thinking block well within the output limit, fails the call as a
// protocol error, not retried, instead of a final message of them all
// (some 230,000 fit the default limit); a reply of exactly that many is
// whole.
func TestReasoningBlocksInAReplyAreBounded(t *testing.T) {
	for _, n := range []int{provider.MaxReasoningBlocks, provider.MaxReasoningBlocks + 1} {
		t.Run(fmt.Sprintf("%d blocks", n), func(t *testing.T) {
			req := &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "think"}}}
			msg := replyPastItsBound(t, "anthropic", manyThinkingBlocks(n), req, n, provider.MaxReasoningBlocks)
			if got := len(msg.GetReasoning()); msg != nil && (got != n || msg.GetContent() != "ok") {
				t.Errorf("the final message holds %d reasoning blocks and content %q, want %d and \"ok\"", got, msg.GetContent(), n)
			}
		})
	}
}

// TestProviderToolBlocksInAReplyAreBounded: an Anthropic upstream that
// answers with more blocks of its own tools than a reply may hold
// (provider.MaxProviderTools, what a message may hold), each a
// server_tool_use block with empty input, fails the call as a protocol
// error, not retried; a reply of exactly that many is whole.
func TestProviderToolBlocksInAReplyAreBounded(t *testing.T) {
	for _, n := range []int{provider.MaxProviderTools, provider.MaxProviderTools + 1} {
		t.Run(fmt.Sprintf("%d blocks", n), func(t *testing.T) {
			body := manyBlocks(n, func(i int) string {
				return fmt.Sprintf(`{"type":"server_tool_use","id":"srvtoolu_%d","name":"web_search","input":{}}`, i)
			})
			req := &llmrelayv1.GenerateRequest{Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "search"}}}
			msg := replyPastItsBound(t, "anthropic", body, req, n, provider.MaxProviderTools)
			if got := len(msg.GetProviderTools()); msg != nil && got != n {
				t.Errorf("the final message holds %d provider tool blocks, want %d", got, n)
			}
		})
	}
}
