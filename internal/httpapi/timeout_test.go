package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
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
// for a client that had gone, and called again.
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
		name string
		call func(ctx context.Context) error
	}{
		{"openai", func(ctx context.Context) error {
			_, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: "watch/hang", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			return err
		}},
		{"anthropic, streamed", func(ctx context.Context) error {
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
			// default of two minutes (a wide margin: no timing is asserted).
			if !w.hasOne || w.deadline.After(sent.Add(time.Minute)) {
				t.Errorf("the provider's deadline %v (%v after the request), want the SDK's timeout of %v", w.deadline, w.deadline.Sub(sent), timeout)
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
			// The call ended at llmrelay with its deadline, answered 504.
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
