package interceptors

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

func TestProviderQueueAcquire(t *testing.T) {
	m := metrics.New()
	q := engine.NewProviderQueue(map[string]int{"openai": 1, "free": 0}, 1, m)
	ctx := testCtx(t)

	release, err := q.Acquire(ctx, "openai")
	if err != nil {
		t.Fatal(err)
	}
	// Unbounded and unknown providers never wait.
	for _, p := range []string{"free", "unknown"} {
		r, err := q.Acquire(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		r()
	}

	// The second call waits in the queue until the slot is released.
	got := make(chan error, 1)
	go func() {
		r, err := q.Acquire(ctx, "openai")
		if err == nil {
			r()
		}
		got <- err
	}()
	waitFor(t, func() bool { return q.Waiting("openai") == 1 })

	// The queue (length 1) is full: the third call fails at once.
	_, err = q.Acquire(ctx, "openai")
	st := wantStatus(t, err, codes.Unavailable, ReasonProviderBusy)
	if d := findDetail[*errdetails.RetryInfo](st).GetRetryDelay().AsDuration(); d != engine.ProviderBusyRetryAfter {
		t.Errorf("RetryInfo delay = %v, want %v", d, engine.ProviderBusyRetryAfter)
	}
	if got := rateLimited(t, m, LimitProviderQueue); got != 1 {
		t.Errorf("%s{limit=provider_queue} = %v, want 1", metrics.NameRateLimited, got)
	}

	release()
	if err := <-got; err != nil {
		t.Fatalf("queued call: %v", err)
	}

	t.Run("deadline passes in the queue", func(t *testing.T) {
		release, err := q.Acquire(ctx, "openai")
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel()
		_, err = q.Acquire(expired, "openai")
		wantStatus(t, err, codes.Unavailable, ReasonProviderBusy)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = q.Acquire(cancelled, "openai")
		wantStatus(t, err, codes.Canceled, ReasonCancelled)
	})
}

func TestProviderQueueLink(t *testing.T) {
	q := engine.NewProviderQueue(map[string]int{"mock": 1}, 0, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	svc := &fakeService{generate: func(req *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
		if req.GetModel() == "mock/hold" {
			close(entered)
			<-release
		}
		return nil
	}}
	c := serve(t, svc, Guard(discardLogger()), ResolveModel(testRoutes(t, nil, "mock", "openai")), ProviderQueue(q))
	hold := validRequest()
	hold.Model = "mock/hold"
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := c.generate(testCtx(t), hold); err != nil {
			t.Errorf("held call: %v", err)
		}
	})
	<-entered
	_, err := c.generate(testCtx(t), validRequest())
	wantStatus(t, err, codes.Unavailable, ReasonProviderBusy)
	other := validRequest()
	other.Model = "openai/gpt-4o"
	if _, err := c.generate(testCtx(t), other); err != nil {
		t.Fatalf("another provider: %v", err)
	}
	close(release)
	wg.Wait()
	if _, err := c.generate(testCtx(t), validRequest()); err != nil {
		t.Fatalf("after the held call ended: %v", err)
	}
}

// waitFor polls cond until it holds; the test's deadline guards a hang.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestProviderQueueInherit: after a reload, calls of the old and the new
// queue share one bound where a provider's bound did not change, and
// count apart where it did.
func TestProviderQueueInherit(t *testing.T) {
	ctx := testCtx(t)
	old := engine.NewProviderQueue(map[string]int{"same": 1, "changed": 1}, 0, nil)
	holdSame, err := old.Acquire(ctx, "same")
	if err != nil {
		t.Fatal(err)
	}
	defer holdSame()
	holdChanged, err := old.Acquire(ctx, "changed")
	if err != nil {
		t.Fatal(err)
	}
	defer holdChanged()

	q := engine.NewProviderQueue(map[string]int{"same": 1, "changed": 2}, 0, nil)
	q.Inherit(old)
	if _, err := q.Acquire(ctx, "same"); grpcstatus.Code(err) != codes.Unavailable {
		t.Errorf("same bound: a call beside the old one got %v, want UNAVAILABLE (one bound)", err)
	}
	r, err := q.Acquire(ctx, "changed")
	if err != nil {
		t.Errorf("changed bound: %v, want a fresh slot", err)
	} else {
		r()
	}
}
