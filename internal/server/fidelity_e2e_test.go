package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/anthropic/anthropictest"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// summary is what a client makes of a call: the attempts the deltas came
// from, the will_retry reasons, the reasoning streamed, and the final.
type summary struct {
	attempts  map[uint32]bool
	retries   []llmrelayv1.RetryReason
	causes    []string
	reasoning string
	final     *llmrelayv1.Final
}

func summarize(events []*llmrelayv1.GenerateEvent) summary {
	s := summary{attempts: map[uint32]bool{}}
	for _, ev := range events {
		switch {
		case ev.GetDelta() != nil:
			s.attempts[ev.GetAttempt()] = true
			s.reasoning += ev.GetDelta().GetReasoning().GetText()
		case ev.GetWillRetry() != nil:
			s.retries = append(s.retries, ev.GetWillRetry().GetReason())
			s.causes = append(s.causes, reasonOf(status.FromProto(ev.GetWillRetry().GetCause())))
		case ev.GetFinal() != nil:
			s.final = ev.GetFinal()
		}
	}
	return s
}

func reasonOf(st *status.Status) string {
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei.GetReason()
		}
	}
	return ""
}

// fieldOf is the field of a status's first BadRequest violation, or "".
func fieldOf(st *status.Status) string {
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// TestActivityKeepsAWorkingProviderAlive: an upstream that streams nothing
// but keep-alive comments, or reasoning, every 50ms for 3s is visibly
// working: with stream_idle_timeout 1s, the call succeeds on its first
// attempt.
func TestActivityKeepsAWorkingProviderAlive(t *testing.T) {
	for _, busy := range []struct {
		name string
		kind openaitest.Busy
	}{{"keep-alive comments", openaitest.KeepAlive}, {"reasoning deltas", openaitest.Thinking}} {
		t.Run(busy.name, func(t *testing.T) {
			t.Parallel()
			up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{
				{Busy: busy.kind, BusyFor: 3 * time.Second, BusyEvery: 50 * time.Millisecond},
			}})
			in := relayTo(t, up)
			req := upRequest(3)
			// Busy three times as long as the idle timeout, a sign of
			// life twenty times within it: a loaded machine that runs
			// the relay's read late still sees one in time.
			req.StreamIdleTimeout = durationpb.New(time.Second)
			events, err := servertest.Collect(t.Context(), in.Client, req)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			s := summarize(events)
			if len(s.retries) != 0 || s.final.GetAttempts() != 1 || up.Requests() != 1 {
				t.Fatalf("retries %v, final after %d attempts, %d upstream requests; want one attempt", s.retries, s.final.GetAttempts(), up.Requests())
			}
			if s.final.GetMessage().GetContent() != openaitest.Text(3) {
				t.Errorf("final %q, want %q", s.final.GetMessage().GetContent(), openaitest.Text(3))
			}
			if busy.kind == openaitest.Thinking && (s.reasoning == "" || s.reasoning != s.final.GetMessage().GetReasoning()[0].GetText()) {
				t.Errorf("streamed reasoning %q, final %v; want the thinking in both", s.reasoning, s.final.GetMessage().GetReasoning())
			}
		})
	}
}

// TestFirstEventTimeout: an upstream silent for 3s before its first byte
// (headers included) is fine with the default first_event_timeout (120s);
// with a first_event_timeout an upstream that stays silent stalls the
// attempt (STALLED) and the next one succeeds.
func TestFirstEventTimeout(t *testing.T) {
	silent := openaitest.Fault{FirstByteDelay: 3 * time.Second}
	// never holds the first byte back until the attempt gives up: it
	// stalls under any first_event_timeout, however late its timer fires.
	never := openaitest.Fault{FirstByteDelay: time.Hour}
	t.Run("the default waits", func(t *testing.T) {
		t.Parallel()
		up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{silent}})
		in := relayTo(t, up)
		events, err := servertest.Collect(t.Context(), in.Client, upRequest(3))
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if s := summarize(events); len(s.retries) != 0 || s.final.GetAttempts() != 1 {
			t.Errorf("retries %v, attempts %d; want success on attempt 1", s.retries, s.final.GetAttempts())
		}
	})
	t.Run("first_event_timeout 5s", func(t *testing.T) {
		t.Parallel()
		up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{never}})
		in := relayTo(t, up)
		req := upRequest(3)
		// The second attempt must show its first event within it: wide,
		// for a loaded machine (with 1s, a second attempt slow to start
		// stalled too).
		req.FirstEventTimeout = durationpb.New(5 * time.Second)
		events, err := servertest.Collect(t.Context(), in.Client, req)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		s := summarize(events)
		if len(s.retries) != 1 || s.retries[0] != llmrelayv1.RetryReason_RETRY_REASON_STALLED || s.causes[0] != "PROVIDER_STALLED" {
			t.Errorf("will_retry %v (causes %v), want one STALLED (PROVIDER_STALLED)", s.retries, s.causes)
		}
		if s.final.GetAttempts() != 2 || s.attempts[1] {
			t.Errorf("final after %d attempts, deltas from %v; want attempt 2 only", s.final.GetAttempts(), s.attempts)
		}
	})
	t.Run("a provider's own default", func(t *testing.T) {
		t.Parallel()
		up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{never, never}})
		cfg := config.Default()
		cfg.Providers = []provider.Config{{Name: "up", Kind: "openai", BaseURL: up.URL(), Models: []string{"fake-model"}, FirstEventTimeout: time.Second}}
		in := servertest.Start(t, cfg)
		_, err := servertest.Collect(t.Context(), in.Client, upRequest(2))
		if st := status.Convert(err); st.Code() != codes.Unavailable || reasonOf(st) != "RETRIES_EXHAUSTED" {
			t.Errorf("error %v, want UNAVAILABLE RETRIES_EXHAUSTED after two stalled attempts", err)
		}
	})
}

// TestProviderOptionsReachTheUpstream: provider_options are merged into the
// OpenAI-compatible body; a key llmrelay sets itself is refused with
// INVALID_ARGUMENT naming it, before any upstream request.
func TestProviderOptionsReachTheUpstream(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	up := openaitest.Start(t, openaitest.Options{Chunks: 2, FaultFor: func(_ int, body []byte) openaitest.Fault {
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		return openaitest.Fault{}
	}})
	in := relayTo(t, up)
	req := upRequest(1)
	opts, err := structpb.NewStruct(map[string]any{"reasoning_effort": "high", "seed": 7})
	if err != nil {
		t.Fatal(err)
	}
	req.ProviderOptions = opts
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	mu.Lock()
	if len(bodies) != 1 || bodies[0]["reasoning_effort"] != "high" || bodies[0]["seed"] != 7.0 || bodies[0]["model"] != "fake-model" {
		t.Errorf("upstream bodies %v, want reasoning_effort high and seed 7", bodies)
	}
	mu.Unlock()

	req.ProviderOptions, _ = structpb.NewStruct(map[string]any{"model": "x"})
	_, err = servertest.Collect(t.Context(), in.Client, req)
	st := status.Convert(err)
	if field := fieldOf(st); st.Code() != codes.InvalidArgument || reasonOf(st) != "INVALID_PROVIDER_OPTIONS" || field != "provider_options.model" {
		t.Errorf("error %v (field %q), want INVALID_ARGUMENT INVALID_PROVIDER_OPTIONS on provider_options.model", err, field)
	}
	if up.Requests() != 1 {
		t.Errorf("%d upstream requests, want the refused call to make none", up.Requests())
	}
}

// TestBillingHeadersAreTheOperators: with a provider key that belongs to
// several organizations, a request's extra_headers could pick which one
// is billed. OpenAI-Organization, OpenAI-Project and X-Goog-User-Project
// (in any case) are refused as credentials are, INVALID_ARGUMENT
// INVALID_PROVIDER_OPTIONS naming the header, before any upstream request,
// even where the operator configured none of them.
func TestBillingHeadersAreTheOperators(t *testing.T) {
	up := openaitest.Start(t, openaitest.Options{Chunks: 2})
	in := relayTo(t, up)
	for _, name := range []string{"OpenAI-Organization", "openai-project", "X-Goog-User-Project"} {
		t.Run(name, func(t *testing.T) {
			refusesExtraHeader(t, in, name)
		})
	}
	if up.Requests() != 0 {
		t.Errorf("%d upstream requests, want the refused calls to make none", up.Requests())
	}
}

// refusesExtraHeader asserts that a Generate whose extra_headers set the
// header name (beside X-Title, which may be set) is refused
// INVALID_ARGUMENT INVALID_PROVIDER_OPTIONS on that header.
func refusesExtraHeader(t *testing.T, in *servertest.Instance, name string) {
	t.Helper()
	req := upRequest(1)
	opts, err := structpb.NewStruct(map[string]any{"extra_headers": map[string]any{name: "someone-elses", "X-Title": "app"}})
	if err != nil {
		t.Fatal(err)
	}
	req.ProviderOptions = opts
	_, err = servertest.Collect(t.Context(), in.Client, req)
	st := status.Convert(err)
	if field, want := fieldOf(st), "provider_options.extra_headers."+name; st.Code() != codes.InvalidArgument || reasonOf(st) != "INVALID_PROVIDER_OPTIONS" || field != want {
		t.Errorf("gRPC: error %v (field %q), want INVALID_ARGUMENT INVALID_PROVIDER_OPTIONS on %s", err, field, want)
	}
}

// TestCredentialHeadersAreTheOperators: a request's extra_headers cannot
// carry a credential of its own to the provider, nor to a gateway in
// front of it (Azure API Management's Ocp-Apim-Subscription-Key, a
// LiteLLM or Portkey key, ...), where the operator's key decides who
// calls and who pays. Through gRPC and the HTTP doors, the call is
// refused naming the header (INVALID_ARGUMENT INVALID_PROVIDER_OPTIONS;
// the door's 400 with its param), before any upstream request, even
// where the provider's configuration sets none of them.
func TestCredentialHeadersAreTheOperators(t *testing.T) {
	up := openaitest.Start(t, openaitest.Options{Chunks: 2})
	in := relayTo(t, up)
	base := in.HTTP(t)
	for _, name := range []string{"Ocp-Apim-Subscription-Key", "x-litellm-api-key", "X-Portkey-Api-Key", "cf-aig-authorization", "X-Api-Key", "x-goog-api-key"} {
		t.Run(name, func(t *testing.T) {
			refusesExtraHeader(t, in, name)

			body := `{"model":"up/fake-model","messages":[{"role":"user","content":"go"}],` +
				`"llmrelay":{"provider_options":{"extra_headers":{"` + name + `":"someone-elses","X-Title":"app"}}}}`
			resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error struct {
					Param string `json:"param"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if want := "llmrelay.provider_options.extra_headers." + name; resp.StatusCode != http.StatusBadRequest || e.Error.Param != want {
				t.Errorf("/v1/chat/completions: %d, param %q, want 400 naming %s", resp.StatusCode, e.Error.Param, want)
			}
		})
	}
	if up.Requests() != 0 {
		t.Errorf("%d upstream requests, want the refused calls to make none", up.Requests())
	}
}

// TestProtocolErrorsAndCutStreams: a line that is not server-sent events
// fails the call at once (UNKNOWN, PROVIDER_PROTOCOL_ERROR, one upstream
// request); a stream cut in the middle of an event is retried (TRANSPORT).
func TestProtocolErrorsAndCutStreams(t *testing.T) {
	up := openaitest.Start(t, openaitest.Options{Chunks: 3, Faults: []openaitest.Fault{
		{Kind: openaitest.Malformed, After: 1},
		{Kind: openaitest.Cut, After: 1},
	}})
	in := relayTo(t, up)
	_, err := servertest.Collect(t.Context(), in.Client, upRequest(3))
	if st := status.Convert(err); st.Code() != codes.Unknown || reasonOf(st) != "PROVIDER_PROTOCOL_ERROR" || up.Requests() != 1 {
		t.Fatalf("error %v after %d upstream requests, want UNKNOWN PROVIDER_PROTOCOL_ERROR after 1", err, up.Requests())
	}
	events, err := servertest.Collect(t.Context(), in.Client, upRequest(3))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if s := summarize(events); len(s.retries) != 1 || s.retries[0] != llmrelayv1.RetryReason_RETRY_REASON_TRANSPORT || s.final.GetMessage().GetContent() != openaitest.Text(3) {
		t.Errorf("will_retry %v, final %q; want one TRANSPORT retry and the whole text", s.retries, s.final.GetMessage().GetContent())
	}
}

// TestThinkingRoundTripThroughTheService plays a recorded two-turn tool
// conversation with extended thinking through the whole service: the
// client sends turn 1's final.message back as it is, and the upstream
// receives the signed reasoning where its API wants it, byte for byte:
// Anthropic's thinking block (the assistant turn equal to the one the real
// API accepted) and Gemini's function-call thoughtSignature.
func TestThinkingRoundTripThroughTheService(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		u := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
			return recordedReply(t, "anthropic", []string{"thinking_tool_use_turn1.sse", "thinking_tool_use_turn2.sse"}[min(n, 1)])
		})
		t.Setenv("LLMRELAY_TEST_ANTHROPIC_KEY", "sk-ant-test")
		cfg := config.Default()
		cfg.Providers = []provider.Config{{Name: "claude", Kind: "anthropic", BaseURL: u.URL, APIKeyEnv: "LLMRELAY_TEST_ANTHROPIC_KEY"}}
		in := servertest.Start(t, cfg)
		turn1 := twoTurns(t, in, "claude/claude-haiku-4-5-20251001", "Use the fixed_version tool. Then tell me the version and make one short joke about it. Think about it first.",
			"0.32a0", map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024.0, "display": "summarized"}})
		if r := turn1.GetReasoning(); len(r) != 1 || r[0].GetFormat() != "anthropic" || len(r[0].GetSignature()) != 524 {
			t.Fatalf("turn 1 reasoning %v, want the signed thinking block", r)
		}
		reqs := u.Requests()
		b, err := os.ReadFile("../provider/anthropic/testdata/recorded/thinking_tool_use_turn2.request.json")
		if err != nil {
			t.Fatal(err)
		}
		sent, recorded := anthropicTurns(t, reqs[len(reqs)-1].Body), anthropicTurns(t, b)
		if len(sent) != 3 || !reflect.DeepEqual(sent[1], recorded[1]) {
			t.Errorf("the assistant turn sent back:\n %v\nthe one the API accepted:\n %v", sent, recorded)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		u := pt.NewUpstream(t, func(n int, _ *http.Request) pt.Reply {
			return recordedReply(t, "gemini", []string{"gemini3flash_function_call_signature_turn1.sse", "gemini3pro_function_call_signature_turn2.sse"}[min(n, 1)])
		})
		t.Setenv("LLMRELAY_TEST_GEMINI_KEY", "AIza-test")
		cfg := config.Default()
		cfg.Providers = []provider.Config{{Name: "gemini", Kind: "gemini", BaseURL: u.URL, APIKeyEnv: "LLMRELAY_TEST_GEMINI_KEY"}}
		in := servertest.Start(t, cfg)
		turn1 := twoTurns(t, in, "gemini/gemini-3-flash-preview", "What is 5 times 3?", "15", nil)
		calls := turn1.GetToolCalls()
		if len(calls) != 1 || calls[0].GetSignature() == "" {
			t.Fatalf("turn 1 tool calls %v, want one with its signature", calls)
		}
		recorded, err := os.ReadFile("../provider/gemini/testdata/recorded/gemini3flash_function_call_signature_turn2.request.json")
		if err != nil {
			t.Fatal(err)
		}
		sig := `"thoughtSignature":"` + calls[0].GetSignature() + `"`
		reqs := u.Requests()
		if !strings.Contains(string(recorded), sig) || !strings.Contains(string(reqs[len(reqs)-1].Body), sig) {
			t.Error("the function call's thoughtSignature did not go back byte for byte as the recorded turn 2 sent it")
		}
	})
}

// anthropicTurns returns the content blocks of each turn of a Messages API
// request body.
func anthropicTurns(t *testing.T, body []byte) [][]map[string]any {
	t.Helper()
	turns, err := anthropictest.Turns(body)
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

// recordedReply serves an adapter's recorded stream.
func recordedReply(t *testing.T, adapter, file string) pt.Reply {
	b, err := os.ReadFile("../provider/" + adapter + "/testdata/recorded/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return pt.Reply{Body: b}
}

// twoTurns runs a tool-calling turn, then sends its final message back
// with the tool's result, and returns turn 1's message.
func twoTurns(t *testing.T, in *servertest.Instance, model, question, result string, opts map[string]any) *llmrelayv1.Message {
	t.Helper()
	req := &llmrelayv1.GenerateRequest{
		Model:    model,
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: question}},
		Retry:    &llmrelayv1.RetryPolicy{MaxAttempts: 1},
	}
	if opts != nil {
		s, err := structpb.NewStruct(opts)
		if err != nil {
			t.Fatal(err)
		}
		req.ProviderOptions = s
	}
	events, err := servertest.Collect(t.Context(), in.Client, req)
	if err != nil {
		t.Fatalf("turn 1: %v", err)
	}
	turn1 := summarize(events).final.GetMessage()
	if len(turn1.GetToolCalls()) == 0 {
		t.Fatalf("turn 1 %v made no tool call", turn1)
	}
	req.Messages = append(req.Messages, turn1, &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_TOOL, ToolCallId: turn1.GetToolCalls()[0].GetId(), Content: result})
	if _, err := servertest.Collect(t.Context(), in.Client, req); err != nil {
		t.Fatalf("turn 2: %v", err)
	}
	return turn1
}
