package client

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// fakeStream replays events, then ends with end (io.EOF for a clean end).
type fakeStream struct {
	events []*llmrelayv1.GenerateEvent
	end    error
	// reads counts Recv calls, including the ones that returned end.
	reads int
}

func (f *fakeStream) Recv() (*llmrelayv1.GenerateEvent, error) {
	f.reads++
	if len(f.events) == 0 {
		return nil, f.end
	}
	ev := f.events[0]
	f.events = f.events[1:]
	return ev, nil
}

func delta(attempt uint32, text string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Text: text}}}
}

func willRetry(attempt uint32, discard bool) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_WillRetry{WillRetry: &llmrelayv1.WillRetry{
		Reason: llmrelayv1.RetryReason_RETRY_REASON_TRANSPORT, Delay: durationpb.New(50 * time.Millisecond),
		NextAttempt: attempt + 1, DiscardPartial: discard,
	}}}
}

func final(attempt uint32, text string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{
		Message:  &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: text},
		Attempts: attempt,
	}}}
}

// statusErr builds a status error with ErrorInfo and, when retryAfter > 0, RetryInfo.
func statusErr(t *testing.T, code codes.Code, reason string, retryAfter time.Duration) error {
	t.Helper()
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: Domain, Metadata: map[string]string{"attempts": "3"}}}
	if retryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)})
	}
	st, err := status.New(code, "the provider is overloaded").WithDetails(details...)
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// recorder records what Collect's hooks saw, as a transcript a person would
// read: the text on screen, with each retry's erasure marked.
type recorder struct {
	screen    strings.Builder
	discarded []string
	retries   int
}

func (r *recorder) hooks() *Hooks {
	return &Hooks{
		OnDelta: func(d *llmrelayv1.Delta) { r.screen.WriteString(d.GetText()) },
		OnWillRetry: func(_ *llmrelayv1.WillRetry, discarded string) {
			r.retries++
			r.discarded = append(r.discarded, discarded)
			// Take the discarded text back off the screen, as a UI would.
			s := r.screen.String()
			if !strings.HasSuffix(s, discarded) {
				panic("discarded text " + discarded + " is not what is on screen: " + s)
			}
			r.screen.Reset()
			r.screen.WriteString(strings.TrimSuffix(s, discarded))
		},
	}
}

func TestCollectAppliesDiscardPartial(t *testing.T) {
	tests := []struct {
		name          string
		events        []*llmrelayv1.GenerateEvent
		wantFinal     string
		wantDiscarded []string
		wantScreen    string
	}{
		{
			name:       "one attempt",
			events:     []*llmrelayv1.GenerateEvent{delta(1, "hello "), delta(1, "world"), final(1, "hello world")},
			wantFinal:  "hello world",
			wantScreen: "hello world",
		},
		{
			name: "restart mid-stream drops what the failed attempt showed",
			events: []*llmrelayv1.GenerateEvent{
				delta(1, "the "), delta(1, "quick "), willRetry(1, true),
				delta(2, "the "), delta(2, "quick "), delta(2, "brown fox"), final(2, "the quick brown fox"),
			},
			wantFinal:     "the quick brown fox",
			wantDiscarded: []string{"the quick "},
			wantScreen:    "the quick brown fox",
		},
		{
			name: "heartbeats are skipped",
			events: []*llmrelayv1.GenerateEvent{
				{Event: &llmrelayv1.GenerateEvent_Heartbeat{Heartbeat: &llmrelayv1.Heartbeat{}}},
				delta(1, "hello"),
				{Event: &llmrelayv1.GenerateEvent_Heartbeat{Heartbeat: &llmrelayv1.Heartbeat{}}},
				final(1, "hello"),
			},
			wantFinal:  "hello",
			wantScreen: "hello",
		},
		{
			name: "a retry before any delta discards nothing",
			events: []*llmrelayv1.GenerateEvent{
				willRetry(1, false), delta(2, "hello"), final(2, "hello"),
			},
			wantFinal:     "hello",
			wantDiscarded: []string{""},
			wantScreen:    "hello",
		},
		{
			name: "each restart drops only its own attempt's text",
			events: []*llmrelayv1.GenerateEvent{
				delta(1, "a1 "), willRetry(1, true),
				willRetry(2, false),
				delta(3, "b1 "), delta(3, "b2 "), willRetry(3, true),
				delta(4, "c1"), final(4, "c1"),
			},
			wantFinal:     "c1",
			wantDiscarded: []string{"a1 ", "", "b1 b2 "},
			wantScreen:    "c1",
		},
		{
			name: "the final is the answer even when the deltas differ",
			events: []*llmrelayv1.GenerateEvent{
				delta(1, "partial"), final(1, "the whole answer"),
			},
			wantFinal:  "the whole answer",
			wantScreen: "partial",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			fs := &fakeStream{events: tt.events, end: io.EOF}
			got, err := Collect(fs, rec.hooks())
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			if c := got.GetMessage().GetContent(); c != tt.wantFinal {
				t.Errorf("final text = %q, want %q", c, tt.wantFinal)
			}
			if rec.screen.String() != tt.wantScreen {
				t.Errorf("screen = %q, want %q", rec.screen.String(), tt.wantScreen)
			}
			if strings.Join(rec.discarded, "|") != strings.Join(tt.wantDiscarded, "|") || len(rec.discarded) != len(tt.wantDiscarded) {
				t.Errorf("discarded = %q, want %q", rec.discarded, tt.wantDiscarded)
			}
			if len(fs.events) != 0 || fs.reads != len(tt.events)+1 {
				t.Errorf("Collect read %d times, left %d events: it must read through the final to the end of the stream", fs.reads, len(fs.events))
			}
		})
	}
}

func TestCollectFailures(t *testing.T) {
	overloaded := statusErr(t, codes.Unavailable, "RETRIES_EXHAUSTED", 2*time.Second)
	tests := []struct {
		name       string
		events     []*llmrelayv1.GenerateEvent
		end        error
		wantErr    error
		wantCode   codes.Code
		wantReason string
		wantDelay  time.Duration
		wantScreen string
	}{
		{
			name:       "status after a restart",
			events:     []*llmrelayv1.GenerateEvent{delta(1, "the "), willRetry(1, true), delta(2, "a ")},
			end:        overloaded,
			wantCode:   codes.Unavailable,
			wantReason: "RETRIES_EXHAUSTED",
			wantDelay:  2 * time.Second,
			wantScreen: "a ",
		},
		{
			name:     "status before any event",
			end:      status.Error(codes.Unauthenticated, "no key"),
			wantCode: codes.Unauthenticated,
		},
		{
			name:       "clean end without a final",
			events:     []*llmrelayv1.GenerateEvent{delta(1, "half an ")},
			end:        io.EOF,
			wantErr:    ErrNoFinal,
			wantScreen: "half an ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			got, err := Collect(&fakeStream{events: tt.events, end: tt.end}, rec.hooks())
			if got != nil {
				t.Errorf("Collect returned a final %v with error %v", got, err)
			}
			if rec.screen.String() != tt.wantScreen {
				t.Errorf("screen = %q, want %q", rec.screen.String(), tt.wantScreen)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %T %v, want *Error", err, err)
			}
			if e.Code != tt.wantCode || e.Reason != tt.wantReason || e.RetryDelay != tt.wantDelay || e.HasRetryDelay != (tt.wantDelay > 0) {
				t.Errorf("error = {%v %q %v %v}, want {%v %q %v}", e.Code, e.Reason, e.RetryDelay, e.HasRetryDelay, tt.wantCode, tt.wantReason, tt.wantDelay)
			}
		})
	}
}

func TestCollectWithoutHooksAndWithPartialObjects(t *testing.T) {
	obj := structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(1)}})
	events := []*llmrelayv1.GenerateEvent{
		{Attempt: 1, Event: &llmrelayv1.GenerateEvent_PartialObject{PartialObject: obj}},
		delta(1, `{"a":1}`), final(1, `{"a":1}`),
	}
	if f, err := Collect(&fakeStream{events: append([]*llmrelayv1.GenerateEvent(nil), events...), end: io.EOF}, nil); err != nil || f.GetMessage().GetContent() != `{"a":1}` {
		t.Fatalf("Collect with nil hooks = %v, %v", f, err)
	}
	var partials []*structpb.Value
	if _, err := Collect(&fakeStream{events: events, end: io.EOF}, &Hooks{OnPartialObject: func(v *structpb.Value) { partials = append(partials, v) }}); err != nil {
		t.Fatal(err)
	}
	if len(partials) != 1 || !proto.Equal(partials[0], obj) {
		t.Errorf("partial objects = %v, want [%v]", partials, obj)
	}
}

// inTurn sets ev's turn.
func inTurn(turn uint32, ev *llmrelayv1.GenerateEvent) *llmrelayv1.GenerateEvent {
	ev.Turn = turn
	return ev
}

// TestCollectServerToolTurns: with server tools, a will_retry discards only
// its own turn's text, never an earlier turn's nor a tool result; the
// hooks see every tool event and each new turn.
func TestCollectServerToolTurns(t *testing.T) {
	total := 2.0
	progress := &llmrelayv1.ToolProgress{ToolCallId: "mock_1_0", Name: "everything/echo", Progress: 1, Total: &total}
	result := &llmrelayv1.ToolResult{ToolCallId: "mock_1_0", Name: "everything/echo", Content: "Echo: hello", Attempts: 1}
	events := []*llmrelayv1.GenerateEvent{
		inTurn(1, delta(1, "Let me ask. ")),
		inTurn(1, &llmrelayv1.GenerateEvent{Attempt: 1, Event: &llmrelayv1.GenerateEvent_ToolProgress{ToolProgress: progress}}),
		{Event: &llmrelayv1.GenerateEvent_Heartbeat{Heartbeat: &llmrelayv1.Heartbeat{}}}, // turn 0
		inTurn(1, &llmrelayv1.GenerateEvent{Attempt: 1, Event: &llmrelayv1.GenerateEvent_ToolResult{ToolResult: result}}),
		inTurn(2, delta(2, "Echo: ")),
		inTurn(2, willRetry(2, true)),
		inTurn(2, delta(3, "Echo: ")), inTurn(2, delta(3, "hello")),
		inTurn(2, final(3, "Echo: hello")),
	}
	var rec recorder
	hooks := rec.hooks()
	var seen []string
	hooks.OnTurn = func(n uint32) {
		seen = append(seen, fmt.Sprintf("turn %d", n))
		rec.screen.WriteString("\n")
	}
	hooks.OnToolProgress = func(p *llmrelayv1.ToolProgress) {
		seen = append(seen, fmt.Sprintf("progress %s %v/%v", p.GetToolCallId(), p.GetProgress(), p.GetTotal()))
	}
	hooks.OnToolResult = func(r *llmrelayv1.ToolResult) {
		seen = append(seen, fmt.Sprintf("result %s %q", r.GetToolCallId(), r.GetContent()))
	}
	f, err := Collect(&fakeStream{events: events, end: io.EOF}, hooks)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if f.GetMessage().GetContent() != "Echo: hello" {
		t.Errorf("final = %q", f.GetMessage().GetContent())
	}
	if want := []string{"Echo: "}; !slices.Equal(rec.discarded, want) {
		t.Errorf("discarded = %q, want %q: only turn 2's text", rec.discarded, want)
	}
	if want := "Let me ask. \nEcho: hello"; rec.screen.String() != want {
		t.Errorf("screen = %q, want %q", rec.screen.String(), want)
	}
	if want := []string{`progress mock_1_0 1/2`, `result mock_1_0 "Echo: hello"`, "turn 2"}; !slices.Equal(seen, want) {
		t.Errorf("hooks saw %q, want %q", seen, want)
	}
}
