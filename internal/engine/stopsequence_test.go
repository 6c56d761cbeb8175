package engine_test

import (
	"context"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// kindStopSeq is the kind of stopSeqProvider.
const kindStopSeq = "enginetest-stopseq"

func init() {
	provider.Register(kindStopSeq, func(provider.Config) (provider.Provider, error) { return stopSeqProvider{}, nil })
}

// stopSeqProvider answers "The answer is 42" and finishes naming the
// last message's text as the stop sequence that ended the reply, as
// Anthropic's stop_sequence does: with FinishStop for model "stop", with
// FinishLength for model "length" (a provider that breaks the contract),
// and for model "twice" with a second finish event that names none. Model
// "none" names none: the model finished on its own.
type stopSeqProvider struct{}

func (stopSeqProvider) Stream(_ context.Context, req *provider.Request) (provider.Stream, error) {
	named := req.Messages[len(req.Messages)-1].Content
	events := []provider.Event{{Kind: provider.EventText, Text: "The answer is 42"}}
	switch req.Model {
	case "none":
		events = append(events, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
	case "length":
		events = append(events, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishLength, Text: named})
	case "twice":
		events = append(events, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop, Text: named},
			provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop})
	default:
		events = append(events, provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop, Text: named})
	}
	return &scripted{events: append(events, provider.Event{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 5, OutputTokens: 4}})}, nil
}

// TestFinalStopSequence: the stop sequence a provider says ended the
// reply reaches the Final's stop_sequence, with FINISH_REASON_STOP
// unchanged, when it is one of the request's; a sequence the request did
// not ask for, one named with another finish reason, and one a later
// finish event takes back do not.
func TestFinalStopSequence(t *testing.T) {
	eng := newEngine(t)
	for _, tc := range []struct {
		name, model, named string
		stop               []string
		finish             llmrelayv1.FinishReason
		want               string
	}{
		{"one of the request's", "stopseq/stop", "Observation:", []string{"</answer>", "Observation:"}, llmrelayv1.FinishReason_FINISH_REASON_STOP, "Observation:"},
		{"the model finished on its own", "stopseq/none", "</answer>", []string{"</answer>"}, llmrelayv1.FinishReason_FINISH_REASON_STOP, ""},
		{"not the request's", "stopseq/stop", "<|im_end|>", []string{"</answer>"}, llmrelayv1.FinishReason_FINISH_REASON_STOP, ""},
		{"a request without stop sequences", "stopseq/stop", "</answer>", nil, llmrelayv1.FinishReason_FINISH_REASON_STOP, ""},
		{"only exactly as the request wrote it", "stopseq/stop", "</ANSWER>", []string{"</answer>"}, llmrelayv1.FinishReason_FINISH_REASON_STOP, ""},
		{"with another finish reason", "stopseq/length", "</answer>", []string{"</answer>"}, llmrelayv1.FinishReason_FINISH_REASON_LENGTH, ""},
		{"taken back by a later finish", "stopseq/twice", "</answer>", []string{"</answer>"}, llmrelayv1.FinishReason_FINISH_REASON_STOP, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, tc.model, tc.named, "")
			if tc.stop != nil {
				req.Generation = &llmrelayv1.GenerationConfig{Stop: tc.stop}
			}
			rec, err := generate(t, eng, engine.Caller{}, req)
			if err != nil {
				t.Fatal(err)
			}
			events := rec.Events()
			f := events[len(events)-1].GetFinal()
			if f.GetFinishReason() != tc.finish || f.GetStopSequence() != tc.want || f.GetMessage().GetContent() != "The answer is 42" {
				t.Errorf("final %v stop_sequence %q text %q, want %v %q and the reply", f.GetFinishReason(), f.GetStopSequence(), f.GetMessage().GetContent(), tc.finish, tc.want)
			}
		})
	}
}
