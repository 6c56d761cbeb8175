package state

import (
	"context"
	"math"
)

// RetryBudgets is an optional capability of a Store, found by type
// assertion: providers' retry budgets in Envoy's model, counted across
// every replica that shares the store, so that a provider outage spends one
// budget, not one per replica. A store that does not implement it leaves
// each process its own budget (internal/retry's Budget).
//
// statetest.RunRetryBudget is its conformance suite.
type RetryBudgets interface {
	// RetryBudget returns the budget named name (a provider's configured
	// name) under limit. Budgets of one name share their counts whatever
	// their limit (a config reload changes the limit, not what is in
	// flight). It is cheap: callers may ask for every attempt.
	RetryBudget(name string, limit BudgetLimit) RetryBudget
}

// RetryBudget is one provider's retry budget: it counts the provider's
// attempts in flight and its retries in flight, and nothing else, so it
// cannot wedge. Its method set is internal/retry's Throttle, which the
// attempt plan asks: a RetryBudget is a retry.Throttle.
//
// Implementations are safe for concurrent use; the funcs they return are
// idempotent and never block for long.
type RetryBudget interface {
	// Begin records one attempt in flight, until end is called. It never
	// waits for a shared store: a store counts its replica's attempts
	// locally and publishes them off the call's path.
	Begin(ctx context.Context) (end func())
	// Retry asks for a retry: allowed (ok, and in flight until release
	// is called) while fewer than the limit's Limit(attempts in flight)
	// retries are in flight. A shared store decides it in one round trip
	// at most; while it is unreachable it decides by on_store_failure
	// (fail_open: this replica's own counts; fail_closed: denied).
	Retry(ctx context.Context) (release func(), ok bool)
}

// BudgetLimit is a retry budget's shape, Envoy's retry budget: retries in
// flight to a provider may not exceed Percent of its attempts in flight,
// and MinRetryConcurrency retries are always allowed at once.
// internal/retry names it BudgetConfig.
type BudgetLimit struct {
	// Percent is the retries in flight allowed per 100 attempts in flight.
	Percent float64
	// MinRetryConcurrency is how many retries are allowed in flight
	// whatever the attempts in flight, so that a quiet provider's calls
	// can always retry.
	MinRetryConcurrency int
}

// Limit returns how many retries may be in flight with active attempts in
// flight: max(MinRetryConcurrency, ⌊Percent·active/100⌋). It is the one
// formula every RetryBudget applies (a shared store's script computes the
// same, in the same float64 arithmetic).
func (l BudgetLimit) Limit(active int) int {
	return max(l.MinRetryConcurrency, int(math.Floor(l.Percent*float64(active)/100)))
}
