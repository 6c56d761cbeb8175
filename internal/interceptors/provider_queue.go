package interceptors

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
)

// ProviderBusyRetryAfter is the RetryInfo delay of a call refused because
// its provider's queue was full or its deadline passed in the queue.
const ProviderBusyRetryAfter = time.Second

// ProviderQueue bounds the Generate calls in flight per provider (the
// provider's `max_concurrent`). A call beyond the bound waits, first come
// first served, in a queue of bounded length until a slot frees up or its
// deadline passes; a call that finds the queue full, or whose deadline
// passes in it, fails UNAVAILABLE (PROVIDER_BUSY) with a RetryInfo. It is
// safe for concurrent use.
//
// The queue is a link, not something the service calls: the link takes the
// provider from the first target the request's model resolved to
// (ResolveModel, before it, records the targets in the call record), so
// the bound holds for the whole call (every attempt and the waits between
// them) without the handler knowing about it, and a call that will be
// refused never reaches the handler. A call that falls back to another
// provider keeps the first one's slot and takes none of the other's. A
// call without a resolved target passes.
type ProviderQueue struct {
	providers map[string]*providerSlots
	metrics   *metrics.Metrics
}

type providerSlots struct {
	slots    chan struct{} // one token per call in flight
	waiting  atomic.Int64
	maxQueue int64
}

// NewProviderQueue builds the queues: maxConcurrent maps provider names to
// their bound (zero or absent: unbounded), queueLen is how many calls may
// wait per provider (zero: none wait, a call beyond the bound fails at
// once). m may be nil.
func NewProviderQueue(maxConcurrent map[string]int, queueLen int, m *metrics.Metrics) *ProviderQueue {
	q := &ProviderQueue{providers: make(map[string]*providerSlots), metrics: m}
	for name, n := range maxConcurrent {
		if n > 0 {
			q.providers[name] = &providerSlots{slots: make(chan struct{}, n), maxQueue: int64(queueLen)}
		}
	}
	return q
}

// Inherit makes q use prev's slots (and waiting calls) for every provider
// whose max_concurrent and queue length are the same in both, so that
// after a config reload the calls that started before it and those that
// start after count against one bound. A provider whose bound changed gets
// fresh slots: until the calls under the old bound end, both bounds hold
// side by side.
func (q *ProviderQueue) Inherit(prev *ProviderQueue) {
	if prev == nil {
		return
	}
	for name, p := range q.providers {
		if old := prev.providers[name]; old != nil && cap(old.slots) == cap(p.slots) && old.maxQueue == p.maxQueue {
			q.providers[name] = old
		}
	}
}

// Acquire takes a slot of the named provider, waiting in its queue if
// needed, and returns the function that gives it back. It fails with
// UNAVAILABLE (PROVIDER_BUSY, RetryInfo) when the queue is full or ctx's
// deadline passes while waiting, and with CANCELLED when ctx is cancelled.
func (q *ProviderQueue) Acquire(ctx context.Context, provider string) (release func(), err error) {
	p := q.providers[provider]
	if p == nil {
		return func() {}, nil
	}
	release = func() { <-p.slots }
	select {
	case p.slots <- struct{}{}:
		return release, nil
	default:
	}
	if p.waiting.Add(1) > p.maxQueue {
		p.waiting.Add(-1)
		return nil, q.busy(provider, "its queue of "+strconv.FormatInt(p.maxQueue, 10)+" waiting calls is full")
	}
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, statusError(codes.Canceled, ReasonCancelled, "call cancelled while waiting for provider "+provider, nil, 0)
		}
		return nil, q.busy(provider, "the call's deadline passed while it waited")
	}
}

func (q *ProviderQueue) busy(provider, why string) error {
	q.metrics.RateLimited(LimitProviderQueue)
	return statusError(codes.Unavailable, ReasonProviderBusy,
		"provider "+provider+" is at its max_concurrent calls and "+why,
		map[string]string{"provider": provider, "limit": LimitProviderQueue}, ProviderBusyRetryAfter)
}

// Link returns the chain link: it takes the slot of the request's provider
// once the request has arrived and holds it until the call ends. Put it
// after Deadline, so the wait is bounded, and after ResolveModel.
func (q *ProviderQueue) Link() Link {
	return Link{
		Name: "provider_queue",
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			release, err := q.acquireFor(ctx)
			if err != nil {
				return nil, err
			}
			defer release()
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			release := func() {}
			defer func() { release() }()
			return h(srv, &peekStream{ServerStream: ss, onFirst: func(any) error {
				r, err := q.acquireFor(ss.Context())
				if err == nil {
					release = r
				}
				return err
			}})
		},
	}
}

// acquireFor takes a slot for the provider of the call's first target,
// if it has one.
func (q *ProviderQueue) acquireFor(ctx context.Context) (func(), error) {
	t, ok := callinfo.From(ctx).Target()
	if !ok {
		return func() {}, nil
	}
	return q.Acquire(ctx, t.Entry.Config.Name)
}
