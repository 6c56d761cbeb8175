package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server"
)

// The SDKs' request timeout (X-Stainless-Timeout) is the call's deadline.

// watchKind is a provider kind that tells the test the deadline each
// attempt's context carries, and, for the model "hang", waits for the
// attempt's end and tells the test why it ended; any other model answers
// at once.
const watchKind = "test-doors-watch"

// watched is what a watch provider's attempt saw.
type watched struct {
	deadline time.Time
	hasOne   bool
	// ended is closed when a "hang" attempt's context ended; cause says
	// why.
	ended chan struct{}
	cause error
}

// watchAttempts receives every attempt of a watch provider, in order.
var watchAttempts = make(chan *watched, 16)

type watchProvider struct{}

func (watchProvider) Stream(ctx context.Context, req *provider.Request) (provider.Stream, error) {
	w := &watched{ended: make(chan struct{})}
	w.deadline, w.hasOne = ctx.Deadline()
	watchAttempts <- w
	if req.Model != "hang" {
		close(w.ended)
		return &quickStream{}, nil
	}
	return &hangStream{ctx: ctx, w: w}, nil
}

// hangStream sends nothing until its attempt ends.
type hangStream struct {
	ctx context.Context
	w   *watched
}

func (s *hangStream) Recv() (provider.Event, error) {
	<-s.ctx.Done()
	s.w.cause = context.Cause(s.ctx)
	close(s.w.ended)
	return provider.Event{}, s.ctx.Err()
}

func (s *hangStream) Close() error { return nil }

// quickStream answers "ok".
type quickStream struct{ n int }

func (s *quickStream) Recv() (provider.Event, error) {
	s.n++
	switch s.n {
	case 1:
		return provider.Event{Kind: provider.EventText, Text: "ok"}, nil
	case 2:
		return provider.Event{Kind: provider.EventFinish, FinishReason: provider.FinishStop}, nil
	}
	return provider.Event{}, io.EOF
}

func (s *quickStream) Close() error { return nil }

func init() {
	provider.Register(watchKind, func(provider.Config) (provider.Provider, error) { return watchProvider{}, nil })
}

// nextAttempt returns the next attempt a watch provider saw.
func nextAttempt(t *testing.T) *watched {
	t.Helper()
	select {
	case w := <-watchAttempts:
		return w
	case <-ctxOf(t).Done():
		t.Fatal("no attempt reached the provider")
		return nil
	}
}

// watchDoors starts the doors with a watch provider, "watch", and the
// default deadlines (120 s when the client sets none, at most 600 s).
func watchDoors(t *testing.T, lines finishLines) string {
	t.Helper()
	base, _ := doors(t, func(cfg *config.Config) {
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "watch", Kind: watchKind, Models: []string{"hang", "quick"}})
		cfg.Deadlines.Default, cfg.Deadlines.Max = 120*time.Second, 600*time.Second
	}, server.WithLogger(slog.New(lines)))
	return base
}

// TestSDKTimeoutEndsTheCall: an SDK's request timeout ends the call at
// llmrelay, and with it the provider's stream, even when llmrelay cannot
// see the SDK give up: between them sits a proxy that keeps the request
// to llmrelay open after its client went (here, a middleware that drops
// the SDK's cancellation). Before, the call ran on to the server's
// default deadline, two minutes, with the provider generating and billing
// for a client that had gone, and called again. A reply that is not
// streamed has the timeout as its deadline; a streamed one, whose stream
// the SDKs read for as long as it lasts once it started, has
// deadlines.max, and ends at the timeout because it has not started
// (TestSDKTimeoutBoundsTheStartOfAStream).
func TestSDKTimeoutEndsTheCall(t *testing.T) {
	lines := make(finishLines, 16)
	base := watchDoors(t, lines)
	const timeout = time.Second // the header counts whole seconds

	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0),
		ooption.WithRequestTimeout(timeout),
		ooption.WithMiddleware(func(req *http.Request, next ooption.MiddlewareNext) (*http.Response, error) {
			return next(req.WithContext(context.WithoutCancel(req.Context())))
		}))
	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0),
		aoption.WithRequestTimeout(timeout),
		aoption.WithMiddleware(func(req *http.Request, next aoption.MiddlewareNext) (*http.Response, error) {
			return next(req.WithContext(context.WithoutCancel(req.Context())))
		}))

	for _, tc := range []struct {
		name     string
		streamed bool
		call     func(ctx context.Context) error
	}{
		{"openai", false, func(ctx context.Context) error {
			_, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: "watch/hang", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			return err
		}},
		{"anthropic, streamed", true, func(ctx context.Context) error {
			s := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
				Model: "watch/hang", MaxTokens: 16, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
			})
			for s.Next() {
			}
			return s.Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := time.Now()
			errc := make(chan error, 1)
			go func() { errc <- tc.call(ctxOf(t)) }()
			w := nextAttempt(t)
			// The call's deadline is the SDK's timeout, not the server's
			// default of two minutes (a wide margin: no timing is asserted);
			// a stream's is deadlines.max.
			switch {
			case !w.hasOne:
				t.Error("the provider's context has no deadline")
			case !tc.streamed && w.deadline.After(sent.Add(time.Minute)):
				t.Errorf("the provider's deadline is %v after the request, want the SDK's timeout of %v", w.deadline.Sub(sent), timeout)
			case tc.streamed && w.deadline.Before(sent.Add(500*time.Second)):
				t.Errorf("the provider's deadline is %v after the request, want deadlines.max (600s)", w.deadline.Sub(sent))
			}
			// The provider's stream is cancelled, by the deadline.
			select {
			case <-w.ended:
			case <-ctxOf(t).Done():
				t.Fatal("the provider's stream was not cancelled")
			}
			if !errors.Is(w.cause, context.DeadlineExceeded) {
				t.Errorf("the provider's stream ended with %v, want the deadline", w.cause)
			}
			// The call ended at llmrelay with its deadline, answered 504
			// (a stream: long before deadlines.max).
			if line := lines.next(t); line["http.status"] != "504" || line["reason"] != "DEADLINE_EXCEEDED" {
				t.Errorf("finish line %v", line)
			}
			if err := <-errc; err == nil {
				t.Error("the SDK's call succeeded")
			}
		})
	}
}

// TestTimeoutHeaderIsBoundedAsAnyDeadline: the header's deadline is a
// client's deadline like gRPC's: brought in to deadlines.max, and a
// header without a positive number of seconds is no header (the server's
// default applies).
func TestTimeoutHeaderIsBoundedAsAnyDeadline(t *testing.T) {
	lines := make(finishLines, 16)
	base := watchDoors(t, lines)
	for _, tc := range []struct {
		header   string
		min, max time.Duration // of the deadline, after the request (wide margins)
	}{
		{"30", 0, 60 * time.Second},
		{"30.5", 0, 60 * time.Second},
		{"86400", 300 * time.Second, 660 * time.Second}, // deadlines.max
		{"1e300", 300 * time.Second, 660 * time.Second},
		{"", 60 * time.Second, 180 * time.Second}, // deadlines.default
		{"0", 60 * time.Second, 180 * time.Second},
		{"-5", 60 * time.Second, 180 * time.Second},
		{"soon", 60 * time.Second, 180 * time.Second},
	} {
		sent := time.Now()
		h := map[string]string{}
		if tc.header != "" {
			h["X-Stainless-Timeout"] = tc.header
		}
		r := call(t, base, request{path: "/v1/chat/completions", key: sdkKey, headers: h,
			body: `{"model":"watch/quick","messages":[{"role":"user","content":"hi"}]}`})
		if r.status != 200 {
			t.Fatalf("%q: %d %s", tc.header, r.status, r.body)
		}
		lines.next(t)
		w := nextAttempt(t)
		if after := w.deadline.Sub(sent); !w.hasOne || after <= tc.min || after > tc.max {
			t.Errorf("X-Stainless-Timeout %q: the deadline is %v after the request, want in (%v, %v]", tc.header, after, tc.min, tc.max)
		}
	}
}

// TestSDKTimeoutBoundsTheStartOfAStream: the npm and Python SDKs' timeout
// bounds the wait for the response (fetch resolving on its headers; httpx's
// read timeout), not the stream that follows, which they read for as long
// as it lasts, as they would from OpenAI's or Anthropic's API. A streamed
// reply longer than the timeout is read to its end; before, llmrelay cut it
// at the timeout with a timeout_error. Here the Go SDKs send the header as
// the npm SDKs do for a timeout of one second (the Go SDKs' own timeout
// would end the stream by itself).
func TestSDKTimeoutBoundsTheStartOfAStream(t *testing.T) {
	base, _ := doors(t, nil)
	const words = 6 // 6 × 300 ms, past the one-second timeout
	slow := map[string]any{"provider_options": map[string]any{"chunk_delay_ms": 300, "words": words}}
	oc := openai.NewClient(ooption.WithBaseURL(base+"/v1"), ooption.WithAPIKey(sdkKey), ooption.WithMaxRetries(0),
		ooption.WithHeader("X-Stainless-Timeout", "1"), ooption.WithJSONSet("llmrelay", slow))
	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey(sdkKey), aoption.WithMaxRetries(0),
		aoption.WithHeader("X-Stainless-Timeout", "1"), aoption.WithJSONSet("llmrelay", slow))

	t.Run("openai", func(t *testing.T) {
		s := oc.Chat.Completions.NewStreaming(ctxOf(t), openai.ChatCompletionNewParams{
			Model: "mock/lorem", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			t.Fatalf("the stream failed: %v", err)
		}
		if got := len(strings.Fields(acc.Choices[0].Message.Content)); got != words || acc.Choices[0].FinishReason != "stop" {
			t.Errorf("the reply has %d words, finish %q; want %d, stop", got, acc.Choices[0].FinishReason, words)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		s := ac.Messages.NewStreaming(ctxOf(t), anthropic.MessageNewParams{
			Model: "mock/lorem", MaxTokens: 64, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
		})
		var m anthropic.Message
		for s.Next() {
			if err := m.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("the stream failed: %v", err)
		}
		if len(m.Content) != 1 || len(strings.Fields(m.Content[0].Text)) != words || m.StopReason != "end_turn" {
			t.Errorf("message %s, want %d words and end_turn", m.RawJSON(), words)
		}
	})
}
