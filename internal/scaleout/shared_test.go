package scaleout_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider/openai/openaitest"
	"github.com/llmrelay/llmrelay/internal/state/redistest"
)

// outage is an OpenAI-compatible upstream whose every request fails with
// 503 at once, as a provider in an outage does.
func outage(t *testing.T) *openaitest.Server {
	return openaitest.Start(t, openaitest.Options{FaultFor: func(int, []byte) openaitest.Fault {
		return openaitest.Fault{Kind: openaitest.Status, Status: 503}
	}})
}

// budgetConfig is the providers and retry settings of the budget test: a
// provider "down" at upstream, retries that wait a minute (so a retry the
// budget allowed stays in flight until the test ends its call), and a
// budget of 2 retries in flight (1 % of the attempts in flight, which
// never passes 2 here).
func budgetConfig(upstream string) string {
	return fmt.Sprintf(`providers:
  - {name: down, kind: openai, base_url: %q, models: [m]}
retry:
  initial_backoff: 60s
  max_backoff: 60s
  budget: {budget_percent: 1, min_retry_concurrency: %d}
`, upstream, budgetMin)
}

const budgetMin = 2

// retryOutcome opens a call to down/m on r and returns once the plan
// decided on its first attempt's failure: retried (a will_retry event; the
// call then waits its backoff, in flight in the budget, until cancel), or
// denied by the retry budget (the call's status says so). Anything else
// fails the test.
func retryOutcome(t *testing.T, r *replica) (retried bool, cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(withKey(t.Context(), keyFree))
	t.Cleanup(cancel)
	gs, err := r.client.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model:    "down/m",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
	})
	var ev *llmrelayv1.GenerateEvent
	if err == nil {
		ev, err = gs.Recv()
	}
	switch {
	case err == nil && ev.GetWillRetry() != nil:
		return true, cancel
	case err == nil:
		t.Fatalf("replica %s: first event %v, want will_retry or the budget's refusal", r.name, ev)
	case errors.Is(err, io.EOF):
		t.Fatalf("replica %s: the call ended without a status", r.name)
	case reason(err) != "RETRY_BUDGET_EXHAUSTED":
		t.Fatalf("replica %s: the call ended %v (%s), want RETRY_BUDGET_EXHAUSTED", r.name, err, reason(err))
	}
	cancel()
	return false, nil
}

// TestSharedRetryBudget: a provider outage spends one shared retry budget.
// Two replicas sharing one redis-server get 16 calls at once, all to a
// provider whose every request fails: the retries in flight across both
// stay within the one budget's bound (min_retry_concurrency, 2), not twice
// it. A replica killed while its retries wait gives them back within the
// lease TTL.
func TestSharedRetryBudget(t *testing.T) {
	redis := redistest.Start(t)
	upstream := outage(t)
	cfg := budgetConfig(upstream.URL())
	a := startReplica(t, "a", redis, "budget:", "fail_open", cfg)
	b := startReplica(t, "b", redis, "budget:", "fail_open", cfg)

	const perReplica = 8
	var mu sync.Mutex
	var held []context.CancelFunc
	retried := map[string]int{}
	var wg sync.WaitGroup
	for _, r := range []*replica{a, b} {
		for range perReplica {
			wg.Go(func() {
				ok, cancel := retryOutcome(t, r)
				mu.Lock()
				defer mu.Unlock()
				if ok {
					retried[r.name]++
					held = append(held, cancel)
				}
			})
		}
	}
	wg.Wait()
	t.Logf("16 calls at once against an outage: %d retried on a, %d on b; %d provider requests", retried["a"], retried["b"], upstream.Requests())
	if got := retried["a"] + retried["b"]; got != budgetMin {
		t.Errorf("%d retries in flight across both replicas, want the one budget's %d (per-replica budgets would allow %d)", got, budgetMin, 2*budgetMin)
	}
	if got := upstream.Requests(); got != 2*perReplica {
		t.Errorf("the provider got %d requests, want %d: one per call, the retries still waiting", got, 2*perReplica)
	}
	denied := a.metric(t, metrics.NameRetryBudgetExhausted, `provider="down"`) + b.metric(t, metrics.NameRetryBudgetExhausted, `provider="down"`)
	if denied != float64(2*perReplica-budgetMin) {
		t.Errorf("%s across both = %v, want %d", metrics.NameRetryBudgetExhausted, denied, 2*perReplica-budgetMin)
	}

	// The retries end with their calls: the budget is free again, on
	// either replica. Replica a takes all of it.
	for _, cancel := range held {
		cancel()
	}
	for range budgetMin {
		eventually(t, "replica a gets a retry", func() bool { ok, _ := retryOutcome(t, a); return ok })
	}
	if ok, _ := retryOutcome(t, b); ok {
		t.Fatal("replica b retried while a's retries fill the budget")
	}

	// a is killed with both retries waiting: b gets them back once a's
	// entry lapses.
	a.kill()
	killed := time.Now()
	eventually(t, "replica b gets a retry after a was killed", func() bool { ok, _ := retryOutcome(t, b); return ok })
	took := time.Since(killed)
	t.Logf("the killed replica's retries were released %v after SIGKILL (lease_ttl %v)", took.Round(10*time.Millisecond), leaseTTL)
	if took > leaseTTL+5*time.Second {
		t.Errorf("retries released %v after the crash, want within the lease TTL (%v)", took, leaseTTL)
	}
}

// healthConfig is the providers and route of the target health test: the
// route "smart" tries flaky/m, then steady/m; two failures in a row eject
// a target for a minute; one attempt per target, so a failure falls back
// at once.
func healthConfig(flaky, steady string) string {
	return fmt.Sprintf(`providers:
  - {name: flaky, kind: openai, base_url: %q, models: [m]}
  - {name: steady, kind: openai, base_url: %q, models: [m]}
routes:
  - name: smart
    targets: [{model: flaky/m}, {model: steady/m}]
outlier_detection: {consecutive_failures: 2, base_ejection_time: 60s, max_ejection_time: 60s}
retry: {default_max_attempts: 1}
`, flaky, steady)
}

// generate calls the route smart on r and reads the call to its end.
func generate(t *testing.T, r *replica) *llmrelayv1.Final {
	t.Helper()
	ctx, cancel := context.WithTimeout(withKey(t.Context(), keyFree), time.Minute)
	defer cancel()
	gs, err := r.client.Generate(ctx, &llmrelayv1.GenerateRequest{
		Model:    "smart",
		Messages: []*llmrelayv1.Message{{Role: llmrelayv1.Role_ROLE_USER, Content: "hi"}},
	})
	if err != nil {
		t.Fatalf("replica %s: %v", r.name, err)
	}
	for {
		ev, err := gs.Recv()
		if err != nil {
			t.Fatalf("replica %s: the call ended %v before its final", r.name, err)
		}
		if f := ev.GetFinal(); f != nil {
			return f
		}
	}
}

// ejected reports whether r's ListModels shows the route target ejected.
func ejected(t *testing.T, r *replica, target string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(withKey(t.Context(), keyFree), 10*time.Second)
	defer cancel()
	resp, err := r.client.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
	if err != nil {
		t.Fatalf("replica %s: ListModels: %v", r.name, err)
	}
	for _, m := range resp.GetModels() {
		for _, tg := range m.GetTargets() {
			if tg.GetModel() == target {
				return tg.GetHealth().GetEjected()
			}
		}
	}
	t.Fatalf("replica %s: ListModels lists no route target %s", r.name, target)
	return false
}

// TestSharedTargetHealth: an ejection learned by one replica keeps the
// other from sending to that target during the cooldown. Replica a sees
// flaky/m fail twice in a row and ejects it; replica b, which never saw it
// fail, then skips it too: with the target answering again, none of b's
// calls reach it while the ejection lasts. The ejection is counted once,
// by the replica that made it.
func TestSharedTargetHealth(t *testing.T) {
	redis := redistest.Start(t)
	var failing atomic.Bool
	failing.Store(true)
	flaky := openaitest.Start(t, openaitest.Options{Chunks: 2, FaultFor: func(int, []byte) openaitest.Fault {
		if failing.Load() {
			return openaitest.Fault{Kind: openaitest.Status, Status: 503}
		}
		return openaitest.Fault{}
	}})
	steady := openaitest.Start(t, openaitest.Options{Chunks: 2})
	cfg := healthConfig(flaky.URL(), steady.URL())
	a := startReplica(t, "a", redis, "health:", "fail_open", cfg)
	b := startReplica(t, "b", redis, "health:", "fail_open", cfg)
	if ejected(t, b, "flaky/m") {
		t.Fatal("flaky/m ejected on b before any call")
	}

	for i := range 2 {
		if f := generate(t, a); f.GetProvider() != "steady" {
			t.Fatalf("call %d on a: served by %q, want a fallback to steady", i+1, f.GetProvider())
		}
	}
	if !ejected(t, a, "flaky/m") {
		t.Fatal("flaky/m not ejected on a after failing twice in a row there")
	}
	eventually(t, "replica b learns of a's ejection", func() bool { return ejected(t, b, "flaky/m") })

	// flaky answers again, but stays out of rotation for its cooldown: b
	// sends it nothing.
	failing.Store(false)
	before := flaky.Requests()
	for i := range 10 {
		if f := generate(t, b); f.GetProvider() != "steady" {
			t.Fatalf("call %d on b: served by %q, want steady: flaky/m is ejected", i+1, f.GetProvider())
		}
	}
	if got := flaky.Requests() - before; got != 0 {
		t.Errorf("replica b sent %d requests to flaky/m during a's ejection, want none", got)
	}
	ejections := a.metric(t, metrics.NameEjections, `target="flaky/m"`) + b.metric(t, metrics.NameEjections, `target="flaky/m"`)
	if ejections != 1 {
		t.Errorf("%s across both replicas = %v, want 1", metrics.NameEjections, ejections)
	}
	if got := b.metric(t, metrics.NameEjected, `target="flaky/m"`); got != 1 {
		t.Errorf("replica b: %s{target=\"flaky/m\"} = %v, want 1", metrics.NameEjected, got)
	}
}
