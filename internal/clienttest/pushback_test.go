package clienttest_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// relayTo starts a real llmrelay on a free loopback port with one openai
// provider at upstream (cfg's other settings as given) and returns a
// Client made by New: with the shipped service config, so grpc-go's own
// retry machinery runs between the test and the server. Every attempt the
// client makes is reported to onAttempt, with its error (nil: it
// succeeded).
func relayTo(t *testing.T, upstream *openaitest.Server, cfg *config.Config, onAttempt func(error)) *client.Client {
	t.Helper()
	cfg.MetricsListen = ""
	cfg.Providers = []provider.Config{{Name: "openai", Kind: "openai", BaseURL: upstream.URL(), MaxConcurrent: cfg.Providers[0].MaxConcurrent}}
	addr, _ := servertest.Listen(t, cfg)
	t.Cleanup(httpx.CloseIdleConnections)
	opts := []client.Option{client.WithInsecure()}
	if onAttempt != nil {
		opts = append(opts, client.WithDialOptions(grpc.WithStatsHandler(attemptHandler(onAttempt))))
	}
	c, err := client.New(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// attemptHandler is a client stats handler that reports the end of every
// attempt of a call (grpc-go's retries each start a new one).
type attemptHandler func(error)

func (h attemptHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (h attemptHandler) HandleRPC(_ context.Context, s stats.RPCStats) {
	if end, ok := s.(*stats.End); ok {
		h(end.Error)
	}
}
func (h attemptHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h attemptHandler) HandleConn(context.Context, stats.ConnStats) {}

// generate runs a call to its end on the generated stub and returns its
// trailer and its error as a *client.Error (nil when it succeeded).
func generate(ctx context.Context, c *client.Client, req *llmrelayv1.GenerateRequest) (metadata.MD, error) {
	stream, err := c.Stub().Generate(ctx, req)
	if err != nil {
		return nil, client.FromError(err)
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return stream.Trailer(), nil
			}
			return stream.Trailer(), client.FromError(err)
		}
	}
}

func openaiRequest(policy *llmrelayv1.RetryPolicy) *llmrelayv1.GenerateRequest {
	return &llmrelayv1.GenerateRequest{
		Model:    "openai/fake",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
		Retry:    policy,
	}
}

// TestShippedServiceConfigFollowsServerPushback proves with grpc-go's own
// retry machinery that a client dialled with the shipped service config,
// which retries UNAVAILABLE before the first event, makes exactly one
// provider call when the server decided not to retry: the server's status
// carries grpc-retry-pushback-ms -1. Without it, each of these would reach
// the provider 4 times (the config's maxAttempts), as
// TestServiceConfigRetries shows for an UNAVAILABLE without pushback.
func TestShippedServiceConfigFollowsServerPushback(t *testing.T) {
	tests := []struct {
		name     string
		fault    openaitest.Fault
		policy   *llmrelayv1.RetryPolicy
		deadline time.Duration
		reason   string
	}{
		{"the provider said x-should-retry: false",
			openaitest.Fault{Kind: openaitest.Status, Status: 503, Header: map[string]string{"x-should-retry": "false"}},
			nil, 0, apierr.ReasonProviderRetryDisallowed},
		{"max_attempts 1",
			openaitest.Fault{Kind: openaitest.Status, Status: 503},
			&llmrelayv1.RetryPolicy{MaxAttempts: 1}, 0, apierr.ReasonRetriesExhausted},
		{"the provider's retry hint is past the deadline",
			openaitest.Fault{Kind: openaitest.Status, Status: 503, Header: map[string]string{"retry-after-ms": "60000"}},
			nil, 10 * time.Second, apierr.ReasonRetryHintExceedsDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := openaitest.Start(t, openaitest.Options{FaultFor: func(int, []byte) openaitest.Fault { return tt.fault }})
			cfg := config.Default()
			cfg.Providers = config.DefaultProviders()
			c := relayTo(t, upstream, cfg, nil)
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			trailer, err := generate(ctx, c, openaiRequest(tt.policy))
			var e *client.Error
			if !errors.As(err, &e) || e.Code != codes.Unavailable || e.Reason != tt.reason {
				t.Fatalf("err = %v, want UNAVAILABLE %s", err, tt.reason)
			}
			if got := upstream.Requests(); got != 1 {
				t.Errorf("the provider received %d calls, want exactly 1", got)
			}
			if got := trailer.Get(apierr.PushbackTrailer); len(got) != 1 || got[0] != "-1" {
				t.Errorf("trailer %s = %q, want -1", apierr.PushbackTrailer, got)
			}
		})
	}
}

// TestShippedServiceConfigRetriesABusyServerAfterItsPushback: a call that
// found the provider's one slot taken and its queue full (PROVIDER_BUSY,
// RetryInfo 1s) carries grpc-retry-pushback-ms 1000, and grpc-go's retry
// machinery calls again after it, and then succeeds, as soon as the slot is
// free.
func TestShippedServiceConfigRetriesABusyServerAfterItsPushback(t *testing.T) {
	upstream := openaitest.Start(t, openaitest.Options{FaultFor: func(n int, _ []byte) openaitest.Fault {
		if n == 0 {
			return openaitest.Fault{Kind: openaitest.Stall} // the first call holds the slot
		}
		return openaitest.Fault{}
	}})
	cfg := config.Default()
	cfg.Providers = []provider.Config{{MaxConcurrent: 1}}
	cfg.Limits.ProviderQueue = 0
	var mu sync.Mutex
	var attempts []error
	refused := make(chan struct{}, 1)
	c := relayTo(t, upstream, cfg, func(err error) {
		mu.Lock()
		attempts = append(attempts, err)
		mu.Unlock()
		if status.Code(err) == codes.Unavailable {
			select {
			case refused <- struct{}{}:
			default:
			}
		}
	})

	holdCtx, release := context.WithCancel(t.Context())
	defer release()
	holder, err := c.Generate(holdCtx, openaiRequest(nil))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = client.Collect(holder, nil) }()
	for upstream.OpenStreams() == 0 { // the holder has the slot
		select {
		case <-t.Context().Done():
			t.Fatal("the first call never reached the provider")
		case <-time.After(5 * time.Millisecond):
		}
	}

	done := make(chan error, 1)
	go func() { _, err := generate(t.Context(), c, openaiRequest(nil)); done <- err }()
	<-refused // its first attempt: PROVIDER_BUSY with pushback 1000
	release() // the slot frees up during the pushback wait
	if err := <-done; err != nil {
		t.Fatalf("the busy call failed after grpc-go's retry: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The holder ends cancelled; the busy call's attempts are refusals,
	// each followed by a retry after the pushback (a loaded machine may
	// need more than one for the slot to come free), then the served one.
	var busy, served, other int
	for _, err := range attempts {
		switch e := client.FromError(err); {
		case err == nil:
			served++
		case e.Reason == "PROVIDER_BUSY":
			busy++
		case status.Code(err) != codes.Canceled:
			other++
		}
	}
	if busy == 0 || served != 1 || other != 0 {
		t.Errorf("attempts %v: want PROVIDER_BUSY refusals, then one served retry, and nothing else", attempts)
	}
}
