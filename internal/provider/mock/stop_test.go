package mock_test

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/mock"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestStopSequences: the mock stops before the first of the request's stop
// sequences in the text it would write, as a real provider does: the text
// up to it, FINISH_REASON_STOP naming the sequence (what becomes
// Final.stop_sequence), the output tokens of the text it wrote, and
// nothing after it (no tool calls). It ignored them and wrote the whole
// text.
func TestStopSequences(t *testing.T) {
	calls := []any{map[string]any{"id": "call_1", "name": "f", "arguments": "{}"}}
	for _, tc := range []struct {
		name   string
		input  string
		stop   []string
		faults []any
		text   string
		seq    string
		finish provider.FinishReason
	}{
		{"one sequence", "The answer is 42.\nObservation: it is", []string{"Observation:"}, nil,
			"The answer is 42.\n", "Observation:", provider.FinishStop},
		{"the earliest of several", "alpha </a> beta END gamma", []string{"END", "</a>"}, nil,
			"alpha ", "</a>", provider.FinishStop},
		{"the first listed of two at one place", "say STOPNOW", []string{"STOP", "STOPNOW"}, nil,
			"say ", "STOP", provider.FinishStop},
		{"inside a word", "abcdef", []string{"cd"}, nil, "ab", "cd", provider.FinishStop},
		{"at the start", "END of it", []string{"END"}, nil, "", "END", provider.FinishStop},
		{"none in the text", "nothing to stop", []string{"END"}, nil, "nothing to stop", "", provider.FinishStop},
		{"the tool calls after it are not made", "call it END", []string{"END"}, []any{map[string]any{"tool_calls": calls}},
			"call it ", "END", provider.FinishStop},
		{"without it, the tool calls are made", "call it", []string{"END"}, []any{map[string]any{"tool_calls": calls}},
			"call it", "", provider.FinishToolCalls},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &provider.Request{
				Model:      mock.ModelEcho,
				Messages:   []provider.Message{{Role: provider.RoleUser, Content: tc.input}},
				Generation: provider.Generation{Stop: tc.stop},
				Attempt:    1,
			}
			if tc.faults != nil {
				req.Options = map[string]any{"faults": tc.faults}
			}
			r := pt.Collect(t.Context(), mock.New(), req)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Text != tc.text || r.StopSequence != tc.seq || r.Finish != tc.finish {
				t.Errorf("text %q, stop sequence %q, finish %v; want %q, %q, %v", r.Text, r.StopSequence, r.Finish, tc.text, tc.seq, tc.finish)
			}
			if want := len(mock.SplitWords(tc.text)); r.Usage.OutputTokens != int64(want) {
				t.Errorf("output tokens %d, want %d, the words written", r.Usage.OutputTokens, want)
			}
			if tc.finish == provider.FinishStop && len(r.ToolCalls) != 0 {
				t.Errorf("tool calls %+v after the stop sequence", r.ToolCalls)
			}
		})
	}
}
