package service_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// gateTimer makes every wait between attempts last until the test opens
// it, so that retries stay in flight as long as the test needs.
type gateTimer struct {
	open chan struct{}
	mu   sync.Mutex
	n    int
	cond chan struct{} // closed and replaced on every wait
}

func newGateTimer() *gateTimer {
	return &gateTimer{open: make(chan struct{}), cond: make(chan struct{})}
}

func (g *gateTimer) After(time.Duration) <-chan time.Time {
	g.mu.Lock()
	g.n++
	close(g.cond)
	g.cond = make(chan struct{})
	g.mu.Unlock()
	ch := make(chan time.Time, 1)
	go func() {
		<-g.open
		ch <- time.Now()
	}()
	return ch
}

// waitFor blocks until n waits have begun.
func (g *gateTimer) waitFor(t *testing.T, n int) {
	t.Helper()
	for {
		g.mu.Lock()
		got, cond := g.n, g.cond
		g.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-cond:
		case <-t.Context().Done():
			t.Fatalf("%d waits began, want %d", got, n)
		}
	}
}

// firstEvent opens a Generate call and returns its stream after its first
// event, which it checks is a will_retry.
func firstEvent(t *testing.T, ctx context.Context, c llmrelayv1.LLMServiceClient, req *llmrelayv1.GenerateRequest) llmrelayv1.LLMService_GenerateClient {
	t.Helper()
	stream, err := c.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Recv()
	if err != nil || ev.GetWillRetry() == nil {
		t.Fatalf("first event %v, %v; want a will_retry", ev, err)
	}
	return stream
}

// drain reads a stream to its end and returns its last event and status.
func drain(stream llmrelayv1.LLMService_GenerateClient) (*llmrelayv1.GenerateEvent, error) {
	var last *llmrelayv1.GenerateEvent
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return last, nil
		}
		if err != nil {
			return last, err
		}
		last = ev
	}
}

// TestRetryBudgetBoundsRetriesInFlight: with no attempt in flight, at most
// min_retry_concurrency (3) retries are in flight to a provider; a fourth
// failing call is not retried, and fails RETRY_BUDGET_EXHAUSTED after one
// attempt. Once the retries in flight end, retries are allowed again: the
// budget keeps no history and cannot wedge.
func TestRetryBudgetBoundsRetriesInFlight(t *testing.T) {
	gate := newGateTimer()
	in := servertest.Start(t, config.Default(), server.WithRetryTimer(gate))
	outage := `[{"status":503}]`

	held := make([]llmrelayv1.LLMService_GenerateClient, 3)
	for i := range held {
		held[i] = firstEvent(t, t.Context(), in.Client, echo(t, input, outage, nil))
	}
	gate.waitFor(t, 3)
	events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, outage, nil))
	if len(events) != 0 {
		t.Errorf("the call denied a retry sent %v", events)
	}
	wantStatus(t, err, codes.Unavailable, "RETRY_BUDGET_EXHAUSTED", map[string]string{"attempts": "1"})
	if got := metricValue(t, in.Server.Metrics(), "llmrelay_retry_budget_exhausted_total", map[string]string{"provider": "mock"}); got != 1 {
		t.Errorf("llmrelay_retry_budget_exhausted_total = %v, want 1", got)
	}

	close(gate.open)
	for i, s := range held {
		if last, err := drain(s); err != nil || last.GetFinal() == nil {
			t.Errorf("held call %d ended with %v, %v; want its retry's final", i, last, err)
		}
	}
	events, err = servertest.Collect(t.Context(), in.Client, echo(t, input, outage, nil))
	if err != nil || len(willRetries(events)) != 1 {
		t.Errorf("after the retries ended, a failing call got %d retries and %v; want its retry", len(willRetries(events)), err)
	}
}

// TestPathologicalCallersDoNotStopAnotherCallersRetry: ten callers whose
// own first event timeout (150ms, far below the server's 120s) stalls every
// attempt retry under their own policy, outside the provider's budget, so
// an eleventh caller's ordinary retry (after a 503) is still allowed while
// all ten wait to retry. Counted against the budget, their ten retries in
// flight would deny it (the limit is 3 with no attempt in flight).
func TestPathologicalCallersDoNotStopAnotherCallersRetry(t *testing.T) {
	in := servertest.Start(t, config.Default())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stalls := `[{"stall_after":0},{"stall_after":0},{"stall_after":0}]`
	var wg sync.WaitGroup
	defer wg.Wait()
	for range 10 {
		req := echo(t, input, stalls, &llmrelayv1.RetryPolicy{
			// Long waits: each caller holds its retry until the test ends.
			MaxAttempts: 3, InitialBackoff: durationpb.New(60 * time.Second), MaxBackoff: durationpb.New(60 * time.Second),
		})
		req.FirstEventTimeout = durationpb.New(150 * time.Millisecond)
		req.StreamIdleTimeout = durationpb.New(150 * time.Millisecond)
		stream := firstEvent(t, ctx, in.Client, req) // its first attempt stalled
		wg.Go(func() { _, _ = drain(stream) })
	}

	events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, `[{"status":503}]`, attempts(3)))
	if err != nil {
		t.Fatalf("the eleventh caller's call failed: %v", err)
	}
	checkStream(t, events, []string{
		"will_retry a1 OVERLOADED next=2 discard=false cause=Unavailable/PROVIDER_OVERLOADED",
		`delta a2 "the "`, `delta a2 "quick "`, `delta a2 "brown "`, `delta a2 "fox "`, `delta a2 "jumps"`,
		`final a2 attempts=2 "the quick brown fox jumps"`,
	})
	cancel()
}

// TestDemoRunsKeepSucceedingOnTheirRetry: the fault demos of docs/retries.md, run
// one after another, keep succeeding on their retries. The token bucket
// this budget replaced wedged after about 50 of them (each failure took a
// token, each success gave back a tenth, and retries stopped at half).
func TestDemoRunsKeepSucceedingOnTheirRetry(t *testing.T) {
	in := servertest.Start(t, config.Default(), server.WithRetryTimer(&recordingTimer{}))
	demos := []struct {
		faults string
		policy *llmrelayv1.RetryPolicy
		tries  int
	}{
		{`[{"drop_after":2}]`, nil, 2},
		{`[{"status":503},{"status":429,"retry_after_ms":700},{"drop_after":2}]`, attempts(4), 4},
	}
	for run := range 100 {
		d := demos[run%len(demos)]
		events, err := servertest.Collect(t.Context(), in.Client, echo(t, input, d.faults, d.policy))
		if err != nil {
			t.Fatalf("demo run %d (%s) failed: %v", run+1, d.faults, err)
		}
		if f := events[len(events)-1].GetFinal(); f == nil || int(f.GetAttempts()) != d.tries {
			t.Fatalf("demo run %d (%s) ended with %v; want a final after %d attempts", run+1, d.faults, events[len(events)-1], d.tries)
		}
	}
}
