package retry_test

import (
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
)

// TestBudgetConformance runs the retry budget conformance suite, which
// every state store's shared budget passes too, against the in-process
// Budget.
func TestBudgetConformance(t *testing.T) {
	statetest.RunRetryBudget(t, func(_ *testing.T, limit state.BudgetLimit) state.RetryBudget { return retry.NewBudget(limit) })
}

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
	if got, on := config.Default().Retry.BudgetConfig(); got != envoy || !on {
		t.Errorf("the default retry budget is %+v, want Envoy's %+v", got, envoy)
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
	statetest.TakeRetries(t, down)
	if bs.For("down") != down {
		t.Error("For returned a new budget for the same provider")
	}
	if _, ok := bs.For("up").Retry(t.Context()); !ok {
		t.Error("retries in flight to one provider denied another provider's retry")
	}
}

// TestBudgetsInheritWhatIsInFlight: after a config reload, the new
// budgets go on counting the retries in flight of the calls that started
// on the old config, with the new config's limit.
func TestBudgetsInheritWhatIsInFlight(t *testing.T) {
	old := retry.NewBudgets(envoy)
	held := statetest.TakeRetries(t, old.For("openai")) // 3 retries in flight
	reloaded := retry.NewBudgets(retry.BudgetConfig{Percent: 20, MinRetryConcurrency: 4})
	reloaded.Inherit(old)
	if got := len(statetest.TakeRetries(t, reloaded.For("openai"))); got != 1 {
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
