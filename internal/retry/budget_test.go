package retry_test

import (
	"sync"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// envoy is Envoy's default retry budget, which is also llmrelay's.
var envoy = retry.BudgetConfig{Percent: 20, MinRetryConcurrency: 3}

func TestBudgetConfigLimit(t *testing.T) {
	tests := []struct {
		name   string
		cfg    retry.BudgetConfig
		active int
		want   int
	}{
		{"nothing in flight: the minimum", envoy, 0, 3},
		{"few in flight: the minimum", envoy, 10, 3},
		{"20% of 15 rounds down to the minimum", envoy, 15, 3},
		{"20% of 20 is 4", envoy, 20, 4},
		{"20% of 1000", envoy, 1000, 200},
		{"100% allows a retry per attempt", retry.BudgetConfig{Percent: 100}, 7, 7},
		{"no minimum", retry.BudgetConfig{Percent: 20}, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.Limit(tt.active); got != tt.want {
				t.Errorf("Limit(%d) = %d, want %d", tt.active, got, tt.want)
			}
		})
	}
}

func TestConfigDefaultIsEnvoysBudget(t *testing.T) {
	if got, on := config.Default().RetryBudget(); got != envoy || !on {
		t.Errorf("the default retry budget is %+v, want Envoy's %+v", got, envoy)
	}
}

// retries takes retries from b until it denies one and returns their
// releases.
func retries(t *testing.T, b *retry.Budget) []func() {
	t.Helper()
	var held []func()
	for range 10_000 {
		release, ok := b.Retry(t.Context())
		if !ok {
			return held
		}
		held = append(held, release)
	}
	t.Fatal("the budget never denied a retry")
	return nil
}

func TestBudgetHoldsRetriesInFlightToItsLimit(t *testing.T) {
	b := retry.NewBudget(envoy)
	if got := len(retries(t, b)); got != 3 {
		t.Errorf("with no attempt in flight, %d retries were allowed at once, want min_retry_concurrency (3)", got)
	}

	b = retry.NewBudget(envoy)
	var ends []func()
	for range 50 {
		ends = append(ends, b.Begin(t.Context()))
	}
	held := retries(t, b)
	if len(held) != 10 {
		t.Errorf("with 50 attempts in flight, %d retries were allowed at once, want 20%% (10)", len(held))
	}
	// Attempts ending lower the limit: no new retry until the retries in
	// flight are below it again.
	for _, end := range ends[:40] {
		end()
	}
	if _, ok := b.Retry(t.Context()); ok {
		t.Error("a retry was allowed with 10 in flight and 10 attempts in flight (limit 3)")
	}
	for _, release := range held[:8] {
		release()
	}
	if _, ok := b.Retry(t.Context()); !ok {
		t.Error("a retry was denied with 2 in flight (limit 3)")
	}
}

// TestBudgetCannotWedge: whatever happened before, once the retries in
// flight end, retries are allowed again. The budget keeps no history (the
// token bucket it replaced never recovered once its successes stopped).
func TestBudgetCannotWedge(t *testing.T) {
	b := retry.NewBudget(envoy)
	for range 1000 {
		held := retries(t, b)
		for _, release := range held {
			release()
		}
	}
	if got := len(retries(t, b)); got != 3 {
		t.Errorf("after 1000 rounds of denied retries, %d retries were allowed at once, want 3", got)
	}
}

func TestBudgetReleasesAreIdempotent(t *testing.T) {
	b := retry.NewBudget(envoy)
	end := b.Begin(t.Context())
	release, _ := b.Retry(t.Context())
	for range 3 {
		end()
		release()
	}
	if a, r := b.InFlight(); a != 0 || r != 0 {
		t.Errorf("after repeated releases: %d attempts and %d retries in flight, want 0 and 0", a, r)
	}
}

func TestNilBudgetAllowsEverything(t *testing.T) {
	var b *retry.Budget
	for range 100 {
		release, ok := b.Retry(t.Context())
		if !ok {
			t.Fatal("a nil budget denied a retry")
		}
		release()
		b.Begin(t.Context())()
	}
	var bs *retry.Budgets
	if bs.For("openai") != nil {
		t.Error("nil Budgets returned a budget")
	}
}

func TestBudgetsArePerProvider(t *testing.T) {
	bs := retry.NewBudgets(envoy)
	down := bs.For("down")
	retries(t, down)
	if bs.For("down") != down {
		t.Error("For returned a new budget for the same provider")
	}
	if _, ok := bs.For("up").Retry(t.Context()); !ok {
		t.Error("retries in flight to one provider denied another provider's retry")
	}
}

func TestBudgetConcurrentUse(t *testing.T) {
	b := retry.NewBudget(envoy)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				end := b.Begin(t.Context())
				if release, ok := b.Retry(t.Context()); ok {
					release()
				}
				end()
			}
		})
	}
	wg.Wait()
	if a, r := b.InFlight(); a != 0 || r != 0 {
		t.Errorf("after every attempt and retry ended: %d attempts and %d retries in flight, want 0 and 0", a, r)
	}
}

// TestBudgetsInheritWhatIsInFlight: after a config reload, the new
// budgets go on counting the retries in flight of the calls that started
// on the old config, with the new config's limit.
func TestBudgetsInheritWhatIsInFlight(t *testing.T) {
	old := retry.NewBudgets(envoy)
	held := retries(t, old.For("openai")) // 3 retries in flight
	reloaded := retry.NewBudgets(retry.BudgetConfig{Percent: 20, MinRetryConcurrency: 4})
	reloaded.Inherit(old)
	if got := len(retries(t, reloaded.For("openai"))); got != 1 {
		t.Errorf("after the reload %d more retries were allowed, want 1 (the new minimum, 4, less the 3 in flight)", got)
	}
	for _, release := range held {
		release()
	}
	if _, r := reloaded.For("openai").InFlight(); r != 1 {
		t.Errorf("%d retries in flight after the old calls' ended, want the one of the new config", r)
	}
	var none *retry.Budgets
	none.Inherit(old) // a budget turned off inherits nothing
	reloaded.Inherit(nil)
}
