package retry_test

import (
	"sync"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// runCall plays one call against a provider that fails every attempt for
// failing calls, and returns how many attempts it made.
func runCall(p retry.Policy, b *retry.Budget, failing bool) int {
	outage := retry.Classify(&provider.Error{Kind: provider.KindHTTP, Status: 503})
	for n := 1; ; n++ {
		if !failing {
			b.Success()
			return n
		}
		if d := p.Decide(retry.Attempt{N: n, Class: outage}, b, nil); !d.Retry() {
			return n
		}
	}
}

func TestBudgetStopsRetriesUnderSustainedOutage(t *testing.T) {
	const calls = 1000
	p := config.Default().RetryLimits().Policy(retry.Request{MaxAttempts: 5})
	b := retry.NewBudget(100, 0.1) // the default configuration

	attempts := 0
	for range calls {
		attempts += runCall(p, b, true)
	}
	// Without a budget the outage would see calls*5 attempts. With it,
	// retries stop once 50 tokens are gone: at most 50 retries in all.
	if attempts > calls+50 {
		t.Errorf("%d calls made %d attempts under an outage; want at most %d", calls, attempts, calls+50)
	}
	if got := runCall(p, b, true); got != 1 {
		t.Errorf("a call during the outage made %d attempts, want 1", got)
	}

	// Once the provider recovers, successes refill the bucket and retries
	// come back.
	for range 600 {
		runCall(p, b, false)
	}
	if got := runCall(p, b, true); got < 2 {
		t.Errorf("after recovery a failing call made %d attempts, want retries again", got)
	}
}

func TestBudgetNeverExceedsMaxTokens(t *testing.T) {
	b := retry.NewBudget(10, 0.5)
	for range 100 {
		b.Success()
	}
	if got := b.Tokens(); got != 10 {
		t.Errorf("Tokens() = %v after many successes, want 10", got)
	}
	for range 100 {
		b.Failure()
	}
	if got := b.Tokens(); got != 0 {
		t.Errorf("Tokens() = %v after many failures, want 0", got)
	}
}

func TestNilBudgetAllowsEverything(t *testing.T) {
	var b *retry.Budget
	if !b.Failure() {
		t.Error("a nil budget denied a retry")
	}
	b.Success()
	if retry.NewBudget(0, 0.1) != nil {
		t.Error("NewBudget(0, ...) is not nil: a zero max_tokens must disable throttling")
	}
	if retry.NewBudgets(0, 0.1).For("openai") != nil {
		t.Error("Budgets with max_tokens 0 returned a budget")
	}
}

func TestBudgetsArePerProvider(t *testing.T) {
	bs := retry.NewBudgets(4, 1)
	down := bs.For("down")
	for range 3 {
		down.Failure()
	}
	if bs.For("down") != down {
		t.Error("For returned a new budget for the same provider")
	}
	if !bs.For("up").Failure() {
		t.Error("an outage of one provider denied another provider's retry")
	}
}

func TestBudgetsConcurrentUse(t *testing.T) {
	bs := retry.NewBudgets(1000, 0.5)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := []string{"a", "b"}[i%2]
			for range 1000 {
				bs.For(name).Failure()
				bs.For(name).Success()
			}
		})
	}
	wg.Wait()
	// Each provider saw 4000 failures and 4000 half-token successes.
	for _, name := range []string{"a", "b"} {
		if got := bs.For(name).Tokens(); got < 0 || got > 1000 {
			t.Errorf("%s holds %v tokens, want within [0, 1000]", name, got)
		}
	}
}
