package providertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Scenario is one provider behaviour the suite checks. Every harness must
// play every scenario, reproducing the canonical content below.
type Scenario string

// Scenarios.
const (
	// Text streams WantText in several deltas, finishes with
	// FinishStop and reports WantTextUsage.
	Text Scenario = "text"
	// ToolCalls streams WantToolText, then the tool calls WantToolCalls in
	// fragments, finishes with FinishToolCalls and reports WantToolUsage.
	ToolCalls Scenario = "tool_calls"
	// RateLimited answers HTTP 429 with a retry hint of WantRetryAfter.
	RateLimited Scenario = "rate_limited"
	// ServerError answers HTTP 500.
	ServerError Scenario = "server_error"
	// Overloaded answers the provider's overloaded status: 529 or 503.
	Overloaded Scenario = "overloaded"
	// BadRequest answers HTTP 400.
	BadRequest Scenario = "bad_request"
	// Unauthorized answers HTTP 401.
	Unauthorized Scenario = "unauthorized"
	// InStreamError streams PartialText, then the provider reports a server
	// error or overload inside the stream.
	InStreamError Scenario = "in_stream_error"
	// Drop streams PartialText, then the connection drops.
	Drop Scenario = "drop"
	// Malformed streams PartialText, then a complete event whose data does
	// not parse: a protocol error, not retried.
	Malformed Scenario = "malformed"
	// Cut streams PartialText, then the body ends in the middle of an
	// event: a transport error, retried.
	Cut Scenario = "cut"
	// MissingTerminator streams the whole reply and ends cleanly, but
	// without the provider's terminator.
	MissingTerminator Scenario = "missing_terminator"
	// Stall streams PartialText, then sends nothing until the client goes
	// away.
	Stall Scenario = "stall"
)

// Scenarios lists every scenario.
var Scenarios = []Scenario{Text, ToolCalls, RateLimited, ServerError, Overloaded, BadRequest,
	Unauthorized, InStreamError, Drop, Malformed, Cut, MissingTerminator, Stall}

// The canonical content every harness reproduces.
const (
	// WantText is the Text scenario's reply.
	WantText = "Hello from the llmrelay conformance suite."
	// PartialText is what the failing scenarios stream before they fail.
	PartialText = "Hello from "
	// WantToolText is the text the ToolCalls scenario streams before its
	// tool calls.
	WantToolText = "Let me check."
	// WantRetryAfter is the RateLimited scenario's retry hint.
	WantRetryAfter = 2 * time.Second
)

var (
	// WantTextUsage is the Text scenario's usage.
	WantTextUsage = provider.Usage{InputTokens: 12, OutputTokens: 9}
	// WantToolUsage is the ToolCalls scenario's usage.
	WantToolUsage = provider.Usage{InputTokens: 85, OutputTokens: 41}
	// WantToolCalls are the ToolCalls scenario's calls.
	WantToolCalls = []provider.ToolCall{
		{ID: "call_weather", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`},
		{ID: "call_time", Name: "get_time", Arguments: `{"timezone":"Europe/Paris"}`},
	}
)

// Setup is a provider ready to play one scenario on its next Stream call.
type Setup struct {
	// Provider plays the scenario.
	Provider provider.Provider
	// Request is the request to send.
	Request *provider.Request
	// Gone, when not nil, is closed once the upstream saw the client go
	// away from a stalled stream. In-process providers leave it nil.
	Gone <-chan struct{}
	// Upstream, when not nil, is the stand-in the provider sends its
	// requests to, which the suite reads to check what the adapter sent.
	// In-process providers leave it nil.
	Upstream *Upstream
}

// Harness prepares a provider to play scenario s. It registers its
// clean-up with t.
type Harness func(t *testing.T, s Scenario) Setup

// guard bounds every wait in the suite, only so that a broken adapter fails
// instead of hanging.
const guard = 10 * time.Second

// Run runs the conformance suite against the provider h prepares.
func Run(t *testing.T, h Harness) {
	t.Run("validates requests before the first attempt", func(t *testing.T) {
		su := h(t, Text)
		v, ok := su.Provider.(provider.RequestValidator)
		if !ok {
			t.Fatalf("%T does not implement provider.RequestValidator", su.Provider)
		}
		if err := v.ValidateRequest(su.Request); err != nil {
			t.Errorf("ValidateRequest(the suite's request) = %v, want nil", err)
		}
	})
	t.Run("says which reasoning formats it sends back", func(t *testing.T) {
		// The engine tells the client what an adapter left out
		// (provider.DroppedReasoning); an adapter that does not say would
		// drop reasoning silently.
		su := h(t, Text)
		r, ok := su.Provider.(provider.ReasoningTaker)
		if !ok {
			t.Fatalf("%T does not implement provider.ReasoningTaker", su.Provider)
		}
		formats := []string{provider.FormatAnthropic, provider.FormatGemini, provider.FormatReasoningContent, provider.FormatReasoning,
			provider.FormatOpenRouterDetails, provider.FormatMistralThinking, provider.FormatMock}
		if !slices.ContainsFunc(formats, r.TakesReasoning) {
			t.Errorf("%T takes none of the formats %v", su.Provider, formats)
		}
		if r.TakesReasoning("nonesuch") {
			t.Errorf("%T takes the unknown reasoning format %q", su.Provider, "nonesuch")
		}
	})
	t.Run("streams the request it prepared", func(t *testing.T) {
		su := h(t, Text)
		p, ok := su.Provider.(provider.RequestPreparer)
		if !ok {
			t.Skipf("%T builds its request only as it streams", su.Provider)
		}
		wire, err := p.PrepareRequest(su.Request)
		if err != nil {
			t.Fatalf("PrepareRequest(the suite's request) = %v, want nil", err)
		}
		req := *su.Request
		req.Prepared = wire
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if r := Collect(ctx, su.Provider, &req); r.Err != nil || r.Text != WantText {
			t.Errorf("the prepared request streamed %q (%v), want %q", r.Text, r.Err, WantText)
		}
	})
	t.Run("reports activity", func(t *testing.T) {
		su := h(t, Text)
		var act provider.Activity
		req := *su.Request
		req.Activity = &act
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if r := Collect(ctx, su.Provider, &req); r.Err != nil {
			t.Fatalf("stream failed: %v", r.Err)
		}
		if act.Last() == 0 {
			t.Error("the stream streamed a reply, but Request.Activity saw no sign of life: the attempt's stall timer would not see the provider working")
		}
	})
	t.Run("sends a user message's text and images in order", func(t *testing.T) {
		u, r := sendImages(t, h, false)
		if r.Err != nil {
			t.Fatalf("a request with inline images failed: %v", r.Err)
		}
		sentInOrder(t, u, imagePieces(false))
	})
	t.Run("sends an image URL in order, or refuses it before the first attempt", func(t *testing.T) {
		u, r := sendImages(t, h, true)
		var fe *provider.FieldError
		if errors.As(r.Err, &fe) {
			// A provider that cannot fetch images (Gemini) refuses the
			// request, naming the image, rather than drop the image.
			if fe.Field != "messages[0].parts[3].image.url" {
				t.Errorf("refused with %v, want a field error on messages[0].parts[3].image.url", fe)
			}
			if n := len(u.Requests()); n != 0 {
				t.Errorf("%d requests reached the upstream, want none: a refused image is refused before the first attempt", n)
			}
			return
		}
		if r.Err != nil {
			t.Fatalf("a request with an image URL failed: %v", r.Err)
		}
		sentInOrder(t, u, imagePieces(true))
	})
	t.Run("text", func(t *testing.T) {
		r := collect(t, h, Text)
		if r.Err != nil {
			t.Fatalf("stream failed: %v", r.Err)
		}
		if r.Text != WantText {
			t.Errorf("text = %q, want %q", r.Text, WantText)
		}
		if n := count(r, provider.EventText); n < 2 {
			t.Errorf("the text came in %d deltas, want it streamed in several", n)
		}
		if r.Finish != provider.FinishStop {
			t.Errorf("finish reason = %d, want FinishStop", r.Finish)
		}
		if !r.HasUsage || !sameTokens(r.Usage, WantTextUsage) {
			t.Errorf("usage = %+v (reported: %v), want %+v", r.Usage, r.HasUsage, WantTextUsage)
		}
		if len(r.ToolCalls) != 0 {
			t.Errorf("tool calls = %+v, want none", r.ToolCalls)
		}
	})
	t.Run("tool calls", func(t *testing.T) {
		r := collect(t, h, ToolCalls)
		if r.Err != nil {
			t.Fatalf("stream failed: %v", r.Err)
		}
		if r.Text != WantToolText {
			t.Errorf("text = %q, want %q", r.Text, WantToolText)
		}
		if len(r.ToolCalls) != len(WantToolCalls) {
			t.Fatalf("tool calls = %+v, want %+v", r.ToolCalls, WantToolCalls)
		}
		for i, want := range WantToolCalls {
			got := r.ToolCalls[i]
			if got.ID != want.ID || got.Name != want.Name || !SameJSON(got.Arguments, want.Arguments) {
				t.Errorf("tool call %d = %+v, want %+v", i, got, want)
			}
		}
		if r.Finish != provider.FinishToolCalls {
			t.Errorf("finish reason = %d, want FinishToolCalls", r.Finish)
		}
		if !r.HasUsage || !sameTokens(r.Usage, WantToolUsage) {
			t.Errorf("usage = %+v (reported: %v), want %+v", r.Usage, r.HasUsage, WantToolUsage)
		}
	})

	statusCases := []struct {
		s      Scenario
		status []int
		class  provider.Class
	}{
		{RateLimited, []int{429}, provider.ClassRateLimited},
		{ServerError, []int{500}, provider.ClassServerError},
		{Overloaded, []int{529, 503}, provider.ClassOverloaded},
		{BadRequest, []int{400}, provider.ClassRejected},
		{Unauthorized, []int{401}, provider.ClassAuth},
	}
	for _, c := range statusCases {
		t.Run(string(c.s), func(t *testing.T) {
			r := collect(t, h, c.s)
			if len(r.Events) != 0 {
				t.Errorf("got %d events before the error, want none", len(r.Events))
			}
			pe := wantError(t, r.Err, provider.KindHTTP)
			if !slices.Contains(c.status, pe.Status) {
				t.Errorf("status = %d, want one of %v", pe.Status, c.status)
			}
			if pe.Class != c.class {
				t.Errorf("class = %v, want %v: the adapter's error table classifies its errors", pe.Class, c.class)
			}
			if pe.Message == "" {
				t.Error("the error has no message")
			}
			if c.s == RateLimited && (!pe.HasRetryAfter || pe.RetryAfter != WantRetryAfter) {
				t.Errorf("retry hint = %v (set: %v), want %v", pe.RetryAfter, pe.HasRetryAfter, WantRetryAfter)
			}
		})
	}

	midCases := []struct {
		s    Scenario
		kind provider.ErrorKind
	}{
		{InStreamError, provider.KindInStream},
		{Drop, provider.KindTransport},
		{Malformed, provider.KindProtocol},
		{Cut, provider.KindTransport},
	}
	for _, c := range midCases {
		t.Run(string(c.s), func(t *testing.T) {
			r := collect(t, h, c.s)
			if r.Text != PartialText {
				t.Errorf("text before the failure = %q, want %q", r.Text, PartialText)
			}
			pe := wantError(t, r.Err, c.kind)
			if c.kind == provider.KindInStream && (pe.Status < 500 || pe.Type == "") {
				t.Errorf("in-stream error has status %d and type %q, want a 5xx status and the provider's type", pe.Status, pe.Type)
			}
			if c.kind == provider.KindInStream && pe.Class != provider.ClassServerError && pe.Class != provider.ClassOverloaded {
				t.Errorf("in-stream error has class %v, want server_error or overloaded from the adapter's error table", pe.Class)
			}
			if c.kind == provider.KindTransport && pe.Class != provider.ClassTransport {
				t.Errorf("class = %v, want transport", pe.Class)
			}
			if c.kind == provider.KindProtocol && (pe.FailureClass() != provider.ClassProtocol || pe.FailureClass().Transient()) {
				t.Errorf("class = %v, want protocol_error, which is not retried", pe.FailureClass())
			}
		})
	}

	t.Run(string(MissingTerminator), func(t *testing.T) {
		r := collect(t, h, MissingTerminator)
		if !strings.HasPrefix(WantText, r.Text) || r.Text == "" {
			t.Errorf("text = %q, want a prefix of %q", r.Text, WantText)
		}
		if pe := wantError(t, r.Err, provider.KindTransport); pe.Class != provider.ClassTransport {
			t.Errorf("class = %v, want transport", pe.Class)
		}
	})

	t.Run("stall then cancel", func(t *testing.T) {
		su := h(t, Stall)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := su.Provider.Stream(ctx, su.Request)
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		defer s.Close()
		readPartial(t, s)
		end := recvEnd(s)
		select {
		case res := <-end:
			t.Fatalf("a stalled stream ended with %+v, %v; want it to wait", res.ev, res.err)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		select {
		case res := <-end:
			if !errors.Is(res.err, context.Canceled) {
				t.Errorf("Recv after cancel = %+v, %v; want context.Canceled", res.ev, res.err)
			}
		case <-time.After(guard):
			t.Fatal("Recv did not return after the context was cancelled")
		}
		waitGone(t, su.Gone)
	})

	t.Run("close mid-stream", func(t *testing.T) {
		su := h(t, Stall)
		s, err := su.Provider.Stream(context.Background(), su.Request)
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		readPartial(t, s)
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		waitGone(t, su.Gone)
		if ev, err := s.Recv(); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("Recv after Close = %+v, %v; want an error", ev, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})

	t.Run("cancelled before the call", func(t *testing.T) {
		su := h(t, Text)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := Collect(ctx, su.Provider, su.Request)
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", r.Err)
		}
	})
}

// sendImages sends ImageRequest to the provider h prepares to play Text,
// and returns its upstream and the result. It skips the test for a
// provider that runs in-process, whose requests the suite cannot read.
func sendImages(t *testing.T, h Harness, withURL bool) (*Upstream, Result) {
	t.Helper()
	su := h(t, Text)
	if su.Upstream == nil {
		t.Skipf("%T runs in-process: there is no request to read", su.Provider)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	return su.Upstream, Collect(ctx, su.Provider, ImageRequest(su.Request.Model, withURL))
}

// imagePieces are ImageRequest's text and images as any adapter's JSON
// body holds them, in order: each text a JSON string of its own, each
// image its URL or its bytes in base64.
func imagePieces(withURL bool) []string {
	second := "/9j/" // "\xff\xd8\xff"
	if withURL {
		second = ImageURL
	}
	return []string{`"Compare "`, base64.StdEncoding.EncodeToString(ImagePNG), `" with "`, second, `"."`}
}

// sentInOrder checks that the one request u received holds each of pieces
// once, in their order: the adapter sent the message's text and images as
// blocks of their own, none dropped, none moved, none repeated. How each
// block is written is each adapter's wire format, which its own tests
// check to the byte.
func sentInOrder(t *testing.T, u *Upstream, pieces []string) {
	t.Helper()
	reqs := u.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the upstream received %d requests, want 1", len(reqs))
	}
	body := string(reqs[0].Body)
	at := 0
	for k, p := range pieces {
		if n := strings.Count(body, p); n != 1 {
			t.Fatalf("the request holds %s %d times, want once:\n%s", p, n, body)
		}
		i := strings.Index(body, p)
		if i < at {
			t.Fatalf("the request holds %s before %s, want the order %s:\n%s", p, pieces[k-1], strings.Join(pieces, " "), body)
		}
		at = i + len(p)
	}
}

type recvResult struct {
	ev  provider.Event
	err error
}

// readPartial reads s until it streamed PartialText.
func readPartial(t *testing.T, s provider.Stream) {
	t.Helper()
	var text string
	for text != PartialText {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("Recv after %q: %v", text, err)
		}
		text += ev.Text
		if !strings.HasPrefix(PartialText, text) {
			t.Fatalf("text = %q, want %q first", text, PartialText)
		}
	}
}

// recvEnd reads s in the background past events that carry no text
// (usage may follow the text of one provider chunk) and returns where the
// first text event or error will arrive.
func recvEnd(s provider.Stream) <-chan recvResult {
	out := make(chan recvResult, 1)
	go func() {
		for {
			ev, err := s.Recv()
			if err != nil || ev.Kind == provider.EventText || ev.Kind == provider.EventToolCall {
				out <- recvResult{ev, err}
				return
			}
		}
	}()
	return out
}

func waitGone(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	if gone == nil {
		return
	}
	select {
	case <-gone:
	case <-time.After(guard):
		t.Fatal("the upstream never saw the client go away: the connection was not closed")
	}
}

func collect(t *testing.T, h Harness, s Scenario) Result {
	t.Helper()
	su := h(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	r := Collect(ctx, su.Provider, su.Request)
	for _, v := range r.Violations {
		t.Errorf("stream contract: %s", v)
	}
	return r
}

func wantError(t *testing.T, err error, kind provider.ErrorKind) *provider.Error {
	t.Helper()
	pe := ProviderError(err)
	if pe == nil {
		t.Fatalf("error = %v, want a *provider.Error of kind %d", err, kind)
	}
	if pe.Kind != kind {
		t.Fatalf("error kind = %d (%v), want %d", pe.Kind, pe, kind)
	}
	return pe
}

// sameTokens compares the input and output counts, which every adapter
// reports; the other counts are each adapter's own (reasoning, cache) and
// its tests check them.
func sameTokens(a, b provider.Usage) bool {
	return a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens
}

func count(r Result, k provider.EventKind) int {
	n := 0
	for _, ev := range r.Events {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// SameJSON reports whether a and b are the same JSON value, whatever their
// key order and spacing.
func SameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
