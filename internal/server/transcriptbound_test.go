package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
	"github.com/llmrelay/llmrelay/internal/servertools/mcptest"
)

// TestServerToolTranscriptGoesBack: a server-tool loop whose conversation
// would grow past the messages a request holds (2048) ends before it, as
// past max_tool_turns (FINISH_REASON_MAX_TOOL_TURNS, the last reply's
// calls unrun), so that the request's messages and the final's transcript
// go back as the next request. A request of 2043 messages leaves room for
// two turns of one call and its result and a third reply; a model that
// keeps calling the tool ran it until max_tool_turns (8) and gave a
// transcript of 17 messages, which did not go back (INVALID_ARGUMENT).
func TestServerToolTranscriptGoesBack(t *testing.T) {
	g := mcptest.NewGoServer(t)
	in := servertest.Start(t, toolsConfig(goServer(g)))
	call := `{"tool_calls": [{"name": "go__echo", "arguments": {"message": "again"}}]}`
	req := scripted(t, []string{"go/echo"}, `{"script": [`+strings.Repeat(call+",", 9)+call+`]}`)
	var msgs []*llmrelayv1.Message
	for i := range 2042 {
		role := llmrelayv1.Role_ROLE_USER
		if i%2 == 1 {
			role = llmrelayv1.Role_ROLE_ASSISTANT
		}
		msgs = append(msgs, &llmrelayv1.Message{Role: role, Content: fmt.Sprintf("m%d", i)})
	}
	req.Messages = append(msgs, req.Messages...) // and the last: "use the tool"
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	f := final(t, events)
	next := &llmrelayv1.GenerateRequest{Model: "mock/echo", Messages: slices.Concat(req.GetMessages(), f.GetTranscript())}
	if _, err := servertest.Collect(t.Context(), in.Client, next); err != nil {
		t.Fatalf("the request's %d messages and the transcript's %d sent back failed: %v", len(req.GetMessages()), len(f.GetTranscript()), err)
	}
	if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_MAX_TOOL_TURNS || f.GetTurns() != 3 || len(f.GetMessage().GetToolCalls()) != 1 {
		t.Fatalf("the call ended with %v after %d turns, the last reply's calls %d; want FINISH_REASON_MAX_TOOL_TURNS after 3, its call unrun",
			f.GetFinishReason(), f.GetTurns(), len(f.GetMessage().GetToolCalls()))
	}
	if n := g.Calls("echo"); n != 2 {
		t.Errorf("the tool ran %d times, want 2", n)
	}
}
