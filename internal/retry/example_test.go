package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/retry/retrytest"
)

// flaky is an Attempter (the call's side of its attempts) whose provider
// is overloaded for the first two attempts.
type flaky struct{ plan *retry.Plan }

// Attempt runs one attempt: it would stream from a.Target's provider,
// calling a.Commit before the client sees anything.
func (f flaky) Attempt(_ context.Context, a *retry.Attempt) (string, error) {
	if a.N <= 2 {
		return "", &provider.Error{Kind: provider.KindHTTP, Status: 529, Class: provider.ClassOverloaded}
	}
	if !a.Commit() {
		return "", errors.New("another attempt answered first")
	}
	return fmt.Sprintf("answered by attempt %d", a.N), nil
}

// Settle decides, on Run's goroutine, what follows an attempt: the plan
// says, and a retry's Step is announced to the client (a will_retry event)
// before its Continue lets Run wait the exact delay.
func (f flaky) Settle(a *retry.Attempt, res string, err error) (string, error) {
	if !a.Decides() {
		return "", nil // a hedge that lost its race: accounted for only
	}
	if err == nil {
		f.plan.Succeeded()
		return res, nil
	}
	step := f.plan.Failed(err, retry.Classify(err), false)
	if !step.Retry() {
		return "", step.Failure
	}
	fmt.Printf("attempt %d failed (%v): retrying as attempt %d after %v\n", a.N, step.Reason, step.Next, step.Delay)
	return "", step.Continue()
}

// Run executes a call's attempt plan: the Plan numbers the attempts, says
// where each goes and decides what follows a failure; the Attempter runs
// them and announces each retry.
func ExampleRun() {
	limits := retry.Limits{DefaultMaxAttempts: 3, MaxAttemptsLimit: 10, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 8 * time.Second, MaxRetryAfter: time.Minute}
	entry := &provider.Entry{Config: provider.Config{Name: "openai", Kind: "openai"}}
	plan := retry.NewPlan(retry.PlanConfig{
		Policy: limits.Policy(retry.Request{}),
		Target: provider.Target{Entry: entry, Model: "gpt-4o"},
		Env:    &retry.Env{Rand: func(n int64) int64 { return n - 1 }}, // no jitter, for the example
	})
	res, err := retry.Run(context.Background(), plan, retrytest.Instant{}, flaky{plan: plan})
	fmt.Println(res, err)
	// Output:
	// attempt 1 failed (OVERLOADED): retrying as attempt 2 after 500ms
	// attempt 2 failed (OVERLOADED): retrying as attempt 3 after 1s
	// answered by attempt 3 <nil>
}
