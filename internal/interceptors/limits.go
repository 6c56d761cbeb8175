package interceptors

import (
	"context"
	"errors"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
)

// Labels of metrics.RateLimited, one per limit.
const (
	LimitRate          = "rate"
	LimitConcurrency   = "concurrency"
	LimitProviderQueue = "provider_queue"
	// LimitResumeReaders is the limit on a key's Resume streams, in a
	// refusal's ErrorInfo metadata (its metric counts it as concurrency).
	LimitResumeReaders = "resume_readers"
)

// storeRetryAfter is the RetryInfo delay of a call refused because the
// shared state store is unavailable (fail_closed): the store is pinged
// about this often, and another replica may already reach it.
const storeRetryAfter = time.Second

// KeyLimits enforces each key's requests_per_second/burst on every call
// and its max_concurrent_streams on stream calls, through a state.Admitter:
// per process with the memory store, across every replica with the redis
// store. Each call costs at most one Admit (one Redis round trip), and
// none for keys without limits. It is safe for concurrent use.
type KeyLimits struct {
	quotas  map[string]state.Quota // by key name; keys without limits are absent
	store   state.Admitter
	metrics *metrics.Metrics
	// readers holds the Resume streams' leases, up to readersOf each
	// key; nil: Resumes are not counted.
	readers   state.Leases
	readersOf map[string]int
}

// NewKeyLimits builds the limits of every configured key on store. m may
// be nil.
func NewKeyLimits(keys *auth.Keyring, store state.Admitter, m *metrics.Metrics) *KeyLimits {
	kl := &KeyLimits{quotas: make(map[string]state.Quota), store: store, metrics: m}
	for _, id := range keys.Identities() {
		q := state.Quota{MaxConcurrent: id.Limits.MaxConcurrentStreams}
		if id.Limits.RequestsPerSecond > 0 {
			q.Rate, q.Burst = id.Limits.RequestsPerSecond, max(1, id.Limits.Burst)
		}
		if q != (state.Quota{}) {
			kl.quotas[id.Name] = q
		}
	}
	return kl
}

// WithResumeReaders has each key's Resume streams open at once counted in
// leases, across the replicas that share leases, up to perKey or the key's
// max_concurrent_streams, whichever is higher (resume.max_readers_per_key):
// a Resume reads a call that holds a stream slot already, so it takes
// none, but one key's readers, each tailing a log, must not crowd out
// another's. It returns kl.
func (kl *KeyLimits) WithResumeReaders(keys *auth.Keyring, leases state.Leases, perKey int) *KeyLimits {
	kl.readers, kl.readersOf = leases, make(map[string]int)
	for _, id := range keys.Identities() {
		kl.readersOf[id.Name] = max(perKey, id.Limits.MaxConcurrentStreams)
	}
	return kl
}

// admitReader takes a Resume stream's lease of its key; the returned
// release gives it back.
func (kl *KeyLimits) admitReader(ctx context.Context) (release func(), err error) {
	id, ok := auth.FromContext(ctx)
	if !ok || kl.readers == nil {
		return func() {}, nil
	}
	limit := kl.readersOf[id.Name]
	l, ok, err := kl.readers.Acquire(ctx, "resume-readers:"+id.Name, limit)
	switch {
	case errors.Is(err, state.ErrUnavailable):
		return nil, storeUnavailable(id.Name, err)
	case err != nil:
		return nil, apierr.FromError(err)
	case !ok:
		kl.metrics.RateLimited(LimitConcurrency)
		return nil, statusError(codes.ResourceExhausted, ReasonTooManyStreams,
			"API key "+id.Name+" already has "+strconv.Itoa(limit)+" Resume streams open",
			map[string]string{"key": id.Name, "limit": LimitResumeReaders}, 0)
	}
	return l.Release, nil
}

// storeUnavailable is the error of a call of key refused because a
// fail_closed store is unavailable.
func storeUnavailable(key string, err error) error {
	return &apierr.Error{
		Code: codes.Unavailable, Reason: ReasonStateStoreUnavailable,
		Message:    "the store of shared limits is unavailable, and this server refuses calls until it is back; call again",
		Metadata:   map[string]string{"key": key},
		RetryAfter: storeRetryAfter,
		Cause:      err,
	}
}

// admit admits one call of id's key: with stream, under its stream limit
// too. The returned release ends the call's stream lease (a no-op when
// there is none). A refused call takes no token and no stream slot.
func (kl *KeyLimits) admit(ctx context.Context, stream bool) (release func(), err error) {
	id, ok := auth.FromContext(ctx)
	if !ok { // no keys configured; health and reflection
		return func() {}, nil
	}
	q, ok := kl.quotas[id.Name]
	if !stream {
		q.MaxConcurrent = 0
	}
	if !ok || q == (state.Quota{}) {
		return func() {}, nil
	}
	adm, err := kl.store.Admit(ctx, id.Name, q)
	switch {
	case errors.Is(err, state.ErrUnavailable):
		return nil, storeUnavailable(id.Name, err)
	case err != nil: // the call's own cancellation or deadline
		return nil, apierr.FromError(err)
	}
	switch {
	case adm.Allowed:
		if adm.Lease != nil {
			return adm.Lease.Release, nil
		}
		return func() {}, nil
	case adm.Refused == state.LimitConcurrency:
		kl.metrics.RateLimited(LimitConcurrency)
		return nil, statusError(codes.ResourceExhausted, ReasonTooManyStreams,
			"API key "+id.Name+" already has "+strconv.Itoa(q.MaxConcurrent)+" streams open",
			map[string]string{"key": id.Name, "limit": LimitConcurrency}, 0)
	default:
		kl.metrics.RateLimited(LimitRate)
		return nil, statusError(codes.ResourceExhausted, ReasonRateLimited,
			"API key "+id.Name+" exceeded its rate of "+strconv.FormatFloat(q.Rate, 'g', -1, 64)+" requests per second",
			map[string]string{"key": id.Name, "limit": LimitRate}, max(adm.RetryAfter, time.Millisecond))
	}
}

// Link returns the chain link: the rate limit for every call, and for stream
// calls also the stream limit (RESOURCE_EXHAUSTED, TOO_MANY_STREAMS), held
// until the stream ends. A Resume takes a rate token but no stream slot:
// the resumable call it reads holds one for as long as it runs, so a key
// at its limit can still pick its own calls up; it takes a reader's lease
// instead (WithResumeReaders). While a fail_closed store is unavailable,
// calls of limited keys fail UNAVAILABLE (STATE_STORE_UNAVAILABLE).
func (kl *KeyLimits) Link() Link {
	return Link{
		Name: "key_limits",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			release, err := kl.admit(ctx, false)
			if err != nil {
				return nil, err
			}
			defer release()
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			resume := info.FullMethod == llmrelayv1.LLMService_Resume_FullMethodName
			release, err := kl.admit(ss.Context(), !resume)
			if err != nil {
				return err
			}
			defer release()
			if resume {
				releaseReader, err := kl.admitReader(ss.Context())
				if err != nil {
					return err
				}
				defer releaseReader()
			}
			return h(srv, ss)
		},
	}
}
