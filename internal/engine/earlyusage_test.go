package engine_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/engine/enginetest"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// kindEarly is the kind of earlyProvider.
const kindEarly = "enginetest-early"

func init() {
	provider.Register(kindEarly, func(provider.Config) (provider.Provider, error) { return earlyProvider{}, nil })
}

// earlyProvider reports usage as its model says. Model "start" reports the
// input as its stream opens, as Anthropic does: 30 tokens (5 cached) on
// attempt 1, which then fails overloaded before any text, and 40 on the
// attempts after it, which answer "hello" and report 9 output tokens at
// the end. Model "end" reports its usage only after its text, as OpenAI's
// format does.
type earlyProvider struct{}

func (earlyProvider) Stream(_ context.Context, req *provider.Request) (provider.Stream, error) {
	text := []provider.Event{{Kind: provider.EventText, Text: "hel"}, {Kind: provider.EventText, Text: "lo"}, {Kind: provider.EventFinish, FinishReason: provider.FinishStop}}
	if req.Model == "end" {
		return &scripted{events: append(text, provider.Event{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 17, OutputTokens: 2}})}, nil
	}
	if req.Attempt == 1 {
		return &scripted{events: []provider.Event{{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 30, CachedInputTokens: 5, OutputTokens: 1}}},
			err: &provider.Error{Kind: provider.KindInStream, Class: provider.ClassOverloaded, Status: http.StatusServiceUnavailable, Type: "overloaded_error"}}, nil
	}
	events := []provider.Event{{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 40, OutputTokens: 1}}}
	events = append(events, text...)
	return &scripted{events: append(events, provider.Event{Kind: provider.EventUsage, Usage: provider.Usage{InputTokens: 40, OutputTokens: 9}})}, nil
}

// scripted streams its events, then ends with err (io.EOF when nil).
type scripted struct {
	events []provider.Event
	err    error
}

func (s *scripted) Recv() (provider.Event, error) {
	if len(s.events) == 0 {
		if s.err != nil {
			return provider.Event{}, s.err
		}
		return provider.Event{}, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *scripted) Close() error { return nil }

// earlyUsageSink records the early usage it is given among the events, as
// "early <input>/<cached>/<output>" ("early none" for nil).
type earlyUsageSink struct {
	enginetest.Recorder
	log []string
}

func (s *earlyUsageSink) EarlyUsage(u *llmrelayv1.Usage) {
	if u == nil {
		s.log = append(s.log, "early none")
		return
	}
	s.log = append(s.log, fmt.Sprintf("early %d/%d/%d", u.GetInputTokens(), u.GetCachedInputTokens(), u.GetOutputTokens()))
}

func (s *earlyUsageSink) Send(ev *llmrelayv1.GenerateEvent) error {
	s.log = append(s.log, render([]*llmrelayv1.GenerateEvent{ev})...)
	return s.Recorder.Send(ev)
}

// TestEarlyUsage: a sink that takes it (engine.EarlyUsageSink) is given,
// before an attempt's first delta, what that attempt's provider reported
// before it: the input an Anthropic-style provider reports as its stream
// opens, nothing from one that reports at the end. An attempt that failed
// before its first delta gives none; the Final's usage is every attempt's.
func TestEarlyUsage(t *testing.T) {
	eng := newEngine(t)
	for _, tc := range []struct {
		model string
		want  []string
		final string
	}{
		{"early/start", []string{`will_retry a1->a2 early`, `early 40/0/1`, `delta a2`, `final a2 early "hello"`}, "70/5/10"},
		{"early/end", []string{`early none`, `delta a1`, `final a1 early "hello"`}, "17/0/2"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			req := request(t, tc.model, "hi", "")
			ctx, _ := callinfo.NewContext(t.Context())
			ctx, release, err := eng.Admission().Admit(ctx, engine.Caller{Method: llmrelayv1.LLMService_Generate_FullMethodName}, req)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			sink := &earlyUsageSink{}
			if err := eng.Generate(ctx, req, sink); err != nil {
				t.Fatal(err)
			}
			if got := slices.Compact(sink.log); !slices.Equal(got, tc.want) {
				t.Errorf("the sink saw %q, want %q", got, tc.want)
			}
			events := sink.Events()
			u := events[len(events)-1].GetFinal().GetUsage()
			if got := fmt.Sprintf("%d/%d/%d", u.GetInputTokens(), u.GetCachedInputTokens(), u.GetOutputTokens()); got != tc.final {
				t.Errorf("final usage %s, want %s", got, tc.final)
			}
		})
	}
}
