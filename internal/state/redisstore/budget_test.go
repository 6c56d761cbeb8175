package redisstore_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/redisstore"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

func TestRetryBudgetConformance(t *testing.T) {
	srv := redistest.Start(t)
	// fail_closed, so that a failing command denies (and fails the test)
	// instead of deciding on local counts.
	statetest.RunRetryBudget(t, func(t *testing.T, limit state.BudgetLimit) state.RetryBudget {
		s := open(t, config(srv), redisstore.Options{FailClosed: true})
		t.Cleanup(func() { s.Close() })
		return s.RetryBudget("p", limit)
	})
}

// allowedSoon asks b for a retry until it allows one: what other replicas
// released reaches Redis a publication later.
func allowedSoon(t *testing.T, b state.RetryBudget, what string) func() {
	t.Helper()
	var release func()
	poll(t, what, 30*time.Second, func() bool {
		var ok bool
		release, ok = b.Retry(t.Context())
		return ok
	})
	return release
}

// TestRetryBudgetSharedByReplicas: two replicas (two stores) draw on one
// budget: min_retry_concurrency retries in flight across both, not each;
// attempts in flight on one replica raise the limit on the other; a
// release on one frees a retry for the other.
func TestRetryBudgetSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	a, b := open(t, cfg, redisstore.Options{}), open(t, cfg, redisstore.Options{})
	defer a.Close()
	defer b.Close()
	limit := state.BudgetLimit{Percent: 20, MinRetryConcurrency: 2}
	ba, bb := a.RetryBudget("openai", limit), b.RetryBudget("openai", limit)

	heldA := statetest.TakeRetries(t, ba)
	if len(heldA) != 2 {
		t.Fatalf("replica a: %d retries, want 2", len(heldA))
	}
	if got := statetest.TakeRetries(t, bb); len(got) != 0 {
		t.Fatalf("replica b: %d retries allowed beside a's 2, want none: one budget for both", len(got))
	}
	if _, ok := b.RetryBudget("anthropic", limit).Retry(t.Context()); !ok {
		t.Fatal("another provider's budget is spent too")
	}

	// 50 attempts in flight on a: 20% is 10 retries in flight in all.
	var ends []func()
	for range 50 {
		ends = append(ends, ba.Begin(t.Context()))
	}
	// b sees them a publication later (or two, if the publisher caught
	// the Begins half done).
	var more []func()
	poll(t, "replica b sees a's 50 attempts in flight", 30*time.Second, func() bool {
		more = append(more, statetest.TakeRetries(t, bb)...)
		return len(heldA)+len(more) >= 10
	})
	if len(heldA)+len(more) != 10 {
		t.Errorf("with 50 attempts in flight on a, %d retries in flight across both, want 10", len(heldA)+len(more))
	}
	for _, end := range ends {
		end()
	}
	for _, release := range append(heldA, more...) {
		release()
	}
	// Everything ended: the minimum again, from either replica.
	allowedSoon(t, bb, "a retry on b once everything ended")()
	poll(t, "the minimum again", 30*time.Second, func() bool {
		held := statetest.TakeRetries(t, ba)
		for _, release := range held {
			release()
		}
		return len(held) == 2
	})
}

// TestRetryBudgetOfACrashedReplicaLapses: retries in flight on a replica
// that dies are released within the lease TTL.
func TestRetryBudgetOfACrashedReplicaLapses(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	cfg.LeaseTTL = 3 * time.Second
	crashing, live := open(t, cfg, redisstore.Options{}), open(t, cfg, redisstore.Options{})
	defer live.Close()
	limit := state.BudgetLimit{MinRetryConcurrency: 3}
	if got := len(statetest.TakeRetries(t, crashing.RetryBudget("p", limit))); got != 3 {
		t.Fatalf("%d retries, want 3", got)
	}
	// Held past several renewals: a live replica keeps its entry.
	time.Sleep(2 * cfg.LeaseTTL)
	if _, ok := live.RetryBudget("p", limit).Retry(t.Context()); ok {
		t.Fatal("a retry allowed while the other replica holds the whole budget, two lease TTLs on")
	}
	redisstore.Crash(crashing)
	start := time.Now()
	allowedSoon(t, live.RetryBudget("p", limit), "a retry after the crash")
	took := time.Since(start)
	t.Logf("the crashed replica's retries lapsed %v after the crash (lease TTL %v)", took.Round(10*time.Millisecond), cfg.LeaseTTL)
	if took > cfg.LeaseTTL+5*time.Second {
		t.Errorf("retries lapsed %v after the crash, want within the lease TTL (%v)", took, cfg.LeaseTTL)
	}
}

// TestRetryBudgetWhenRedisFails: fail_open decides on the replica's own
// counts (and counts the fallback), fail_closed denies; both go back to
// the shared budget when Redis answers again, which gets each replica's
// retries in flight back at once.
func TestRetryBudgetWhenRedisFails(t *testing.T) {
	srv := redistest.Start(t)
	cfg := config(srv)
	m := metrics.New()
	open1 := open(t, cfg, redisstore.Options{Metrics: m})
	defer open1.Close()
	closed := open(t, cfg, redisstore.Options{FailClosed: true})
	defer closed.Close()
	limit := state.BudgetLimit{MinRetryConcurrency: 2}
	bo, bc := open1.RetryBudget("p", limit), closed.RetryBudget("p", limit)
	held := statetest.TakeRetries(t, bo)
	if len(held) != 2 {
		t.Fatalf("%d retries, want 2", len(held))
	}
	held[1]()
	held = held[:1]

	srv.Stop()
	waitDown(t, open1)
	waitDown(t, closed)
	// Local: one of the replica's own two is in flight, one more fits.
	local := statetest.TakeRetries(t, bo)
	if len(local) != 1 {
		t.Errorf("fail_open during the outage: %d more retries, want 1 (the local limit 2, less the one in flight)", len(local))
	}
	if got := counter(t, m, metrics.NameStateStoreFallbacks, "decision", "local"); got < 1 {
		t.Errorf("%s{decision=local} = %v, want the budget's decisions counted", metrics.NameStateStoreFallbacks, got)
	}
	if _, ok := bc.Retry(t.Context()); ok {
		t.Error("fail_closed during the outage: a retry allowed, want denied")
	}

	srv.Restart(t) // empty
	waitUp(t, open1)
	waitUp(t, closed)
	// open1's two retries in flight are published again: the budget is
	// full for the other replica.
	poll(t, "the retries in flight republished", 30*time.Second, func() bool {
		release, ok := bc.Retry(t.Context())
		if ok {
			release()
		}
		return !ok
	})
	for _, release := range append(held, local...) {
		release()
	}
	allowedSoon(t, bc, "a retry once they ended")()
}

// TestRetryBudgetBeginIsLocal: attempts starting and ending cost no round
// trip each: a thousand of them reach Redis in a few coalesced
// publications, and none needs Redis up.
func TestRetryBudgetBeginIsLocal(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, config(srv), redisstore.Options{FailClosed: true})
	defer s.Close()
	b := s.RetryBudget("p", statetest.Envoy)
	rdb := srv.Client(t)
	before := scriptsRun(t, rdb)
	for range 1000 {
		b.Begin(context.Background())()
	}
	time.Sleep(100 * time.Millisecond) // the last publication
	if n := scriptsRun(t, rdb) - before; n >= 100 {
		t.Errorf("1000 attempts ran %d scripts in Redis, want a few coalesced publications", n)
	} else {
		t.Logf("1000 attempts: %d publication(s)", n)
	}
	srv.Stop()
	waitDown(t, s)
	for range 1000 {
		b.Begin(context.Background())()
	}
}

var evalStat = regexp.MustCompile(`cmdstat_eval(?:sha)?:calls=(\d+)`)

// scriptsRun returns how many scripts (EVAL, EVALSHA) Redis has run.
func scriptsRun(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range evalStat.FindAllStringSubmatch(info, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	return total
}

func waitDown(t *testing.T, s *redisstore.Store) {
	t.Helper()
	waitCondition(t, s, false)
}

func waitUp(t *testing.T, s *redisstore.Store) {
	t.Helper()
	waitCondition(t, s, true)
}

func waitCondition(t *testing.T, s *redisstore.Store, reachable bool) {
	t.Helper()
	c := make(chan state.Condition, 16)
	stop := s.Watch(func(cond state.Condition) { c <- cond })
	defer stop()
	deadline := time.After(time.Minute)
	for {
		select {
		case cond := <-c:
			if cond.Reachable == reachable {
				return
			}
		case <-deadline:
			t.Fatalf("store reachable=%v not within a minute", reachable)
		}
	}
}
