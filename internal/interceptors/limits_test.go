package interceptors

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
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
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	kl := engine.NewKeyLimits(memory.New(memory.WithClock(clock.now)), m)
	c := serve(t, &fakeService{}, APIOnly(Auth(keyAuth(keys))), KeyLimits(kl))

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
	c := serve(t, svc, APIOnly(Auth(keyAuth(keys))), KeyLimits(engine.NewKeyLimits(memory.New(), m)))

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

// TestKeyResumeReaders: a key's Resume streams open at once are bounded by
// resume.max_readers_per_key (or its max_concurrent_streams, if higher),
// counted apart from its Generate streams, and one key's readers leave
// another key's alone.
func TestKeyResumeReaders(t *testing.T) {
	keys := testKeys(t,
		auth.KeyConfig{Name: "a", SHA256: auth.HashKey("a"), Scopes: []string{"generate"}, Models: []string{"*"}, MaxConcurrentStreams: 1},
		auth.KeyConfig{Name: "b", SHA256: auth.HashKey("b"), Scopes: []string{"generate"}, Models: []string{"*"}, MaxConcurrentStreams: 3},
	)
	m := metrics.New()
	entered, release := make(chan struct{}), make(chan struct{})
	svc := &fakeService{resume: func(req *llmrelayv1.ResumeRequest, s llmrelayv1.LLMService_ResumeServer) error {
		if req.GetRequestId() == "hold" {
			entered <- struct{}{}
			<-release
		}
		return nil
	}}
	store := memory.New()
	c := serve(t, svc, APIOnly(Auth(keyAuth(keys))), KeyLimits(engine.NewKeyLimits(store, m).WithResumeReaders(store, 2)))
	resume := func(key, id string) error {
		s, err := c.llm.Resume(withKey(testCtx(t), key), &llmrelayv1.ResumeRequest{RequestId: id})
		if err != nil {
			return err
		}
		for {
			if _, err := s.Recv(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	hold := func(key string, n int) {
		for range n {
			wg.Go(func() { errs <- resume(key, "hold") })
			<-entered
		}
	}
	// a: 2 readers (its stream limit, 1, is lower), and its stream slot
	// stays free for a Generate.
	hold("a", 2)
	st := wantStatus(t, resume("a", "x"), codes.ResourceExhausted, ReasonTooManyStreams)
	if got := findDetail[*errdetails.ErrorInfo](st).GetMetadata()["limit"]; got != LimitResumeReaders {
		t.Errorf("the refusal's limit = %q, want %s", got, LimitResumeReaders)
	}
	if _, err := c.generate(withKey(testCtx(t), "a"), validRequest()); err != nil {
		t.Fatalf("a's Generate while its readers are at their limit: %v", err)
	}
	// b: its stream limit, 3, is higher: 3 readers, whatever a holds.
	hold("b", 3)
	wantStatus(t, resume("b", "x"), codes.ResourceExhausted, ReasonTooManyStreams)
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("held Resume: %v", err)
		}
	}
	// Finished readers give their leases back.
	if err := resume("a", "x"); err != nil {
		t.Fatalf("after the readers ended: %v", err)
	}
}

// downStore is a state store that cannot decide: Redis unreachable with
// on_store_failure fail_closed. It records the quotas it was asked about.
type downStore struct {
	mu     sync.Mutex
	quotas []state.Quota
}

func (d *downStore) Admit(_ context.Context, _ string, q state.Quota) (state.Admission, error) {
	d.mu.Lock()
	d.quotas = append(d.quotas, q)
	d.mu.Unlock()
	return state.Admission{}, &state.UnavailableError{Cause: errors.New("dial tcp 10.1.2.3:6379: connection refused")}
}

// TestKeyLimitsStoreUnavailable: calls of limited keys fail UNAVAILABLE with
// a typed reason and a RetryInfo, without the store's internal error;
// unlimited keys never ask the store; unary calls ask for no stream lease.
func TestKeyLimitsStoreUnavailable(t *testing.T) {
	keys := testKeys(t,
		auth.KeyConfig{Name: "limited", SHA256: auth.HashKey("limited"), Scopes: []string{"generate", "models.list"}, Models: []string{"*"},
			RequestsPerSecond: 5, Burst: 2, MaxConcurrentStreams: 3},
		auth.KeyConfig{Name: "free", SHA256: auth.HashKey("free"), Scopes: []string{"generate", "models.list"}, Models: []string{"*"}},
	)
	store := &downStore{}
	c := serve(t, &fakeService{}, APIOnly(Auth(keyAuth(keys))), KeyLimits(engine.NewKeyLimits(store, metrics.New())))

	_, err := c.generate(withKey(testCtx(t), "limited"), validRequest())
	st := wantStatus(t, err, codes.Unavailable, ReasonStateStoreUnavailable)
	if ri := findDetail[*errdetails.RetryInfo](st); ri.GetRetryDelay().AsDuration() != time.Second {
		t.Errorf("RetryInfo %v, want 1s", ri)
	}
	if strings.Contains(st.Message(), "10.1.2.3") || strings.Contains(st.Message(), "refused") {
		t.Errorf("the status leaks the store's error: %q", st.Message())
	}
	_, err = c.llm.ListModels(withKey(testCtx(t), "limited"), &llmrelayv1.ListModelsRequest{})
	wantStatus(t, err, codes.Unavailable, ReasonStateStoreUnavailable)

	if _, err := c.generate(withKey(testCtx(t), "free"), validRequest()); err != nil {
		t.Errorf("a key without limits: %v", err)
	}
	want := []state.Quota{{Rate: 5, Burst: 2, MaxConcurrent: 3}, {Rate: 5, Burst: 2}}
	if diff := cmp.Diff(want, store.quotas); diff != "" {
		t.Errorf("quotas asked of the store (-want +got):\n%s", diff)
	}
}
