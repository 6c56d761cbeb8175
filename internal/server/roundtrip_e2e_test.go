package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic/anthropictest"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// replyFiles returns an upstream's handler that answers its requests with
// the given recorded files of an adapter, in order, the last one for any
// request after them.
func replyFiles(t *testing.T, adapter string, files ...string) func(int, *http.Request) pt.Reply {
	return func(n int, _ *http.Request) pt.Reply {
		return recordedReply(t, adapter, files[min(n, len(files)-1)])
	}
}

// relay starts the service in front of upstream u as provider "up" of the
// given kind.
func relay(t *testing.T, kind string, u *pt.Upstream) *servertest.Instance {
	t.Helper()
	t.Setenv("LLMRELAY_TEST_UP_KEY", "sk-test")
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "up", Kind: kind, BaseURL: u.URL, APIKeyEnv: "LLMRELAY_TEST_UP_KEY"}}
	return servertest.Start(t, cfg)
}

// options returns provider_options as a Struct.
func options(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// partKinds names the blocks of a message in the order of its parts:
// text, thinking, tool_use, or a provider tool block's kind.
func partKinds(m *llmrelayv1.Message) []string {
	var out []string
	for _, p := range m.GetParts() {
		switch v := p.GetPart().(type) {
		case *llmrelayv1.Part_Text:
			out = append(out, "text")
		case *llmrelayv1.Part_Reasoning:
			out = append(out, "thinking")
		case *llmrelayv1.Part_ToolCall:
			out = append(out, "tool_use")
		case *llmrelayv1.Part_ProviderTool:
			out = append(out, m.GetProviderTools()[v.ProviderTool].GetKind())
		}
	}
	return out
}

func blockTypes(blocks []map[string]any) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i], _ = b["type"].(string)
	}
	return out
}

// TestPausedTurnRoundTripThroughTheService plays Anthropic's recorded
// paused turn (256 KB: thinking, ten web searches Anthropic ran itself,
// text between them, an eleventh search not run yet) through the whole
// service: the final says FINISH_REASON_PAUSED and holds every block, in
// order, the web searches as provider tool blocks; the client continues
// the turn the way the proto says, appending final.message unchanged as
// the last message; and the upstream receives that assistant turn with
// every block the stream gave, equal in content, in the stream's order.
func TestPausedTurnRoundTripThroughTheService(t *testing.T) {
	const file = "pause_turn_web_search.sse"
	u := pt.NewUpstream(t, replyFiles(t, "anthropic", file, "thinking_tool_use_turn2.sse"))
	in := relay(t, "anthropic", u)
	stream, err := os.ReadFile("../provider/anthropic/testdata/recorded/" + file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := anthropictest.Blocks(stream)
	if err != nil {
		t.Fatal(err)
	}

	req := &llmrelayv1.GenerateRequest{
		Model:    "up/claude-sonnet-4-5",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "Run a series of web searches, one at a time, then summarise."}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 1},
		ProviderOptions: options(t, map[string]any{
			"thinking":     map[string]any{"type": "enabled", "budget_tokens": 4096.0},
			"server_tools": []any{map[string]any{"type": "web_search_20250305", "name": "web_search"}},
		}),
	}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	final := summarize(events).final
	msg := final.GetMessage()
	if final.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_PAUSED {
		t.Errorf("finish reason %v, want FINISH_REASON_PAUSED", final.GetFinishReason())
	}
	if got := partKinds(msg); !reflect.DeepEqual(got, blockTypes(want)) {
		t.Fatalf("the final's blocks, in order:\n %v\nthe stream's:\n %v", got, blockTypes(want))
	}
	if len(msg.GetProviderTools()) != 21 || len(msg.GetToolCalls()) != 0 || len(msg.GetReasoning()) != 1 {
		t.Fatalf("%d provider tool blocks, %d tool calls, %d reasoning blocks; want 21, 0, 1",
			len(msg.GetProviderTools()), len(msg.GetToolCalls()), len(msg.GetReasoning()))
	}
	var first struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(u.Requests()[0].Body, &first); err != nil || len(first.Tools) != 1 || first.Tools[0]["type"] != "web_search_20250305" {
		t.Errorf("the first request's tools %v (%v), want the web search server tool", first.Tools, err)
	}

	req.Messages = append(req.Messages, msg)
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatalf("the continuation: %v", err)
	}
	reqs := u.Requests()
	turns := anthropicTurns(t, reqs[len(reqs)-1].Body)
	if len(turns) != 2 {
		t.Fatalf("the continuation has %d turns, want the question and the paused turn", len(turns))
	}
	if sent := turns[1]; !reflect.DeepEqual(sent, want) {
		for i := range max(len(sent), len(want)) {
			if i >= len(sent) || i >= len(want) || !reflect.DeepEqual(sent[i], want[i]) {
				t.Fatalf("%d blocks sent back, %d in the stream; block %d differs", len(sent), len(want), i)
			}
		}
	}
}

// TestInterleavedThinkingThroughTheService: a reply that thinks, calls a
// tool, thinks again and calls another tool keeps that order in the
// final's parts, and goes back in it with the tools' results.
func TestInterleavedThinkingThroughTheService(t *testing.T) {
	const file = "interleaved_thinking_two_tools.composed.sse"
	u := pt.NewUpstream(t, replyFiles(t, "anthropic", file, "thinking_tool_use_turn2.sse"))
	in := relay(t, "anthropic", u)
	req := &llmrelayv1.GenerateRequest{
		Model:    "up/claude-sonnet-4-5",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "The version, then the weather in Paris."}},
		Tools:    []*llmrelayv1.Tool{{Name: "fixed_version"}, {Name: "get_weather"}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 1},
	}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	msg := summarize(events).final.GetMessage()
	if got, want := partKinds(msg), []string{"thinking", "tool_use", "thinking", "tool_use"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("final parts %v, want %v", got, want)
	}
	req.Messages = append(req.Messages, msg,
		&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: msg.GetToolCalls()[0].GetId(), Content: "0.32a0"},
		&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: msg.GetToolCalls()[1].GetId(), Content: "sunny"})
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatal(err)
	}
	reqs := u.Requests()
	turns := anthropicTurns(t, reqs[len(reqs)-1].Body)
	if got := blockTypes(turns[1]); !reflect.DeepEqual(got, []string{"thinking", "tool_use", "thinking", "tool_use"}) {
		t.Errorf("the assistant turn sent back: %v, want thinking, tool_use, thinking, tool_use", got)
	}
	if turns[1][2]["signature"] != msg.GetReasoning()[1].GetSignature() || turns[1][2]["signature"] == "" {
		t.Error("the second thinking block went back without its signature")
	}
}

// TestReasoningDetailsThroughTheService: OpenRouter's reasoning_details
// (recorded: Claude's thinking with its signature) reach the final as a
// reasoning block with its kind and upstream format, and go back in the
// next request's assistant message as they came.
func TestReasoningDetailsThroughTheService(t *testing.T) {
	u := pt.NewUpstream(t, replyFiles(t, "openai", "openrouter_claude_reasoning_processing_comments.sse", "qwen3max_reasoning_content.sse"))
	in := relay(t, "openai", u)
	req := &llmrelayv1.GenerateRequest{
		Model:    "up/anthropic/claude-sonnet-4.5",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "What is 2+2?"}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 1},
	}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatal(err)
	}
	msg := summarize(events).final.GetMessage()
	r := msg.GetReasoning()
	if len(r) != 1 || r[0].GetFormat() != "openrouter.reasoning_details" || r[0].GetKind() != "reasoning.text" ||
		r[0].GetProviderFormat() != "anthropic-claude-v1" || r[0].GetText() != "This is a simple arithmetic question. 2+2 equals 4." || r[0].GetSignature() == "" {
		t.Fatalf("final reasoning %v, want the signed reasoning.text detail", r)
	}
	req.Messages = append(req.Messages, msg, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_USER, Content: "And 3+3?"})
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatal(err)
	}
	reqs := u.Requests()
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"type": "reasoning.text", "text": r[0].GetText(), "signature": r[0].GetSignature(), "format": "anthropic-claude-v1", "index": 0.0}}
	if got := body.Messages[1]["reasoning_details"]; !reflect.DeepEqual(got, want) {
		t.Errorf("reasoning_details sent back %v, want %v", got, want)
	}
}

// TestGroqToolUseFailedIsRetriedOnce plays Groq's recorded tool_use_failed
// (an error event after the model's reasoning: the model's tool call did
// not fit the tool's schema): the call retries once, reason
// RETRY_REASON_INVALID_OUTPUT, discarding the reasoning shown, and the
// recorded second generation's tool call is the final's. A second
// tool_use_failed in the same call ends it with the provider's 400 and its
// message, even with attempts left.
func TestGroqToolUseFailedIsRetriedOnce(t *testing.T) {
	req := func() *llmrelayv1.GenerateRequest {
		return &llmrelayv1.GenerateRequest{
			Model:    "up/openai/gpt-oss-120b",
			Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "Call get_something_by_name."}},
			Tools:    []*llmrelayv1.Tool{{Name: "get_something_by_name"}},
			Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 3},
		}
	}
	t.Run("retried once", func(t *testing.T) {
		u := pt.NewUpstream(t, replyFiles(t, "openai", "groq_gptoss_tool_use_failed.sse", "groq_gptoss_tool_call_second_try.sse"))
		in := relay(t, "openai", u)
		events, err := servertest.Collect(t.Context(), in.Client, req())
		if err != nil {
			t.Fatal(err)
		}
		s := summarize(events)
		var retry *llmrelayv1.WillRetry
		for _, ev := range events {
			if w := ev.GetWillRetry(); w != nil {
				retry = w
			}
		}
		if retry == nil || retry.GetReason() != llmrelayv1.RetryReason_RETRY_REASON_INVALID_OUTPUT || !retry.GetDiscardPartial() {
			t.Fatalf("will_retry %v, want one, INVALID_OUTPUT, discarding the reasoning shown", retry)
		}
		calls := s.final.GetMessage().GetToolCalls()
		if s.final.GetAttempts() != 2 || len(calls) != 1 || calls[0].GetArguments() != `{"name":"example"}` {
			t.Errorf("final after %d attempts with calls %v; want the second try's call after 2", s.final.GetAttempts(), calls)
		}
	})
	t.Run("twice ends the call", func(t *testing.T) {
		u := pt.NewUpstream(t, replyFiles(t, "openai", "groq_gptoss_tool_use_failed.sse", "groq_gptoss_tool_use_failed_no_call.sse", "groq_gptoss_tool_call_second_try.sse"))
		in := relay(t, "openai", u)
		_, err := servertest.Collect(t.Context(), in.Client, req())
		st := status.Convert(err)
		info := detail[*errdetails.ErrorInfo](st)
		md := info.GetMetadata()
		if st.Code() != codes.InvalidArgument || info.GetReason() != "PROVIDER_REJECTED" || md["retry_reason"] != "INVALID_OUTPUT" ||
			md["attempts"] != "2" || md["provider_status"] != "400" || !strings.Contains(st.Message(), "Tool choice is required, but model did not call a tool") {
			t.Errorf("status %v %s %v, want INVALID_ARGUMENT PROVIDER_REJECTED after 2 attempts with Groq's message", st.Code(), st.Message(), md)
		}
		if n := len(u.Requests()); n != 2 {
			t.Errorf("the upstream got %d requests, want 2", n)
		}
	})
}
