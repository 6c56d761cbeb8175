package service_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/mock"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// think returns a mock/think request for text with the given fault list
// ("" for none) and retry policy.
func think(t *testing.T, text, faults string, policy *llmrelayv1.RetryPolicy) *llmrelayv1.GenerateRequest {
	req := echo(t, text, faults, policy)
	req.Model = "mock/think"
	return req
}

// TestReasoningStreamsApartFromTheText: a reasoning model's thinking
// arrives as reasoning deltas, never as text, and the final message holds
// it, with its signature, apart from the content.
func TestReasoningStreamsApartFromTheText(t *testing.T) {
	in := servertest.Start(t, nil)
	events, err := servertest.Collect(t.Context(), in.Client, think(t, "hello world", "", nil))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	const reasoning = "The user wrote 2 words. I will say them back."
	checkStream(t, events, []string{
		`reasoning a1 [0] mock "The "`,
		`reasoning a1 [0] "user "`,
		`reasoning a1 [0] "wrote "`,
		`reasoning a1 [0] "2 "`,
		`reasoning a1 [0] "words. "`,
		`reasoning a1 [0] "I "`,
		`reasoning a1 [0] "will "`,
		`reasoning a1 [0] "say "`,
		`reasoning a1 [0] "them "`,
		`reasoning a1 [0] "back."`,
		`reasoning a1 [0] signature ""`,
		`delta a1 "hello "`,
		`delta a1 "world"`,
		`final a1 attempts=1 "hello world"`,
	})
	msg := events[len(events)-1].GetFinal().GetMessage()
	want := &llmrelayv1.Reasoning{Text: reasoning, Signature: mock.Sign(reasoning), Format: provider.FormatMock}
	if len(msg.GetReasoning()) != 1 || !proto.Equal(msg.GetReasoning()[0], want) {
		t.Errorf("final reasoning %v, want %v", msg.GetReasoning(), want)
	}
	u := events[len(events)-1].GetFinal().GetUsage()
	if u.GetReasoningTokens() != 10 || u.GetOutputTokens() != 12 {
		t.Errorf("usage %v, want 10 reasoning tokens of 12 output tokens", u)
	}
}

// TestReasoningGoesBackWithTheMessage: the final message, sent back as it
// is in the next turn, reaches the provider with its reasoning and
// signature (the mock checks the signature, as Anthropic does); a tampered
// signature is refused before any attempt, naming the field.
func TestReasoningGoesBackWithTheMessage(t *testing.T) {
	in := servertest.Start(t, nil)
	events, err := servertest.Collect(t.Context(), in.Client, think(t, "hello world", "", nil))
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	turn1 := events[len(events)-1].GetFinal().GetMessage()
	next := func(assistant *llmrelayv1.Message) *llmrelayv1.GenerateRequest {
		req := think(t, "again", "", nil)
		req.Messages = []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hello world"}, assistant, req.Messages[0]}
		return req
	}
	if _, err := servertest.Collect(t.Context(), in.Client, next(turn1)); err != nil {
		t.Errorf("turn 2 with the final message sent back: %v", err)
	}
	tampered := proto.Clone(turn1).(*llmrelayv1.Message)
	tampered.Reasoning[0].Text += " And more."
	_, err = servertest.Collect(t.Context(), in.Client, next(tampered))
	st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
	if f := fieldViolation(st.Details()); f != "messages[1].reasoning[0].signature" {
		t.Errorf("violation on %q, want messages[1].reasoning[0].signature", f)
	}
}

func fieldViolation(details []any) string {
	for _, d := range details {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// TestReasoningIsDiscardedLikeText: an attempt that streamed only
// reasoning before it failed is retried with discard_partial, and the
// final carries the successful attempt's reasoning only.
func TestReasoningIsDiscardedLikeText(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	events, err := servertest.Collect(t.Context(), in.Client, think(t, "hi", `[{"drop_after": 2, "reasoning": "first thought"}]`, attempts(3)))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`reasoning a1 [0] mock "first "`,
		`reasoning a1 [0] "thought"`,
		`will_retry a1 TRANSPORT next=2 discard=true cause=Unavailable/PROVIDER_TRANSPORT_ERROR`,
		`reasoning a2 [0] mock "The "`,
		`reasoning a2 [0] "user "`,
		`reasoning a2 [0] "wrote "`,
		`reasoning a2 [0] "1 "`,
		`reasoning a2 [0] "words. "`,
		`reasoning a2 [0] "I "`,
		`reasoning a2 [0] "will "`,
		`reasoning a2 [0] "say "`,
		`reasoning a2 [0] "them "`,
		`reasoning a2 [0] "back."`,
		`reasoning a2 [0] signature ""`,
		`delta a2 "hi"`,
		`final a2 attempts=2 "hi"`,
	})
	if r := events[len(events)-1].GetFinal().GetMessage().GetReasoning(); len(r) != 1 || strings.Contains(r[0].GetText(), "first") {
		t.Errorf("final reasoning %v, want the second attempt's only", r)
	}
}

// TestRefusalReachesTheClientAsARefusal: a refusal streams as refusal
// deltas, ends with FINISH_REASON_REFUSAL and message.refusal, and with a
// response format it is the answer: not validated, not re-asked.
func TestRefusalReachesTheClientAsARefusal(t *testing.T) {
	in := servertest.Start(t, nil)
	req := echo(t, "help", `[{"output": "", "refusal": "I can't help with that."}]`, nil)
	req.ResponseFormat = &llmrelayv1.ResponseFormat{JsonSchema: mustStruct(t, map[string]any{
		"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}, "required": []any{"a"},
	})}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	checkStream(t, events, []string{
		`refusal a1 "I "`,
		`refusal a1 "can't "`,
		`refusal a1 "help "`,
		`refusal a1 "with "`,
		`refusal a1 "that."`,
		`final a1 attempts=1 ""`,
	})
	f := events[len(events)-1].GetFinal()
	if f.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_REFUSAL || f.GetMessage().GetRefusal() != "I can't help with that." ||
		f.GetObject() != nil || f.GetValidationRetries() != 0 {
		t.Errorf("final %v, want the refusal, FINISH_REASON_REFUSAL, no object and no re-ask", f)
	}
}

// TestFinalUsageCountsReasoningAndCache: every usage count is summed over
// the call's attempts.
func TestFinalUsageCountsReasoningAndCache(t *testing.T) {
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}))
	u := `{"input_tokens": 100, "output_tokens": 30, "reasoning_tokens": 20, "cached_input_tokens": 60, "cache_creation_input_tokens": 40}`
	events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"usage": `+u+`, "error_after": 1}, {"usage": `+u+`}]`, attempts(2)))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := events[len(events)-1].GetFinal().GetUsage()
	want := &llmrelayv1.Usage{InputTokens: 100, OutputTokens: 30, ReasoningTokens: 20, CachedInputTokens: 60, CacheCreationInputTokens: 40}
	// The first attempt failed before its usage: only the second counts.
	if !proto.Equal(got, want) {
		t.Errorf("usage %v, want %v", got, want)
	}
}

// TestProtocolErrorIsNotRetried: a stream that arrived whole but does not
// decode fails the call at once (UNKNOWN, PROVIDER_PROTOCOL_ERROR), with
// the event that did not decode in the debug log only.
func TestProtocolErrorIsNotRetried(t *testing.T) {
	logs := &syncBuffer{}
	in := servertest.Start(t, nil, server.WithRetryTimer(&recordingTimer{}),
		server.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"malformed_after": 2}]`, attempts(3)))
	checkStream(t, events, []string{`delta a1 "the "`, `delta a1 "quick "`})
	st := wantStatus(t, err, codes.Unknown, "PROVIDER_PROTOCOL_ERROR", map[string]string{"attempts": "1"})
	if strings.Contains(st.Message(), "choices") {
		t.Errorf("the status shows the provider's event: %s", st.Message())
	}
	recs := logs.records(t, "provider error response")
	if len(recs) != 1 || !strings.Contains(recs[0]["body"].(string), `"content": 42`) {
		t.Errorf("debug log records %v, want the event that did not decode", recs)
	}
}

// TestStreamTimeoutFloor: timeouts no provider could meet are refused
// before any attempt, naming the field; half a second is fine.
func TestStreamTimeoutFloor(t *testing.T) {
	in := servertest.Start(t, nil)
	tests := []struct {
		name        string
		idle, first time.Duration
		field       string
	}{
		{"stream_idle_timeout of 1ns", time.Nanosecond, 0, "stream_idle_timeout"},
		{"first_event_timeout of 10ms", 0, 10 * time.Millisecond, "first_event_timeout"},
		{"half a second each", 500 * time.Millisecond, 500 * time.Millisecond, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := echo(t, input, "", nil)
			if tc.idle > 0 {
				req.StreamIdleTimeout = durationpb.New(tc.idle)
			}
			if tc.first > 0 {
				req.FirstEventTimeout = durationpb.New(tc.first)
			}
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				return
			}
			st := wantStatus(t, err, codes.InvalidArgument, "INVALID_REQUEST", nil)
			if f := fieldViolation(st.Details()); f != tc.field || len(events) != 0 {
				t.Errorf("violation on %q after %d events, want %s before any", f, len(events), tc.field)
			}
		})
	}
}

// TestOperatorOptionsPolicy: keys the operator forbids, or does not
// allow, are refused as the operator's decision (PERMISSION_DENIED)
// naming the key and the provider.
func TestOperatorOptionsPolicy(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = []provider.Config{{Name: "mock", Kind: "mock", ProviderOptions: provider.OptionsPolicy{Deny: []string{"faults"}}}}
	in := servertest.Start(t, cfg)
	_, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{}]`, nil))
	st := wantStatus(t, err, codes.PermissionDenied, "PROVIDER_OPTION_NOT_ALLOWED", map[string]string{"option": "faults", "provider": "mock"})
	if f := fieldViolation(st.Details()); f != "provider_options.faults" {
		t.Errorf("violation on %q, want provider_options.faults", f)
	}
	if _, err := servertest.Collect(t.Context(), in.Client, echo(t, input, "", nil)); err != nil {
		t.Errorf("a call without the key: %v", err)
	}
}

// TestExtraHeadersCannotReplaceConfiguredHeaders: a request whose
// extra_headers name a header the operator configured for the provider
// (in any case) is refused naming the header, before any attempt.
func TestExtraHeadersCannotReplaceConfiguredHeaders(t *testing.T) {
	sp := newScripted(t, step{events: []provider.Event{{Kind: provider.EventText, Text: "hi"}}, err: io.EOF})
	cfg := scriptedConfig(t)
	cfg.Providers[0].Headers = map[string]string{"OpenAI-Project": "proj_operator"}
	in := servertest.Start(t, cfg)
	req := scriptedRequest(t, nil)
	opts, err := structpb.NewStruct(map[string]any{"extra_headers": map[string]any{"openai-project": "proj_other"}})
	if err != nil {
		t.Fatal(err)
	}
	req.ProviderOptions = opts
	events, err := servertest.Collect(t.Context(), in.Client, req)
	st := wantStatus(t, err, codes.InvalidArgument, "INVALID_PROVIDER_OPTIONS", nil)
	if f := fieldViolation(st.Details()); f != "provider_options.extra_headers.openai-project" || len(events) != 0 || len(sp.Requests()) != 0 {
		t.Errorf("violation on %q after %d events and %d attempts, want provider_options.extra_headers.openai-project before any", f, len(events), len(sp.Requests()))
	}
}

// TestSlowClientDoesNotStallTheProvider: the time spent handing an event
// to a client that reads slowly is not the provider's silence.
func TestSlowClientDoesNotStallTheProvider(t *testing.T) {
	in := servertest.Start(t, nil)
	// A fixed 64 KiB window (no dynamic growth): the reply, several times
	// larger, fills it.
	conn := in.Dial(t, grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16))
	req := echo(t, strings.Repeat("word ", 20000), "", attempts(1))
	req.StreamIdleTimeout = durationpb.New(200 * time.Millisecond)
	stream, err := llmrelayv1.NewLLMServiceClient(conn).Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Let the server fill the flow-control window and wait on the client
	// for longer than the idle timeout, then read everything.
	time.Sleep(600 * time.Millisecond)
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			t.Fatal("the stream ended without a final")
		}
		if err != nil {
			t.Fatalf("a client slow to read failed the call: %v", err)
		}
		if ev.GetFinal() != nil {
			return
		}
	}
}
