package httpapi

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/provider"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/retry"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Events of a call, as the engine sends them.

func text(attempt uint32, s string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Text: s}}}
}

func refusal(attempt uint32, s string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{Refusal: s}}}
}

func toolCall(attempt, index uint32, id, name, args string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{
		ToolCall: &llmrelayv1.ToolCallDelta{Index: index, Id: id, Name: name, ArgumentsDelta: args},
	}}}
}

// signed is a tool call's fragment with the call's signature.
func signed(ev *llmrelayv1.GenerateEvent, signature string) *llmrelayv1.GenerateEvent {
	ev.GetDelta().GetToolCall().Signature = signature
	return ev
}

func reasoning(attempt uint32, text, signature, format string) *llmrelayv1.GenerateEvent {
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Delta{Delta: &llmrelayv1.Delta{
		Reasoning: &llmrelayv1.ReasoningDelta{Text: text, Signature: signature, Format: format},
	}}}
}

func willRetry(attempt uint32, reason llmrelayv1.RetryReason, discard bool, next string) *llmrelayv1.GenerateEvent {
	w := &llmrelayv1.WillRetry{Reason: reason, Delay: durationpb.New(500 * time.Millisecond), NextAttempt: attempt + 1, DiscardPartial: discard}
	if next != "" {
		w.NextProvider, w.NextModel, w.Fallback = next, "echo", true
	}
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_WillRetry{WillRetry: w}}
}

func final(attempt uint32, m *llmrelayv1.Message, finish llmrelayv1.FinishReason) *llmrelayv1.GenerateEvent {
	m.Role = llmrelayv1.Role_ROLE_ASSISTANT
	return &llmrelayv1.GenerateEvent{Attempt: attempt, Event: &llmrelayv1.GenerateEvent_Final{Final: &llmrelayv1.Final{
		Message: m, FinishReason: finish, Attempts: attempt, Provider: "mock", Model: "echo",
		Usage: &llmrelayv1.Usage{InputTokens: 12, OutputTokens: 5, CachedInputTokens: 2, ReasoningTokens: 1},
	}}}
}

// stoppedAt names the stop sequence that ended ev's Final.
func stoppedAt(ev *llmrelayv1.GenerateEvent, seq string) *llmrelayv1.GenerateEvent {
	ev.GetFinal().StopSequence = seq
	return ev
}

// heartbeat stands for the engine's SendHeader then its heartbeat event.
var heartbeat = &llmrelayv1.GenerateEvent{Event: &llmrelayv1.GenerateEvent_Heartbeat{Heartbeat: &llmrelayv1.Heartbeat{}}}

var stop = llmrelayv1.FinishReason_FINISH_REASON_STOP

// Errors a call ends with.

func providerFailure(class provider.Class, status int, typ string, stopped retry.Stop, attempts int, hint time.Duration) error {
	return apierr.FromFailure(&retry.Failure{
		Err:   errors.New("upstream said no"),
		Class: retry.Classification{Class: class, Hint: hint, HasHint: hint > 0, Provider: &provider.Error{Status: status, Type: typ}},
		Stop:  stopped, Attempts: attempts, Provider: "mock",
	})
}

var (
	errOverloaded = providerFailure(provider.ClassOverloaded, 529, "overloaded_error", retry.StopAttempts, 3, 2*time.Second)
	errMidstream  = providerFailure(provider.ClassTransport, 0, "", retry.StopMidstream, 1, 0)
	errQuota      = providerFailure(provider.ClassQuotaExhausted, 429, "insufficient_quota", retry.StopNotRetryable, 1, 0)
)

// responseCase is a call's events, and how it ended, for both formats.
type responseCase struct {
	name   string
	stream bool
	// extension: the client opted in to restarts.
	extension bool
	events    []*llmrelayv1.GenerateEvent
	err       error
	// early is the usage the engine gives before each attempt's first
	// delta (engine.EarlyUsageSink): what its provider reported before it.
	early *llmrelayv1.Usage
}

var responseCases = []responseCase{
	{
		name: "text", stream: true,
		events: []*llmrelayv1.GenerateEvent{text(1, "Hello, "), text(1, "wor\"ld\"\n"), final(1, &llmrelayv1.Message{Content: "Hello, wor\"ld\"\n"}, stop)},
	},
	{
		// The answering attempt's provider reported the prompt's tokens
		// before its first delta (Anthropic's message_start): 7, of them 2
		// read from the cache and 1 written to it, and 1 output token.
		name: "early_usage", stream: true,
		early: &llmrelayv1.Usage{InputTokens: 7, CachedInputTokens: 2, CacheCreationInputTokens: 1, OutputTokens: 1},
		events: []*llmrelayv1.GenerateEvent{
			willRetry(1, llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED, false, ""),
			text(2, "Hi"), final(2, &llmrelayv1.Message{Content: "Hi"}, stop),
		},
	},
	{
		name: "invisible_retry", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			willRetry(1, llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED, false, ""),
			willRetry(2, llmrelayv1.RetryReason_RETRY_REASON_SERVER_ERROR, false, "backup"),
			text(3, "the quick"), final(3, &llmrelayv1.Message{Content: "the quick"}, stop),
		},
	},
	{
		name: "tool_calls", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			text(1, "Let me check."),
			toolCall(1, 0, "call_1", "weather", `{"city":`), toolCall(1, 0, "", "", `"Paris"}`),
			toolCall(1, 1, "call_2", "time", `{}`),
			final(1, &llmrelayv1.Message{Content: "Let me check.", ToolCalls: []*llmrelayv1.ToolCall{
				{Id: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`}, {Id: "call_2", Name: "time", Arguments: `{}`},
			}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS),
		},
	},
	{
		// Gemini signed its calls (thoughtSignature): the first's
		// signature came with the call, as Gemini sends it; the second's
		// in a later fragment. Its reasoning has a signature and no text.
		name: "signed_tool_calls", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			reasoning(1, "", "Q2lrQg==", provider.FormatGemini),
			signed(toolCall(1, 0, "call_1", "weather", `{"city":"Paris"}`), "EpwI+/a="),
			toolCall(1, 1, "call_2", "time", `{}`), signed(toolCall(1, 1, "", "", ""), "EpwJ/b+="),
			final(1, &llmrelayv1.Message{
				Reasoning: []*llmrelayv1.Reasoning{{Signature: "Q2lrQg==", Format: provider.FormatGemini}},
				ToolCalls: []*llmrelayv1.ToolCall{
					{Id: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`, Signature: "EpwI+/a="},
					{Id: "call_2", Name: "time", Arguments: `{}`, Signature: "EpwJ/b+="},
				}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS),
		},
	},
	{
		// Parallel calls whose fragments interleave (some OpenAI-compatible
		// servers): both start, then their arguments come in turns; the
		// first's signature comes with its last fragment.
		name: "interleaved_tool_calls", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			toolCall(1, 0, "call_1", "weather", ""), toolCall(1, 1, "call_2", "time", ""),
			toolCall(1, 0, "", "", `{"city":`), toolCall(1, 1, "", "", `{"tz":`),
			signed(toolCall(1, 0, "", "", `"Paris"}`), "EpwI+/a="), toolCall(1, 1, "", "", `"UTC"}`),
			final(1, &llmrelayv1.Message{ToolCalls: []*llmrelayv1.ToolCall{
				{Id: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`, Signature: "EpwI+/a="},
				{Id: "call_2", Name: "time", Arguments: `{"tz":"UTC"}`},
			}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS),
		},
	},
	{
		// Interleaved calls whose arguments are long unfinished: the
		// first's fragments end with a bracket before they are whole,
		// others start behind it, and its last fragment ends with a
		// space; the fourth's arguments can never be whole (a bracket too
		// many) and the fifth starts behind it; the fifth's are a string.
		name: "interleaved_unfinished_tool_calls", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			toolCall(1, 0, "call_1", "search", `{"q":[{"a":1}`),
			toolCall(1, 1, "call_2", "time", ""),
			toolCall(1, 0, "", "", `,{"b":[2]}`), toolCall(1, 1, "", "", `{"tz":"UTC"}`),
			toolCall(1, 2, "call_3", "weather", ""), toolCall(1, 2, "", "", `{"city":`),
			toolCall(1, 0, "", "", `]} `), toolCall(1, 2, "", "", `"Paris"}`),
			toolCall(1, 3, "call_4", "noop", `{}}`), toolCall(1, 4, "call_5", "echo", `"x"`), toolCall(1, 3, "", "", `{}`),
			final(1, &llmrelayv1.Message{ToolCalls: []*llmrelayv1.ToolCall{
				{Id: "call_1", Name: "search", Arguments: `{"q":[{"a":1},{"b":[2]}]} `},
				{Id: "call_2", Name: "time", Arguments: `{"tz":"UTC"}`},
				{Id: "call_3", Name: "weather", Arguments: `{"city":"Paris"}`},
				{Id: "call_4", Name: "noop", Arguments: `{}}{}`},
				{Id: "call_5", Name: "echo", Arguments: `"x"`},
			}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS),
		},
	},
	{
		// Calls held behind an open one, replayed when it closes: the
		// second opens, becomes whole (with its signature) while the
		// third's start waits again, and closes in the middle of the
		// replay, so that the third opens before the rest of the replay;
		// the second's signature and a fragment of it that came after its
		// block stopped wait for the third to close.
		name: "interleaved_tool_calls_replayed", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			toolCall(1, 0, "call_1", "weather", `{"city":`),
			toolCall(1, 1, "call_2", "time", ""), toolCall(1, 2, "call_3", "search", ""),
			signed(toolCall(1, 1, "", "", `{"tz":"UTC"}`), "EpwJ/b+="), toolCall(1, 2, "", "", `{"q":`),
			toolCall(1, 0, "", "", `"Paris"}`),
			toolCall(1, 1, "", "", ` `), toolCall(1, 2, "", "", `"x"}`),
			final(1, &llmrelayv1.Message{ToolCalls: []*llmrelayv1.ToolCall{
				{Id: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`},
				{Id: "call_2", Name: "time", Arguments: `{"tz":"UTC"} `, Signature: "EpwJ/b+="},
				{Id: "call_3", Name: "search", Arguments: `{"q":"x"}`},
			}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS),
		},
	},
	{
		// Text and reasoning that come while calls are held behind an
		// open one: the held calls go out first, each in its block, then
		// the text's or the reasoning's block.
		name: "interleaved_tool_calls_then_text", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			toolCall(1, 0, "call_1", "weather", `{"city":`), toolCall(1, 1, "call_2", "time", `{}`),
			text(1, "Checking."),
			toolCall(1, 2, "call_3", "search", `{"q":`), toolCall(1, 3, "call_4", "noop", ""), toolCall(1, 3, "", "", `{`),
			reasoning(1, "hmm", "", provider.FormatMock),
			final(1, &llmrelayv1.Message{
				Content:   "Checking.",
				Reasoning: []*llmrelayv1.Reasoning{{Text: "hmm", Format: provider.FormatMock}},
				ToolCalls: []*llmrelayv1.ToolCall{
					{Id: "call_1", Name: "weather", Arguments: `{"city":`},
					{Id: "call_2", Name: "time", Arguments: `{}`},
					{Id: "call_3", Name: "search", Arguments: `{"q":`},
					{Id: "call_4", Name: "noop", Arguments: `{`},
				}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS),
		},
	},
	{
		name: "reasoning", stream: true,
		events: []*llmrelayv1.GenerateEvent{
			reasoning(1, "Let me ", "", provider.FormatMock), reasoning(1, "think.", "", provider.FormatMock), reasoning(1, "", "c2ln", provider.FormatMock),
			text(1, "Hi"),
			final(1, &llmrelayv1.Message{Content: "Hi", Reasoning: []*llmrelayv1.Reasoning{{Text: "Let me think.", Signature: "c2ln", Format: provider.FormatMock}}}, stop),
		},
	},
	{
		// The reply ended at one of the request's stop sequences, which
		// the Final names: Anthropic's stop_reason stop_sequence with the
		// sequence; OpenAI's format has only stop.
		name: "stop_sequence", stream: true,
		events: []*llmrelayv1.GenerateEvent{text(1, "<answer>42"), stoppedAt(final(1, &llmrelayv1.Message{Content: "<answer>42"}, stop), "</answer>")},
	},
	{
		name: "refusal", stream: true,
		events: []*llmrelayv1.GenerateEvent{refusal(1, "I can't."), final(1, &llmrelayv1.Message{Refusal: "I can't."}, llmrelayv1.FinishReason_FINISH_REASON_REFUSAL)},
	},
	{
		// A heartbeat starts the reply at once: the usage the answering
		// attempt's provider reports later is message_delta's alone.
		name: "heartbeat", stream: true,
		early:  &llmrelayv1.Usage{InputTokens: 7, CachedInputTokens: 2},
		events: []*llmrelayv1.GenerateEvent{heartbeat, text(1, "hi"), heartbeat, final(1, &llmrelayv1.Message{Content: "hi"}, stop)},
	},
	{
		name: "failure_before_output", stream: true,
		events: []*llmrelayv1.GenerateEvent{willRetry(1, llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED, false, ""), willRetry(2, llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED, false, "")},
		err:    errOverloaded,
	},
	{
		name: "midstream_failure", stream: true,
		events: []*llmrelayv1.GenerateEvent{text(1, "the quick ")},
		err:    errMidstream,
	},
	{
		name: "midstream_restart", stream: true, extension: true,
		events: []*llmrelayv1.GenerateEvent{
			text(1, "the quick "), willRetry(1, llmrelayv1.RetryReason_RETRY_REASON_TRANSPORT, true, ""),
			willRetry(2, llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED, false, "backup"),
			text(3, "the quick brown fox"), final(3, &llmrelayv1.Message{Content: "the quick brown fox"}, stop),
		},
	},
	{
		name: "restart_without_opt_in", stream: true,
		events: []*llmrelayv1.GenerateEvent{text(1, "{\"a\":"), willRetry(1, llmrelayv1.RetryReason_RETRY_REASON_INVALID_OUTPUT, true, "")},
	},
	{
		name: "whole_text",
		events: []*llmrelayv1.GenerateEvent{
			willRetry(1, llmrelayv1.RetryReason_RETRY_REASON_OVERLOADED, false, ""),
			text(2, "Hello"), heartbeat, final(2, &llmrelayv1.Message{Content: "Hello"}, stop),
		},
	},
	{
		name:   "whole_stop_sequence",
		events: []*llmrelayv1.GenerateEvent{text(1, "Thought: look it up\n"), stoppedAt(final(1, &llmrelayv1.Message{Content: "Thought: look it up\n"}, stop), "\nObservation:")},
	},
	{
		name: "whole_tool_calls",
		events: []*llmrelayv1.GenerateEvent{final(1, &llmrelayv1.Message{ToolCalls: []*llmrelayv1.ToolCall{
			{Id: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`},
		}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS)},
	},
	{
		name: "whole_signed_tool_calls",
		events: []*llmrelayv1.GenerateEvent{final(1, &llmrelayv1.Message{
			Content: "Checking.",
			ToolCalls: []*llmrelayv1.ToolCall{
				{Id: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`, Signature: "EpwI+/a="},
				{Id: "call_2", Name: "time", Arguments: `{}`},
			}}, llmrelayv1.FinishReason_FINISH_REASON_TOOL_CALLS)},
	},
	{
		name: "whole_reasoning",
		events: []*llmrelayv1.GenerateEvent{final(1, &llmrelayv1.Message{Content: "Hi", Reasoning: []*llmrelayv1.Reasoning{
			{Text: "hmm", Signature: "EqQB", Format: provider.FormatAnthropic}, {Redacted: "opaque", Format: provider.FormatAnthropic},
		}}, stop)},
	},
	{
		name: "whole_parts",
		events: []*llmrelayv1.GenerateEvent{final(1, &llmrelayv1.Message{
			Content:   "Found it.",
			Reasoning: []*llmrelayv1.Reasoning{{Text: "search first", Signature: "EqQB", Format: provider.FormatAnthropic}},
			ToolCalls: []*llmrelayv1.ToolCall{{Id: "toolu_1", Name: "save", Arguments: `{"k":1}`}},
			ProviderTools: []*llmrelayv1.ProviderToolBlock{
				{Kind: "server_tool_use", Id: "srvtoolu_1", Name: "web_search", Input: `{"query":"q"}`, Format: provider.FormatAnthropic},
				{Kind: "web_search_tool_result", Id: "srvtoolu_1", Result: `[]`, Extra: `{"caller":{"type":"direct"}}`, Format: provider.FormatAnthropic},
			},
			Parts: []*llmrelayv1.Part{
				{Part: &llmrelayv1.Part_Reasoning{Reasoning: 0}}, {Part: &llmrelayv1.Part_ProviderTool{ProviderTool: 0}},
				{Part: &llmrelayv1.Part_ProviderTool{ProviderTool: 1}}, {Part: &llmrelayv1.Part_Text{Text: "Found it."}},
				{Part: &llmrelayv1.Part_ToolCall{ToolCall: 0}},
			},
		}, llmrelayv1.FinishReason_FINISH_REASON_PAUSED)},
	},
	{name: "whole_quota", err: errQuota},
	// The key's own budget (issue 28) is spent until its window resets: a
	// quota, which the SDKs must not retry.
	{name: "whole_budget", err: &apierr.Error{
		Kind: apierr.ResourceExhausted, Reason: apierr.ReasonBudgetExhausted, Message: "the key's day budget of $5 is spent",
		Metadata: map[string]string{"owner": "key", "window": "day"}, RetryAfter: 3 * time.Hour,
	}},
	{name: "whole_unauthenticated", err: &apierr.Error{Kind: apierr.Unauthenticated, Reason: engine.ReasonAPIKeyUnknown, Message: "unknown API key"}},
	{name: "whole_busy", err: &apierr.Error{Kind: apierr.Unavailable, Reason: engine.ReasonProviderBusy, Message: "provider \"mock\" is busy", RetryAfter: 1500 * time.Millisecond, CallAgain: true}},
}

// TestResponses drives a reply with each case's events, as the engine
// sends them, and compares what the client receives, status, headers and
// body, with the format's golden file: testdata/<format>/<case>.golden.
func TestResponses(t *testing.T) {
	for _, f := range []format{openAI{}, responses{}, anthropic{}} {
		for _, tc := range responseCases {
			t.Run(f.name()+"/"+tc.name, func(t *testing.T) {
				pt.GoldenText(t, f.name()+"/"+tc.name+".golden", drive(t, f, tc), *update)
			})
		}
	}
}

// drive runs a case's events through an exchange and renders the
// response.
func drive(t *testing.T, f format, tc responseCase) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	x := newExchange(rec, f, replyInfo{
		requestID: "0b7d6a8e-1f1c-4c55-9d7e-2a9e4f1c0d11", created: 1767225600, model: "smart",
		includeUsage: true, extension: tc.extension,
	}, tc.stream)
	// As the engine does: the headers of the attempt whose delta is the
	// call's first, set with it; before each attempt's first delta, the
	// usage its provider reported before it.
	provider, delta, attempt := "mock", false, uint32(0)
	var sendErr error
	for _, ev := range tc.events {
		if next := ev.GetWillRetry().GetNextProvider(); next != "" {
			provider = next
		}
		if ev.GetDelta() != nil && ev.GetAttempt() != attempt {
			attempt = ev.GetAttempt()
			x.EarlyUsage(tc.early)
		}
		if ev.GetDelta() != nil && !delta {
			delta = true
			x.SetHeader(engine.HeaderAttempts, strconv.Itoa(int(ev.GetAttempt())))
			x.SetHeader(engine.HeaderProvider, provider)
			x.SetHeader(engine.HeaderModel, "echo")
		}
		if ev.GetHeartbeat() != nil {
			if err := x.SendHeader(); err != nil {
				t.Fatal(err)
			}
		}
		if sendErr = x.Send(ev); sendErr != nil {
			break
		}
	}
	if tc.err != nil {
		x.fail(failureOf(tc.err, nil))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP %d\n", rec.Code)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range rec.Header() {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(rec.Header()[k], ", "))
	}
	if sendErr != nil {
		fmt.Fprintf(&b, "(the engine is told: %v)\n", sendErr)
	}
	b.WriteString("\n")
	b.Write(rec.Body.Bytes())
	return b.Bytes()
}
