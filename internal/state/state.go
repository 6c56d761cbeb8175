// Package state owns the state that llmrelay's replicas share, behind one
// interface, Store, with two implementations chosen at start-up from the
// config's `state` section: internal/state/memory (the default: one
// process, zero setup) and internal/state/redisstore (several replicas
// sharing one Redis). Nothing above this package knows which is in use.
//
// A Store is a set of small interfaces, one per concern, so that a new
// concern is added beside the others without touching them:
//
//   - Admitter: a key's request rate (GCRA) and its concurrent streams, in
//     one atomic decision (one Redis round trip per call at most).
//   - Leases: counted slots that a live replica holds and a crashed one
//     loses within the lease TTL (concurrency caps).
//
// Optional capabilities are separate interfaces found by type assertion:
// Watcher, for stores that depend on something that can fail;
// TargetHealth, route targets' health by outlier detection (consecutive
// failures, ejection until a time, ejection count), which both stores
// implement; RetryBudgets, providers' retry budgets in Envoy's model
// counted across replicas, which the redis store implements (one
// process's budget is internal/retry's Budget); and EventLogs, the event
// logs of resumable calls (a Redis Stream per call in the redis store),
// which both implement; KeyStore, the API keys made through the admin API;
// and Spending, budgets' counters (reserved and settled atomically) and
// the usage records per key and team per day, which both implement.
//
// The conformance suite in internal/state/statetest runs against every
// implementation.
package state

import (
	"context"
	"errors"
	"time"
)

// Store is the state shared by llmrelay's replicas. Implementations are
// safe for concurrent use.
type Store interface {
	Admitter
	Leases
	// Close stops the store's background work and releases what it
	// holds (leases still held are given back where the store can). The
	// store must not be used after Close.
	Close() error
}

// Admitter admits calls against a key's limits.
type Admitter interface {
	// Admit decides whether one call of key may start under q: it takes
	// one rate token (when q.Rate > 0) and, when q.MaxConcurrent > 0, one
	// concurrency lease, atomically: a call refused for either limit takes
	// neither. An allowed Admission with q.MaxConcurrent > 0 carries the
	// Lease, which the caller releases when the call ends.
	//
	// Admit returns an error only when it cannot decide: ctx's error, or
	// an error matching ErrUnavailable when the store is unreachable and
	// configured to fail closed.
	Admit(ctx context.Context, key string, q Quota) (Admission, error)
}

// Quota is what one call of a key is admitted against. The zero Quota
// admits everything.
type Quota struct {
	// Rate is the sustained rate in calls per second; 0 means no rate
	// limit.
	Rate float64
	// Burst is how many calls may arrive at once after a quiet period; at
	// least 1 is used when Rate > 0.
	Burst int
	// MaxConcurrent caps the key's leases held at once (its open
	// streams); 0 takes no lease.
	MaxConcurrent int
}

// Interval returns the time one rate token takes to come back (1/Rate), or
// 0 without a rate limit.
func (q Quota) Interval() time.Duration {
	if q.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / q.Rate)
}

// EffectiveBurst returns Burst, or 1 when it is smaller.
func (q Quota) EffectiveBurst() int { return max(1, q.Burst) }

// Limit names the limit that refused a call.
type Limit string

// The limits of a Quota.
const (
	LimitRate        Limit = "rate"
	LimitConcurrency Limit = "concurrency"
)

// Admission is an Admitter's decision.
type Admission struct {
	// Allowed reports whether the call may start.
	Allowed bool
	// Refused names the limit that refused the call, when not Allowed.
	Refused Limit
	// RetryAfter is, for a rate refusal, when the next token is due.
	RetryAfter time.Duration
	// Open is, for a concurrency refusal, how many leases of the key were
	// held: at least q.MaxConcurrent, more when the limit was lowered
	// below the streams open.
	Open int
	// Lease is the concurrency lease taken for an allowed call whose
	// Quota has MaxConcurrent > 0; nil otherwise.
	Lease Lease
}

// Lease is one held slot. Release gives it back; it is idempotent, safe
// for concurrent use, and never blocks for longer than the store's
// operation timeout. A lease whose replica dies is released by the store
// within its lease TTL.
type Lease interface {
	Release()
}

// Leases holds counted slots in named sets: a slot is held from Acquire
// until its Lease is released, or until the lease TTL after the holding
// replica stopped renewing it (it crashed or lost the store).
//
// A set's name is chosen by its user; the sets Admit uses for keys are kept
// apart from these. The part of a name before its first "/" is its group
// ("openai" in "openai/active" and "openai/retries"): stores keep a group's
// sets together (one Redis Cluster slot), so that an operation added later
// may read one set and take a lease of another atomically, as a retry
// budget capping retries at a share of active requests needs.
type Leases interface {
	// Acquire takes a slot of set if fewer than limit are held (limit 0:
	// no limit). ok is false, with a nil Lease, when the set is full. It
	// returns an error only when it cannot decide (see Admitter.Admit).
	Acquire(ctx context.Context, set string, limit int) (l Lease, ok bool, err error)
	// Count returns how many slots of set are held.
	Count(ctx context.Context, set string) (int, error)
}

// Watcher is implemented by stores that depend on something that can
// fail (a Redis server). The server's readiness follows it.
type Watcher interface {
	// Watch calls f with the store's condition now and again on every
	// change, from one goroutine at a time, until stop is called or the
	// store is closed.
	Watch(f func(Condition)) (stop func())
}

// Condition is a store's condition as a Watcher reports it.
type Condition struct {
	// Reachable reports whether the store answers.
	Reachable bool
	// Admitting reports whether calls are admitted: always with
	// fail_open (on local limits while the store is unreachable), only
	// while Reachable with fail_closed.
	Admitting bool
}

// ErrUnavailable is matched (errors.Is) by the error of an operation
// refused because the store is unreachable and configured to fail closed.
var ErrUnavailable = errors.New("state: store unavailable")

// UnavailableError is the error returned while the store is unreachable
// and fails closed. It matches ErrUnavailable; Cause is the last failure
// seen, for logs.
type UnavailableError struct {
	Cause error
}

// Error implements error.
func (e *UnavailableError) Error() string {
	if e.Cause == nil {
		return ErrUnavailable.Error()
	}
	return ErrUnavailable.Error() + ": " + e.Cause.Error()
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Cause }
