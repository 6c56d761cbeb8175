package engine_test

import (
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider/mock"
)

// TestFinalNotesDroppedReasoning: a conversation carries reasoning of
// another provider's format (Anthropic's signed thinking, a Gemini call's
// thoughtSignature), as when a route falls back to a target of another
// kind; the answering adapter leaves it out, and the Final says which
// formats in annotations["reasoning.dropped"]. Reasoning the answering
// provider takes, or none, adds no annotation.
func TestFinalNotesDroppedReasoning(t *testing.T) {
	anthropic := &llmrelayv1.Reasoning{Text: "Paris first.", Signature: "EqQBCkYIBxgCKkD", Format: "anthropic"}
	own := &llmrelayv1.Reasoning{Text: "Paris first.", Signature: mock.Sign("Paris first."), Format: "mock"}
	call := &llmrelayv1.ToolCall{Id: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}
	// A block without a format: a client's, or an OpenAI Responses
	// reasoning item whose encrypted_content is not llmrelay's.
	unformatted := &llmrelayv1.Reasoning{Text: "Paris first."}
	gemini := &llmrelayv1.ToolCall{Id: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Signature: "CiQBVKhc7gemini"}
	for _, tc := range []struct {
		name      string
		reasoning []*llmrelayv1.Reasoning
		call      *llmrelayv1.ToolCall
		want      string
	}{
		{"signed thinking and a call's signature", []*llmrelayv1.Reasoning{anthropic, own}, gemini, "anthropic,gemini"},
		{"signed thinking", []*llmrelayv1.Reasoning{anthropic, anthropic}, call, "anthropic"},
		{"a block without a format", []*llmrelayv1.Reasoning{unformatted}, call, "unknown"},
		{"a block without a format beside signed thinking", []*llmrelayv1.Reasoning{unformatted, anthropic}, call, "anthropic,unknown"},
		{"the answering provider's own", []*llmrelayv1.Reasoning{own}, call, ""},
		{"none", nil, call, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// primary fails twice, the route falls back to backup (an
			// engine of its own: a target failing in a row is ejected).
			eng := newEngine(t)
			req := request(t, "smart", "weather in Paris?", `[{"status": 503}, {"status": 503}]`)
			req.Messages = append(req.Messages,
				&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Reasoning: tc.reasoning, ToolCalls: []*llmrelayv1.ToolCall{tc.call}},
				&llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: "call_1", Content: "sunny"},
			)
			rec, err := generate(t, eng, engine.Caller{}, req)
			if err != nil {
				t.Fatal(err)
			}
			events := rec.Events()
			f := events[len(events)-1].GetFinal()
			if f.GetProvider() != "backup" {
				t.Fatalf("answered by %q, want the fallback backup", f.GetProvider())
			}
			got, ok := f.GetAnnotations()[engine.AnnotationReasoningDropped]
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("annotations %v, want %s %q", f.GetAnnotations(), engine.AnnotationReasoningDropped, tc.want)
			}
		})
	}
}
