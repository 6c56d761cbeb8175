package statetest

import (
	"sync"
	"testing"

	"github.com/llmrelay/llmrelay/internal/state"
)

// NewRetryBudget returns a fresh budget under limit, with nothing in
// flight, for one test.
type NewRetryBudget func(t *testing.T, limit state.BudgetLimit) state.RetryBudget

// Envoy is Envoy's default retry budget, which is also llmrelay's: 20
// retries in flight per 100 attempts in flight, at least 3.
var Envoy = state.BudgetLimit{Percent: 20, MinRetryConcurrency: 3}

// RunRetryBudget runs the conformance suite of state.RetryBudget (the
// method set of internal/retry's Throttle) against the budgets newBudget
// makes: the in-process retry.Budget and every store's shared one.
func RunRetryBudget(t *testing.T, newBudget NewRetryBudget) {
	t.Run("nothing in flight: the minimum at once", func(t *testing.T) {
		b := newBudget(t, Envoy)
		if got := len(TakeRetries(t, b)); got != 3 {
			t.Errorf("%d retries allowed at once with no attempt in flight, want min_retry_concurrency (3)", got)
		}
	})
	t.Run("a share of the attempts in flight", func(t *testing.T) {
		b := newBudget(t, Envoy)
		begin(t, b, 50)
		if got := len(TakeRetries(t, b)); got != 10 {
			t.Errorf("%d retries allowed at once with 50 attempts in flight, want 20%% (10)", got)
		}
	})
	t.Run("ending attempts lowers the limit, releasing retries frees it", func(t *testing.T) {
		b := newBudget(t, Envoy)
		ends := begin(t, b, 50)
		held := TakeRetries(t, b)
		for _, end := range ends[:40] {
			end()
		}
		if _, ok := b.Retry(t.Context()); ok {
			t.Fatal("a retry was allowed with 10 retries and 10 attempts in flight (limit 3)")
		}
		for _, release := range held[:8] {
			release()
		}
		if _, ok := b.Retry(t.Context()); !ok {
			t.Fatal("a retry was denied with 2 retries in flight (limit 3)")
		}
	})
	t.Run("releases and ends are idempotent", func(t *testing.T) {
		b := newBudget(t, state.BudgetLimit{Percent: 100})
		ends := begin(t, b, 5)
		for range 3 {
			ends[0]()
		}
		held := TakeRetries(t, b)
		if len(held) != 4 {
			t.Fatalf("%d retries allowed with 4 attempts in flight at 100%%, want 4: an attempt ended more than once", len(held))
		}
		for range 3 {
			held[0]()
		}
		if got := len(TakeRetries(t, b)); got != 1 {
			t.Fatalf("%d retries allowed after one was released three times, want 1", got)
		}
	})
	t.Run("it cannot wedge", func(t *testing.T) {
		b := newBudget(t, Envoy)
		for range 50 {
			for _, release := range TakeRetries(t, b) {
				release()
			}
		}
		if got := len(TakeRetries(t, b)); got != 3 {
			t.Errorf("after 50 rounds of denied retries, %d retries allowed at once, want 3", got)
		}
	})
	t.Run("concurrent retries are atomic", func(t *testing.T) {
		b := newBudget(t, state.BudgetLimit{MinRetryConcurrency: 5})
		var mu sync.Mutex
		var held []func()
		var wg sync.WaitGroup
		for range 24 {
			wg.Go(func() {
				if release, ok := b.Retry(t.Context()); ok {
					mu.Lock()
					held = append(held, release)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(held) != 5 {
			t.Errorf("24 concurrent retries against a limit of 5: %d allowed", len(held))
		}
	})
	t.Run("concurrent use ends with nothing in flight", func(t *testing.T) {
		b := newBudget(t, state.BudgetLimit{Percent: 50, MinRetryConcurrency: 1})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					end := b.Begin(t.Context())
					if release, ok := b.Retry(t.Context()); ok {
						release()
					}
					end()
				}
			})
		}
		wg.Wait()
		if got := len(TakeRetries(t, b)); got != 1 {
			t.Errorf("after every attempt and retry ended, %d retries allowed at once, want the minimum (1)", got)
		}
	})
}

// begin starts n attempts in flight on b and returns their ends.
func begin(t *testing.T, b state.RetryBudget, n int) []func() {
	ends := make([]func(), n)
	for i := range ends {
		ends[i] = b.Begin(t.Context())
	}
	return ends
}

// TakeRetries takes retries from b until it denies one and returns their
// releases.
func TakeRetries(t *testing.T, b state.RetryBudget) []func() {
	t.Helper()
	var held []func()
	for range 10_000 {
		release, ok := b.Retry(t.Context())
		if !ok {
			return held
		}
		if release == nil {
			t.Fatal("an allowed retry without a release func")
		}
		held = append(held, release)
	}
	t.Fatal("the budget never denied a retry")
	return nil
}
