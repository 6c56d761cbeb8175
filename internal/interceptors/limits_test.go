package interceptors

import (
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

// fakeClock is a settable clock for rate limiters.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func rateLimited(t *testing.T, m *metrics.Metrics, limit string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metrics.NameRateLimited {
			continue
		}
		for _, mm := range mf.GetMetric() {
			for _, l := range mm.GetLabel() {
				if l.GetName() == "limit" && l.GetValue() == limit {
					return mm.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestKeyRateLimit(t *testing.T) {
	keys := testKeys(t,
		auth.KeyConfig{Name: "slow", SHA256: auth.HashKey("slow"), Scopes: []string{"generate", "models.list"}, Models: []string{"*"},
			RequestsPerSecond: 0.5, Burst: 2},
		auth.KeyConfig{Name: "free", SHA256: auth.HashKey("free"), Scopes: []string{"generate", "models.list"}, Models: []string{"*"}},
	)
	m := metrics.New()
	kl := NewKeyLimits(keys, m)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	kl.now = clock.now
	c := serve(t, &fakeService{}, APIOnly(Auth(keys)), kl.Link())

	call := func(key string, stream bool) error {
		ctx := withKey(testCtx(t), key)
		if stream {
			_, err := c.generate(ctx, validRequest())
			return err
		}
		_, err := c.llm.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
		return err
	}
	// The burst of 2 passes, unary and stream calls drawing on one bucket.
	if err := call("slow", false); err != nil {
		t.Fatal(err)
	}
	if err := call("slow", true); err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		st := wantStatus(t, call("slow", stream), codes.ResourceExhausted, ReasonRateLimited)
		ri := findDetail[*errdetails.RetryInfo](st)
		if got := ri.GetRetryDelay().AsDuration(); got != 2*time.Second {
			t.Errorf("RetryInfo delay = %v, want 2s (one token at 0.5/s)", got)
		}
	}
	if got := rateLimited(t, m, LimitRate); got != 2 {
		t.Errorf("%s{limit=rate} = %v, want 2", metrics.NameRateLimited, got)
	}
	// Other keys have their own bucket; this one has none.
	for range 5 {
		if err := call("free", false); err != nil {
			t.Fatalf("unlimited key: %v", err)
		}
	}
	// Refused calls took no token: one is due after 2s.
	clock.advance(time.Second)
	wantStatus(t, call("slow", false), codes.ResourceExhausted, ReasonRateLimited)
	clock.advance(time.Second)
	if err := call("slow", false); err != nil {
		t.Fatalf("after the RetryInfo delay: %v", err)
	}
}

func TestKeyConcurrentStreams(t *testing.T) {
	keys := testKeys(t, auth.KeyConfig{Name: "k", SHA256: auth.HashKey("k"), Scopes: []string{"generate"}, Models: []string{"*"},
		MaxConcurrentStreams: 2})
	m := metrics.New()
	entered, release := make(chan struct{}), make(chan struct{})
	svc := &fakeService{generate: func(req *llmrelayv1.GenerateRequest, s llmrelayv1.LLMService_GenerateServer) error {
		if req.GetModel() == "mock/hold" {
			entered <- struct{}{}
			<-release
		}
		return nil
	}}
	c := serve(t, svc, APIOnly(Auth(keys)), NewKeyLimits(keys, m).Link())

	hold := validRequest()
	hold.Model = "mock/hold"
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			_, err := c.generate(withKey(testCtx(t), "k"), hold)
			errs <- err
		})
		<-entered
	}
	_, err := c.generate(withKey(testCtx(t), "k"), validRequest())
	wantStatus(t, err, codes.ResourceExhausted, ReasonTooManyStreams)
	if got := rateLimited(t, m, LimitConcurrency); got != 1 {
		t.Errorf("%s{limit=concurrency} = %v, want 1", metrics.NameRateLimited, got)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("held stream: %v", err)
		}
	}
	// Finished streams give their slots back.
	if _, err := c.generate(withKey(testCtx(t), "k"), validRequest()); err != nil {
		t.Fatalf("after the streams ended: %v", err)
	}
}
