package mock

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestSplitWordsConcatenatesToInput(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"hello brave new world", []string{"hello ", "brave ", "new ", "world"}},
		{"  lead and trail  ", []string{"  lead ", "and ", "trail  "}},
		{"one", []string{"one"}},
		{"multi\nline\ttabs", []string{"multi\n", "line\t", "tabs"}},
		{"", nil},
		{"   ", []string{"   "}},
		{"héllo wörld", []string{"héllo ", "wörld"}},
	}
	for _, tc := range tests {
		got := SplitWords(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Join(got, "") != tc.in {
			t.Errorf("SplitWords(%q) concatenates to %q", tc.in, strings.Join(got, ""))
		}
	}
}

func request(attempt int, opts map[string]any) *provider.Request {
	return &provider.Request{
		Model:    ModelEcho,
		Messages: []provider.Message{{Role: provider.RoleUser, Content: "a b c d"}},
		Options:  opts,
		Attempt:  attempt,
	}
}

// drain reads a stream to its end and returns the text and the ending error.
func drain(t *testing.T, s provider.Stream) (string, error) {
	t.Helper()
	var b strings.Builder
	for {
		ev, err := s.Recv()
		if err != nil {
			return b.String(), err
		}
		b.WriteString(ev.Text)
	}
}

func TestFaultsApplyPerAttempt(t *testing.T) {
	faults := []any{
		map[string]any{"status": 429.0, "retry_after_ms": 700.0},
		map[string]any{"drop_after": 2.0},
		map[string]any{"error_after": 1.0},
		map[string]any{"output": "other text"},
	}
	p := New()
	ctx := t.Context()

	_, err := p.Stream(ctx, request(1, map[string]any{"faults": faults}))
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindHTTP || pe.Status != 429 || !pe.HasRetryAfter || pe.RetryAfter != 700*time.Millisecond {
		t.Fatalf("attempt 1: %#v, want HTTP 429 with a 700ms hint", err)
	}

	s, err := p.Stream(ctx, request(2, map[string]any{"faults": faults}))
	if err != nil {
		t.Fatal(err)
	}
	text, err := drain(t, s)
	if text != "a b " || !errors.As(err, &pe) || pe.Kind != provider.KindTransport {
		t.Fatalf("attempt 2: %q, %v; want 2 words then a transport failure", text, err)
	}

	s, _ = p.Stream(ctx, request(3, map[string]any{"faults": faults}))
	text, err = drain(t, s)
	if text != "a " || !errors.As(err, &pe) || pe.Kind != provider.KindInStream || pe.Type != "overloaded_error" {
		t.Fatalf("attempt 3: %q, %v; want 1 word then an in-stream overloaded error", text, err)
	}

	s, _ = p.Stream(ctx, request(4, map[string]any{"faults": faults}))
	if text, err = drain(t, s); text != "other text" || !errors.Is(err, io.EOF) {
		t.Fatalf("attempt 4: %q, %v; want the scripted output", text, err)
	}

	s, _ = p.Stream(ctx, request(5, map[string]any{"faults": faults}))
	if text, err = drain(t, s); text != "a b c d" || !errors.Is(err, io.EOF) {
		t.Fatalf("attempt 5 (past the list): %q, %v; want the echo", text, err)
	}
}

func TestStallEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, err := New().Stream(ctx, request(1, map[string]any{"faults": []any{map[string]any{"stall_after": 1.0}}}))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Recv(); err != nil || ev.Text != "a " {
		t.Fatalf("first event %v, %v", ev, err)
	}
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := s.Recv(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stalled Recv returned %v, want context.Canceled once cancelled", err)
	}
}

// TestFirstDelayHoldsTheFirstEvent: first_delay_ms holds the first event
// back, and the attempt's context ends the wait.
func TestFirstDelayHoldsTheFirstEvent(t *testing.T) {
	slow := map[string]any{"faults": []any{map[string]any{"first_delay_ms": 60_000.0}}}
	ctx, cancel := context.WithCancel(t.Context())
	s, err := New().Stream(ctx, request(1, slow))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := s.Recv(); got <- err }()
	select {
	case err := <-got:
		t.Fatalf("the first event came before its delay: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv returned %v, want context.Canceled once cancelled", err)
	}

	quick := map[string]any{"faults": []any{map[string]any{"first_delay_ms": 1.0}}}
	s, _ = New().Stream(t.Context(), request(1, quick))
	if text, err := drain(t, s); text != "a b c d" || !errors.Is(err, io.EOF) {
		t.Fatalf("after a 1ms delay: %q, %v; want the echo", text, err)
	}
}

func TestStreamReportsFinishAndUsage(t *testing.T) {
	s, err := New().Stream(t.Context(), request(1, nil))
	if err != nil {
		t.Fatal(err)
	}
	var finish provider.FinishReason
	var usage provider.Usage
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case provider.EventFinish:
			finish = ev.FinishReason
		case provider.EventUsage:
			usage = ev.Usage
		}
	}
	if finish != provider.FinishStop || usage.InputTokens != 4 || usage.OutputTokens != 4 {
		t.Errorf("finish %v usage %+v, want stop and 4/4", finish, usage)
	}
}

func TestLorem(t *testing.T) {
	if got := len(strings.Fields(Lorem(100))); got != 100 {
		t.Errorf("Lorem(100) has %d words", got)
	}
}

func TestToolCallsStreamInFragmentsAfterTheText(t *testing.T) {
	faults := []any{map[string]any{
		"output":     "ok",
		"tool_calls": []any{map[string]any{"id": "c1", "name": "f", "arguments": `{"city":"Zürich"}`}},
	}}
	s, err := New().Stream(t.Context(), request(1, map[string]any{"faults": faults}))
	if err != nil {
		t.Fatal(err)
	}
	var got []provider.Event
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != 5 || got[0].Text != "ok" || got[3].FinishReason != provider.FinishToolCalls {
		t.Fatalf("events %+v, want text, two tool-call fragments, finish tool_calls, usage", got)
	}
	first, second := got[1].ToolCall, got[2].ToolCall
	if first.ID != "c1" || first.Name != "f" || second.ID != "" || second.Name != "" || second.Index != 0 {
		t.Errorf("fragments %+v %+v, want id and name on the first only", first, second)
	}
	if args := first.ArgumentsDelta + second.ArgumentsDelta; args != `{"city":"Zürich"}` || !utf8.ValidString(first.ArgumentsDelta) {
		t.Errorf("arguments %q in fragments %q, %q; want them whole, split on a rune boundary", args, first.ArgumentsDelta, second.ArgumentsDelta)
	}
}

func TestRecvFailsAfterClose(t *testing.T) {
	s, err := New().Stream(t.Context(), request(1, map[string]any{"faults": []any{map[string]any{"stall_after": 1.0}}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := s.Recv(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("Recv after Close = %v, want an error instead of a stall", err)
	}
}

func TestStructuredOutputRepliesWithAnInstance(t *testing.T) {
	const sch = `{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative"]},"score":{"type":"number"}},"required":["sentiment","score"]}`
	want := "{\n  \"score\": 0,\n  \"sentiment\": \"positive\"\n}"
	tests := []struct {
		name    string
		model   string
		attempt int
		want    string
	}{
		{"echo replies with the schema's instance", ModelEcho, 1, want},
		{"so does lorem", ModelLorem, 1, want},
		{"a fault's output replaces the instance", ModelEcho, 2, `{"sentiment":"great"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request(tc.attempt, map[string]any{"faults": []any{map[string]any{}, map[string]any{"output": `{"sentiment":"great"}`}}})
			req.Model = tc.model
			req.ResponseFormat = &provider.ResponseFormat{Name: "review", Schema: []byte(sch)}
			if err := New().ValidateRequest(req); err != nil {
				t.Fatalf("ValidateRequest: %v", err)
			}
			s, err := New().Stream(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var deltas int
			var b strings.Builder
			for {
				ev, err := s.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ev.Kind == provider.EventText {
					deltas++
					b.WriteString(ev.Text)
				}
			}
			if b.String() != tc.want {
				t.Errorf("reply = %q, want %q", b.String(), tc.want)
			}
			if tc.want == want && deltas < 3 {
				t.Errorf("the instance came in %d deltas, want several", deltas)
			}
		})
	}
}

// TestThinkStreamsSignedReasoningFirst: mock/think reasons before it
// echoes; its reasoning is signed, and a request that sends the reasoning
// back changed is refused, naming the signature.
func TestThinkStreamsSignedReasoningFirst(t *testing.T) {
	req := request(1, nil)
	req.Model = ModelThink
	s, err := New().Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var reasoning, text, sig string
	for {
		ev, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case provider.EventReasoning:
			if text != "" {
				t.Fatal("reasoning after the text")
			}
			reasoning += ev.Reasoning.Text
			sig += ev.Reasoning.Signature
		case provider.EventText:
			text += ev.Text
		case provider.EventUsage:
			if ev.Usage.ReasoningTokens != 10 || ev.Usage.OutputTokens != 14 {
				t.Errorf("usage %+v, want 10 reasoning tokens in 14", ev.Usage)
			}
		}
	}
	if reasoning != "The user wrote 4 words. I will say them back." || text != "a b c d" || sig != Sign(reasoning) {
		t.Fatalf("reasoning %q (signature %q), text %q", reasoning, sig, text)
	}
	back := request(1, nil)
	back.Messages = append(back.Messages, provider.Message{Role: provider.RoleAssistant, Content: text,
		Reasoning: []provider.Reasoning{{Text: reasoning, Signature: sig, Format: provider.FormatMock}}})
	if err := New().ValidateRequest(back); err != nil {
		t.Errorf("the reasoning sent back as it came: %v", err)
	}
	back.Messages[1].Reasoning[0].Text += "!"
	var fe *provider.FieldError
	if err := New().ValidateRequest(back); !errors.As(err, &fe) || fe.Field != "messages[1].reasoning[0].signature" {
		t.Errorf("changed reasoning: %v, want a field error on its signature", err)
	}
}

func TestMalformedIsAProtocolError(t *testing.T) {
	s, err := New().Stream(t.Context(), request(1, map[string]any{"faults": []any{map[string]any{"malformed_after": 1.0}}}))
	if err != nil {
		t.Fatal(err)
	}
	text, err := drain(t, s)
	var pe *provider.Error
	if text != "a " || !errors.As(err, &pe) || pe.Kind != provider.KindProtocol || pe.FailureClass().Transient() || pe.Raw == "" {
		t.Errorf("%q, %v; want one word, then a protocol error that is not retried, with the raw event", text, err)
	}
}

func TestStandingFaultFailsEveryAttemptTheRequestDoesNotScript(t *testing.T) {
	// As the YAML decoder gives it: whole numbers are ints.
	p, err := FromConfig(provider.Config{Name: "down", Kind: Kind, Options: map[string]any{
		"fault": map[string]any{"status": 503, "retry_after_ms": 250},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for attempt := 1; attempt <= 3; attempt++ {
		_, err := p.Stream(ctx, request(attempt, nil))
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Status != 503 || pe.FailureClass() != provider.ClassOverloaded || pe.RetryAfter != 250*time.Millisecond {
			t.Fatalf("attempt %d: %v, want the standing 503 with its hint", attempt, err)
		}
	}
	// The request's own fault list wins for the attempts it covers.
	s, err := p.Stream(ctx, request(1, map[string]any{"faults": []any{map[string]any{}}}))
	if err != nil {
		t.Fatalf("a scripted normal attempt: %v", err)
	}
	if text, err := drain(t, s); text != "a b c d" || !errors.Is(err, io.EOF) {
		t.Fatalf("scripted attempt: %q, %v", text, err)
	}
	if _, err := p.Stream(ctx, request(2, map[string]any{"faults": []any{map[string]any{}}})); err == nil {
		t.Fatal("attempt 2, past the request's list, got no standing fault")
	}
}

func TestStandingFaultConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		want    string
	}{
		{"unknown option", map[string]any{"faults": []any{}}, "options.faults: unknown option for the mock provider; known: fault"},
		{"bad status", map[string]any{"fault": map[string]any{"status": 200}}, "options.fault.status: must be an integer from 400 to 599"},
		{"not an object", map[string]any{"fault": "503"}, "options.fault: must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromConfig(provider.Config{Name: "m", Kind: Kind, Options: tt.options})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to start with %q", err, tt.want)
			}
		})
	}
}
