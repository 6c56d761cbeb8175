package interceptors

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

// Labels of metrics.RateLimited, one per limit.
const (
	LimitRate          = "rate"
	LimitConcurrency   = "concurrency"
	LimitProviderQueue = "provider_queue"
)

// keyState is one key's limiter and stream count.
type keyState struct {
	limiter    *rate.Limiter // nil: no rate limit
	maxStreams int64         // 0: no stream limit
	streams    atomic.Int64
}

// KeyLimits enforces each key's requests_per_second/burst (a token bucket
// per key) on every call and its max_concurrent_streams on stream calls. It
// is safe for concurrent use.
type KeyLimits struct {
	keys    map[string]*keyState
	metrics *metrics.Metrics
	now     func() time.Time
}

// NewKeyLimits builds the limits of every configured key. m may be nil.
func NewKeyLimits(keys *auth.Keyring, m *metrics.Metrics) *KeyLimits {
	kl := &KeyLimits{keys: make(map[string]*keyState), metrics: m, now: time.Now}
	for _, id := range keys.Identities() {
		st := &keyState{maxStreams: int64(id.Limits.MaxConcurrentStreams)}
		if id.Limits.RequestsPerSecond > 0 {
			st.limiter = rate.NewLimiter(rate.Limit(id.Limits.RequestsPerSecond), max(1, id.Limits.Burst))
		}
		kl.keys[id.Name] = st
	}
	return kl
}

// allow takes one token from the key's bucket, or returns
// RESOURCE_EXHAUSTED (RATE_LIMITED) with a RetryInfo saying when the next
// token is due. A refused call takes no token.
func (kl *KeyLimits) allow(id *auth.Identity, st *keyState) error {
	if st.limiter == nil {
		return nil
	}
	now := kl.now()
	r := st.limiter.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if !r.OK() {
		delay = time.Second // burst 0; NewKeyLimits never builds one
	} else if delay == 0 {
		return nil
	}
	r.CancelAt(now)
	kl.metrics.RateLimited(LimitRate)
	return statusError(codes.ResourceExhausted, ReasonRateLimited,
		"API key "+id.Name+" exceeded its rate of "+strconv.FormatFloat(id.Limits.RequestsPerSecond, 'g', -1, 64)+" requests per second",
		map[string]string{"key": id.Name, "limit": LimitRate}, max(delay, time.Millisecond))
}

// state returns the limits of the caller's key, or nil for calls without an
// identity (no keys configured; health and reflection).
func (kl *KeyLimits) state(ctx context.Context) (*auth.Identity, *keyState) {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return nil, nil
	}
	return id, kl.keys[id.Name]
}

// Link returns the chain link: the rate limit for every call, and for stream
// calls also the stream limit (RESOURCE_EXHAUSTED, TOO_MANY_STREAMS), held
// until the stream ends.
func (kl *KeyLimits) Link() Link {
	return Link{
		Name: "key_limits",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if id, st := kl.state(ctx); st != nil {
				if err := kl.allow(id, st); err != nil {
					return nil, err
				}
			}
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			id, st := kl.state(ss.Context())
			if st == nil {
				return h(srv, ss)
			}
			// The stream slot first: a call refused for it takes no token.
			if st.maxStreams > 0 {
				defer st.streams.Add(-1)
				if n := st.streams.Add(1); n > st.maxStreams {
					kl.metrics.RateLimited(LimitConcurrency)
					return statusError(codes.ResourceExhausted, ReasonTooManyStreams,
						"API key "+id.Name+" already has "+strconv.FormatInt(st.maxStreams, 10)+" streams open",
						map[string]string{"key": id.Name, "limit": LimitConcurrency}, 0)
				}
			}
			if err := kl.allow(id, st); err != nil {
				return err
			}
			return h(srv, ss)
		},
	}
}
