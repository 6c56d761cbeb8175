package service_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// manyToolCalls returns a stream of the given provider kind whose reply is
// n tool calls of one letter each, with empty arguments: what the output
// limit meters of them is a few bytes each.
func manyToolCalls(kind string, n int) []byte {
	var b strings.Builder
	switch kind {
	case "anthropic":
		b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
		for i := range n {
			fmt.Fprintf(&b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t%d\",\"name\":\"f\",\"input\":{}}}\n\n", i, i)
			fmt.Fprintf(&b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", i)
		}
		b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":1}}\n\n")
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	case "gemini":
		// Gemini sends calls whole, many to an event.
		for i := 0; i < n; i += 100 {
			b.WriteString(`data: {"candidates":[{"content":{"role":"model","parts":[`)
			for j := i; j < min(i+100, n); j++ {
				if j > i {
					b.WriteString(",")
				}
				b.WriteString(`{"functionCall":{"name":"f","args":{}}}`)
			}
			b.WriteString("]},\"index\":0}]}\n\n")
		}
		b.WriteString(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}` + "\n\n")
	}
	return []byte(b.String())
}

// TestToolCallsInAReplyAreBounded: a provider that answers with more tool
// calls than a reply may hold (provider.MaxToolCalls), each of a letter,
// well within the output limit, fails the call as a protocol error, not
// retried, instead of a final message of them all (a million within the
// default limit, far past a client's receive limit); a reply of exactly
// that many is whole. The bound is the engine's, the same for every
// adapter.
func TestToolCallsInAReplyAreBounded(t *testing.T) {
	for _, kind := range []string{"anthropic", "gemini"} {
		for _, n := range []int{provider.MaxToolCalls, provider.MaxToolCalls + 1} {
			t.Run(fmt.Sprintf("%s/%d calls", kind, n), func(t *testing.T) {
				req := &llmrelayv1.GenerateRequest{
					Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "call f"}},
					Tools:    []*llmrelayv1.Tool{{Name: "f"}},
				}
				msg := replyPastItsBound(t, kind, manyToolCalls(kind, n), req, n, provider.MaxToolCalls)
				if got := len(msg.GetToolCalls()); msg != nil && got != n {
					t.Errorf("the final message holds %d tool calls, want %d", got, n)
				}
			})
		}
	}
}

// replyPastItsBound sends req to a loopback upstream of the given kind
// that answers body, a reply of n items of a kind a reply holds at most
// bound of. Past the bound the call must fail as a protocol error after a
// single upstream request (it is not retried), and it returns nil;
// otherwise it returns the final message.
func replyPastItsBound(t *testing.T, kind string, body []byte, req *llmrelayv1.GenerateRequest, n, bound int) *llmrelayv1.Message {
	t.Helper()
	up, in := startBehind(t, kind, func(int) []byte { return body })
	req.Model, req.Retry = "up/some-model", attempts(3)
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if n > bound {
		wantStatus(t, err, codes.Unknown, "PROVIDER_PROTOCOL_ERROR", map[string]string{"attempts": "1"})
		if got := len(up.Requests()); got != 1 {
			t.Errorf("the upstream received %d requests, want 1 (a protocol error is not retried)", got)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("a reply of %d failed: %v", n, err)
	}
	return events[len(events)-1].GetFinal().GetMessage()
}

// startBehind starts llmrelay with one provider, "up", of the given kind,
// in front of a loopback upstream that answers its n-th request (from 0)
// with the stream reply(n).
func startBehind(t *testing.T, kind string, reply func(n int) []byte) (*pt.Upstream, *servertest.Instance) {
	t.Helper()
	up := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply { return pt.Reply{Body: reply(n)} })
	t.Setenv("LLMRELAY_TEST_KEY", "test-key")
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "up", Kind: kind, BaseURL: up.URL, APIKeyEnv: "LLMRELAY_TEST_KEY"}}
	return up, servertest.Start(t, cfg)
}

// firstThenOK answers the first request with first, every later one with
// the text "ok".
func firstThenOK(first []byte) func(n int) []byte {
	return func(n int) []byte {
		if n == 0 {
			return first
		}
		return manyThinkingBlocks(0)
	}
}

// sendBack sends reply, which the upstream up gave llmrelay in answer to
// ask, back as the next request's assistant message, with a result for
// each of its calls (a user message after it when it has none): the call
// must succeed with the upstream's "ok" (firstThenOK). It returns the body
// of that second request as the upstream received it.
func sendBack(t *testing.T, up *pt.Upstream, in *servertest.Instance, ask, reply *llmrelayv1.Message, tools []*llmrelayv1.Tool) []byte {
	t.Helper()
	next := []*llmrelayv1.Message{ask, reply}
	for _, c := range reply.GetToolCalls() {
		next = append(next, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: c.GetId(), Content: "ok"})
	}
	if len(reply.GetToolCalls()) == 0 {
		next = append(next, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "and?"})
	}
	events, err := servertest.Collect(t.Context(), in.Client, &llmrelayv1.GenerateRequest{Model: "up/some-model", Messages: next, Tools: tools})
	if err != nil {
		t.Fatalf("the reply sent back as the next request's assistant message failed: %v", err)
	}
	if got := events[len(events)-1].GetFinal().GetMessage().GetContent(); got != "ok" {
		t.Errorf("the next turn answered %q, want \"ok\"", got)
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream received %d requests, want 2", len(reqs))
	}
	return reqs[1].Body
}
