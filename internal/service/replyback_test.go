package service_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// fullestReply returns an Anthropic stream whose reply holds as much as a
// reply may: provider.MaxReasoningBlocks thinking blocks,
// provider.MaxProviderTools server tool blocks and provider.MaxToolCalls
// tool calls, with a text block before, between and after them (so that
// the final message has the most parts a reply can have).
func fullestReply() []byte {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
	index := 0
	block := func(content string) {
		fmt.Fprintf(&b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":%s}\n\n", index, content)
		fmt.Fprintf(&b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", index)
		index++
	}
	text := func() { block(`{"type":"text","text":"."}`) }
	for range provider.MaxReasoningBlocks {
		text()
		block(`{"type":"thinking","thinking":"hm","signature":"sig"}`)
	}
	for i := range provider.MaxProviderTools {
		text()
		block(fmt.Sprintf(`{"type":"server_tool_use","id":"srvtoolu_%d","name":"web_search","input":{}}`, i))
	}
	for i := range provider.MaxToolCalls {
		text()
		block(fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":"f","input":{}}`, i))
	}
	text()
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":1}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(b.String())
}

// TestAReplyGoesBackAsTheNextAssistantMessage: a reply that holds as
// many reasoning blocks, provider tool blocks and tool calls as a reply
// may, in an order that needs parts for every block, goes back whole as
// the next request's assistant message, with a result for each of its
// calls (the next turn of a tool loop): the request is valid and reaches
// the provider, every call and its result with it. A request's message
// once held 128 tool calls, a reply 1024.
func TestAReplyGoesBackAsTheNextAssistantMessage(t *testing.T) {
	first := fullestReply()
	up, in := startBehind(t, "anthropic", firstThenOK(first))
	ask := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "call f"}
	tools := []*llmrelayv1.Tool{{Name: "f"}}
	events, err := servertest.Collect(t.Context(), in.Client, &llmrelayv1.GenerateRequest{Model: "up/some-model", Messages: []*llmrelayv1.Message{ask}, Tools: tools})
	if err != nil {
		t.Fatalf("the reply failed: %v", err)
	}
	reply := events[len(events)-1].GetFinal().GetMessage()
	if len(reply.GetToolCalls()) != provider.MaxToolCalls || len(reply.GetReasoning()) != provider.MaxReasoningBlocks ||
		len(reply.GetProviderTools()) != provider.MaxProviderTools || len(reply.GetParts()) <= 1024 {
		t.Fatalf("the reply holds %d tool calls, %d reasoning blocks, %d provider tool blocks and %d parts; want %d, %d, %d and more than 1024",
			len(reply.GetToolCalls()), len(reply.GetReasoning()), len(reply.GetProviderTools()), len(reply.GetParts()),
			provider.MaxToolCalls, provider.MaxReasoningBlocks, provider.MaxProviderTools)
	}

	body := sendBack(t, up, in, ask, reply, tools)
	for _, want := range []string{`"type":"tool_use"`, `"type":"tool_result"`} {
		if got := bytes.Count(body, []byte(want)); got != provider.MaxToolCalls {
			t.Errorf("the next request sent the provider %d blocks %s, want %d", got, want, provider.MaxToolCalls)
		}
	}
}

// largeReply returns an Anthropic stream whose reply holds n bytes of one
// field, streamed in 64 KiB deltas: the text (after a call of f, so that
// the final message has parts and a text part of n bytes), a tool call's
// arguments, or a thinking block's text (and the text "ok").
func largeReply(field string, n int) []byte {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
	index := 0
	block := func(start, kind, key string, size int, end string) {
		fmt.Fprintf(&b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":%s}\n\n", index, start)
		for size > 0 {
			chunk := strings.Repeat("a", min(size, 64<<10))
			size -= len(chunk)
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":%q,%q:%q}}\n\n", index, kind, key, chunk)
		}
		if end != "" {
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":%s}\n\n", index, end)
		}
		fmt.Fprintf(&b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", index)
		index++
	}
	call := `{"type":"tool_use","id":"toolu_1","name":"f","input":{}}`
	switch field {
	case "text":
		block(call, "", "", 0, "")
		block(`{"type":"text","text":""}`, "text_delta", "text", n, "")
	case "arguments":
		// {"s":"aaa..."}: the arguments are n bytes.
		block(call, "input_json_delta", "partial_json", 0, `{"type":"input_json_delta","partial_json":"{\"s\":\""}`)
		b2 := strings.Repeat("a", n-len(`{"s":""}`))
		for len(b2) > 0 {
			chunk := b2[:min(len(b2), 64<<10)]
			b2 = b2[len(chunk):]
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%q}}\n\n", chunk)
		}
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%q}}\n\n", `"}`)
		fmt.Fprintf(&b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	case "reasoning":
		block(`{"type":"thinking","thinking":""}`, "thinking_delta", "thinking", n, `{"type":"signature_delta","signature":"sig"}`)
		block(`{"type":"text","text":"ok"}`, "", "", 0, "")
	}
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(b.String())
}

// TestALargeReplyGoesBackAsTheNextAssistantMessage: a reply whose text, a
// tool call's arguments or a reasoning block's text is larger than 1 MiB
// (what a request's message took of each) but within the output limit
// goes back whole as the next request's assistant message, under the
// server's default request bound (limits.max_request_bytes, 4 MiB): the
// request is valid and reaches the provider with the field as it came.
// 1.5 MiB, as the final message of a reply with parts carries its text
// twice (content and the text parts), and a client's receive limit, like
// the request bound, is 4 MiB by default.
func TestALargeReplyGoesBackAsTheNextAssistantMessage(t *testing.T) {
	const size = 1<<20 + 512<<10 // 1.5 MiB
	for _, field := range []string{"text", "arguments", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			first := largeReply(field, size)
			up, in := startBehind(t, "anthropic", firstThenOK(first))
			ask := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "write a lot"}
			tools := []*llmrelayv1.Tool{{Name: "f"}}
			limit := &llmrelayv1.OutputLimit{MaxBytes: uint64(config.Default().Limits.MaxOutputBytes)}
			events, err := servertest.Collect(t.Context(), in.Client, &llmrelayv1.GenerateRequest{
				Model: "up/some-model", Messages: []*llmrelayv1.Message{ask}, Tools: tools, OutputLimit: limit,
			})
			if err != nil {
				t.Fatalf("the reply failed: %v", err)
			}
			reply := events[len(events)-1].GetFinal().GetMessage()
			got := map[string]int{"text": len(reply.GetContent())}
			if c := reply.GetToolCalls(); len(c) > 0 {
				got["arguments"] = len(c[0].GetArguments())
			}
			if r := reply.GetReasoning(); len(r) > 0 {
				got["reasoning"] = len(r[0].GetText())
			}
			if got[field] != size {
				t.Fatalf("the reply's %s is %d bytes, want %d", field, got[field], size)
			}

			if !bytes.Contains(sendBack(t, up, in, ask, reply, tools), []byte(strings.Repeat("a", size-len(`{"s":""}`)))) {
				t.Errorf("the next request did not send the provider the reply's %s whole", field)
			}
		})
	}
}
