package httpapi

import (
	"encoding/json"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// TestClientFinalShowsEveryTurn: a reply that is not streamed, of a call
// whose server tools ran, holds every turn's reasoning and text in their
// order, as the streamed reply shows them, and only the calls left to the
// client; the Final itself is left as it was.
func TestClientFinalShowsEveryTurn(t *testing.T) {
	thought := func(s string) *llmrelayv1.Reasoning { return &llmrelayv1.Reasoning{Text: s, Signature: "sig-" + s} }
	last := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "It is sunny.",
		Reasoning: []*llmrelayv1.Reasoning{thought("b")},
		ToolCalls: []*llmrelayv1.ToolCall{{Id: "c2", Name: "weather", Arguments: `{"city":"Paris"}`}}}
	f := &llmrelayv1.Final{
		Message:      last,
		FinishReason: llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS,
		Transcript: []*llmrelayv1.Message{
			{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: "Let me look. ", Reasoning: []*llmrelayv1.Reasoning{thought("a")},
				ToolCalls: []*llmrelayv1.ToolCall{{Id: "c1", Name: "go__echo", Arguments: `{}`}}},
			{Role: llmrelayv1.Role_ROLE_TOOL, Content: "Echo: ", ToolCallId: "c1", ServerTool: "go/echo"},
			last,
		},
	}
	b, err := anthropic{}.reply(&replyInfo{requestID: "r", model: "m"}, clientFinal(f))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Content []struct {
			Type, Text, Thinking, Name string
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"thinking a", "text Let me look. ", "thinking b", "text It is sunny.", "tool_use weather"}
	var blocks []string
	for _, c := range got.Content {
		blocks = append(blocks, c.Type+" "+c.Text+c.Thinking+c.Name)
	}
	if len(blocks) != len(want) {
		t.Fatalf("blocks %q, want %q", blocks, want)
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("block %d is %q, want %q (%s)", i, blocks[i], want[i], b)
		}
	}
	if f.GetMessage().GetContent() != "It is sunny." || len(f.GetMessage().GetReasoning()) != 1 {
		t.Errorf("the Final's message was changed: %v", f.GetMessage())
	}
}
