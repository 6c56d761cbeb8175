// Package statetest is the conformance suite of state.Store: one set of
// tests that every implementation passes (memory in-process, redis against
// a real redis-server), so that nothing above the store can tell them
// apart.
//
// The tests use real time (a Redis store reads Redis's clock), with rates
// slow enough that a loaded machine cannot turn a refusal into an
// admission, and they wait on RetryAfter rather than on guesses.
package statetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

// NewStore returns a fresh, empty store for one test; the test closes it.
type NewStore func(t *testing.T) state.Store

// RunAll runs every conformance test against the stores newStore makes.
func RunAll(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		run  func(*testing.T, state.Store)
	}{
		{"UnlimitedQuotaAdmitsWithoutLease", testUnlimited},
		{"RateBurstThenRefusedWithRetryAfter", testRateBurst},
		{"RateTokenDueAfterRetryAfter", testRateRefill},
		{"RateRefusalTakesNoToken", testRateRefusalTakesNothing},
		{"KeysAreIndependent", testKeysIndependent},
		{"ConcurrencyLeases", testConcurrency},
		{"ConcurrencyRefusalTakesNoToken", testConcurrencyRefusalTakesNoToken},
		{"ConcurrencyRefusalCountsTheOpen", testConcurrencyRefusalCountsTheOpen},
		{"RateRefusalTakesNoLease", testRateRefusalTakesNoLease},
		{"ConcurrentAdmitsAreAtomic", testConcurrentAdmits},
		{"LeaseSets", testLeaseSets},
		{"LeaseSetsApartFromKeys", testLeaseSetsApart},
		{"ConcurrentAcquiresAreAtomic", testConcurrentAcquires},
		{"CancelledContext", testCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.run(t, s)
		})
	}
}

func admit(t *testing.T, s state.Store, key string, q state.Quota) state.Admission {
	t.Helper()
	adm, err := s.Admit(context.Background(), key, q)
	if err != nil {
		t.Fatalf("Admit(%q, %+v): %v", key, q, err)
	}
	if adm.Allowed != (adm.Refused == "") {
		t.Fatalf("Admit(%q): Allowed %v with Refused %q", key, adm.Allowed, adm.Refused)
	}
	if adm.Allowed && (q.MaxConcurrent > 0) != (adm.Lease != nil) {
		t.Fatalf("Admit(%q, %+v): allowed with lease %v", key, q, adm.Lease)
	}
	return adm
}

func wantAllowed(t *testing.T, adm state.Admission, what string) {
	t.Helper()
	if !adm.Allowed {
		t.Fatalf("%s: refused (%s, retry after %v), want allowed", what, adm.Refused, adm.RetryAfter)
	}
}

func wantRefused(t *testing.T, adm state.Admission, limit state.Limit, what string) {
	t.Helper()
	if adm.Allowed || adm.Refused != limit {
		t.Fatalf("%s: allowed=%v refused=%q, want refused by %s", what, adm.Allowed, adm.Refused, limit)
	}
}

func testUnlimited(t *testing.T, s state.Store) {
	for i := range 100 {
		adm := admit(t, s, "free", state.Quota{})
		wantAllowed(t, adm, "call")
		if adm.Lease != nil {
			t.Fatalf("call %d: a lease without MaxConcurrent", i)
		}
	}
}

// slow is a rate no loaded machine outruns: a token every 10s.
var slow = state.Quota{Rate: 0.1, Burst: 3}

func testRateBurst(t *testing.T, s state.Store) {
	for range slow.Burst {
		wantAllowed(t, admit(t, s, "k", slow), "call within the burst")
	}
	adm := admit(t, s, "k", slow)
	wantRefused(t, adm, state.LimitRate, "call past the burst")
	// The next token is due 10s after the first call; some of that has
	// passed on a slow machine.
	if adm.RetryAfter <= 5*time.Second || adm.RetryAfter > 10*time.Second {
		t.Errorf("RetryAfter = %v, want within (5s, 10s]", adm.RetryAfter)
	}
	if adm.Lease != nil {
		t.Error("a refused call holds a lease")
	}
}

func testRateRefill(t *testing.T, s state.Store) {
	q := state.Quota{Rate: 1, Burst: 1}
	start := time.Now()
	wantAllowed(t, admit(t, s, "k", q), "first call")
	adm := admit(t, s, "k", q)
	if adm.Allowed {
		if time.Since(start) < 900*time.Millisecond {
			t.Fatal("second call at once: allowed, want refused by rate")
		}
		t.Skip("the machine took a second between two calls: a token was due already")
	}
	wantRefused(t, adm, state.LimitRate, "second call at once")
	if adm.RetryAfter <= 0 || adm.RetryAfter > time.Second {
		t.Fatalf("RetryAfter = %v, want within (0, 1s]", adm.RetryAfter)
	}
	time.Sleep(adm.RetryAfter + 10*time.Millisecond)
	wantAllowed(t, admit(t, s, "k", q), "call after RetryAfter")
}

func testRateRefusalTakesNothing(t *testing.T, s state.Store) {
	q := state.Quota{Rate: 0.1, Burst: 1}
	wantAllowed(t, admit(t, s, "k", q), "first call")
	first := admit(t, s, "k", q)
	wantRefused(t, first, state.LimitRate, "second call")
	for range 5 {
		again := admit(t, s, "k", q)
		wantRefused(t, again, state.LimitRate, "later call")
		// Had a refusal taken a token, the wait would grow by 10s each time.
		if again.RetryAfter > first.RetryAfter {
			t.Fatalf("RetryAfter grew from %v to %v: a refused call took a token", first.RetryAfter, again.RetryAfter)
		}
	}
}

func testKeysIndependent(t *testing.T, s state.Store) {
	q := state.Quota{Rate: 0.1, Burst: 1, MaxConcurrent: 1}
	a := admit(t, s, "a", q)
	wantAllowed(t, a, "key a")
	defer a.Lease.Release()
	wantRefused(t, admit(t, s, "a", q), state.LimitConcurrency, "key a again")
	b := admit(t, s, "b", q)
	wantAllowed(t, b, "key b")
	b.Lease.Release()
}

func testConcurrency(t *testing.T, s state.Store) {
	q := state.Quota{MaxConcurrent: 2}
	one, two := admit(t, s, "k", q), admit(t, s, "k", q)
	wantAllowed(t, one, "first stream")
	wantAllowed(t, two, "second stream")
	wantRefused(t, admit(t, s, "k", q), state.LimitConcurrency, "third stream")
	// Release is idempotent: releasing one lease twice frees one slot.
	one.Lease.Release()
	one.Lease.Release()
	three := admit(t, s, "k", q)
	wantAllowed(t, three, "a stream after a release")
	wantRefused(t, admit(t, s, "k", q), state.LimitConcurrency, "one stream too many after a double release")
	two.Lease.Release()
	three.Lease.Release()
	four, five := admit(t, s, "k", q), admit(t, s, "k", q)
	wantAllowed(t, four, "a stream after every release")
	wantAllowed(t, five, "a second stream after every release")
	four.Lease.Release()
	five.Lease.Release()
}

func testConcurrencyRefusalTakesNoToken(t *testing.T, s state.Store) {
	q := state.Quota{Rate: 0.1, Burst: 2, MaxConcurrent: 1}
	first := admit(t, s, "k", q)
	wantAllowed(t, first, "first call")
	wantRefused(t, admit(t, s, "k", q), state.LimitConcurrency, "second call while the first is open")
	first.Lease.Release()
	// The second token is still there: the concurrency refusal took none.
	second := admit(t, s, "k", q)
	wantAllowed(t, second, "a call after the release")
	second.Lease.Release()
	wantRefused(t, admit(t, s, "k", q), state.LimitRate, "a third call: both tokens spent")
}

// testConcurrencyRefusalCountsTheOpen: a concurrency refusal says how
// many leases the key holds, which is more than the limit once the limit
// was lowered below them (a key's max_concurrent_streams changed while
// its streams are open).
func testConcurrencyRefusalCountsTheOpen(t *testing.T, s state.Store) {
	one, two := admit(t, s, "k", state.Quota{MaxConcurrent: 2}), admit(t, s, "k", state.Quota{MaxConcurrent: 2})
	wantAllowed(t, one, "first stream")
	wantAllowed(t, two, "second stream")
	defer one.Lease.Release()
	defer two.Lease.Release()
	for _, limit := range []int{2, 1} {
		adm := admit(t, s, "k", state.Quota{MaxConcurrent: limit})
		wantRefused(t, adm, state.LimitConcurrency, "a third stream")
		if adm.Open != 2 {
			t.Fatalf("a refusal at a limit of %d says %d leases open, want 2", limit, adm.Open)
		}
	}
}

func testRateRefusalTakesNoLease(t *testing.T, s state.Store) {
	limited := state.Quota{Rate: 0.1, Burst: 1, MaxConcurrent: 2}
	first := admit(t, s, "k", limited)
	wantAllowed(t, first, "first call")
	defer first.Lease.Release()
	wantRefused(t, admit(t, s, "k", limited), state.LimitRate, "second call")
	// One lease is held, not two: one more fits.
	streams := state.Quota{MaxConcurrent: 2}
	second := admit(t, s, "k", streams)
	wantAllowed(t, second, "a stream beside the first")
	defer second.Lease.Release()
	wantRefused(t, admit(t, s, "k", streams), state.LimitConcurrency, "a third stream")
}

func testConcurrentAdmits(t *testing.T, s state.Store) {
	const callers = 40
	run := func(key string, q state.Quota) (allowed int, leases []state.Lease) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				adm, err := s.Admit(context.Background(), key, q)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if adm.Allowed {
					allowed++
					if adm.Lease != nil {
						leases = append(leases, adm.Lease)
					}
				}
			})
		}
		wg.Wait()
		return allowed, leases
	}
	if n, _ := run("rate", state.Quota{Rate: 0.01, Burst: 7}); n != 7 {
		t.Errorf("%d concurrent calls against a burst of 7: %d allowed", callers, n)
	}
	n, leases := run("streams", state.Quota{MaxConcurrent: 10})
	if n != 10 {
		t.Errorf("%d concurrent calls against max 10 streams: %d allowed", callers, n)
	}
	for _, l := range leases {
		l.Release()
	}
}

func testLeaseSets(t *testing.T, s state.Store) {
	ctx := context.Background()
	count := func(set string, want int) {
		t.Helper()
		n, err := s.Count(ctx, set)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("Count(%q) = %d, want %d", set, n, want)
		}
	}
	acquire := func(set string, limit int, wantOK bool) state.Lease {
		t.Helper()
		l, ok, err := s.Acquire(ctx, set, limit)
		if err != nil {
			t.Fatal(err)
		}
		if ok != wantOK || (l != nil) != ok {
			t.Fatalf("Acquire(%q, %d) = %v, %v, want ok %v", set, limit, l, ok, wantOK)
		}
		return l
	}
	count("p/active", 0)
	a, b := acquire("p/active", 2, true), acquire("p/active", 2, true)
	acquire("p/active", 2, false)
	count("p/active", 2)
	a.Release()
	a.Release()
	count("p/active", 1)
	// No limit: always granted, still counted.
	var unlimited []state.Lease
	for range 5 {
		unlimited = append(unlimited, acquire("p/active", 0, true))
	}
	count("p/active", 6)
	count("p/retries", 0)
	b.Release()
	for _, l := range unlimited {
		l.Release()
	}
	count("p/active", 0)
}

func testLeaseSetsApart(t *testing.T, s state.Store) {
	adm := admit(t, s, "x", state.Quota{MaxConcurrent: 1})
	wantAllowed(t, adm, "a stream of key x")
	defer adm.Lease.Release()
	l, ok, err := s.Acquire(context.Background(), "x", 1)
	if err != nil || !ok {
		t.Fatalf("Acquire(set x) beside key x's stream = %v, %v: the sets must be apart", ok, err)
	}
	l.Release()
}

func testConcurrentAcquires(t *testing.T, s state.Store) {
	var mu sync.Mutex
	var got []state.Lease
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			l, ok, err := s.Acquire(context.Background(), "set", 4)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				got = append(got, l)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != 4 {
		t.Errorf("30 concurrent acquires of a set of 4: %d granted", len(got))
	}
	for _, l := range got {
		l.Release()
	}
	if n, err := s.Count(context.Background(), "set"); err != nil || n != 0 {
		t.Errorf("Count after every release = %d, %v, want 0", n, err)
	}
}

func testCancelled(t *testing.T, s state.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Admit(ctx, "k", state.Quota{Rate: 1, Burst: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("Admit with a cancelled context: %v, want context.Canceled", err)
	}
	if _, _, err := s.Acquire(ctx, "set", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := s.Count(ctx, "set"); !errors.Is(err, context.Canceled) {
		t.Errorf("Count with a cancelled context: %v, want context.Canceled", err)
	}
}
