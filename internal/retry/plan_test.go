package retry_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// waits records the waits a plan's Run makes and returns at once.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) After(d time.Duration) <-chan time.Time {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// never is a timer whose waits never end: only the context can.
type never struct{}

func (never) After(time.Duration) <-chan time.Time { return nil }

var testTarget = provider.Target{Entry: &provider.Entry{Config: provider.Config{Name: "up"}}, Model: "m"}

func newPlan(maxAttempts, maxReasks int) *retry.Plan {
	return retry.NewPlan(retry.PlanConfig{
		Policy:    retry.Policy{MaxAttempts: maxAttempts, InitialBackoff: 100 * ms, MaxBackoff: time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute},
		Target:    testTarget,
		MaxReasks: maxReasks,
		Env:       &retry.Env{Rand: func(int64) int64 { return 0 }},
	})
}

var overloaded = &provider.Error{Kind: provider.KindHTTP, Status: 503, Class: provider.ClassOverloaded}

// refusedOutput is Groq's tool_use_failed: the model's tool call refused.
var refusedOutput = &provider.Error{Kind: provider.KindInStream, Status: 400, Type: "invalid_request_error", Code: "tool_use_failed", Class: provider.ClassInvalidOutput}

// script runs p with an attempt function that plays outcomes in order:
// "ok" succeeds, "fail" fails with an overloaded error, "reask" re-asks.
// It returns Run's result and the steps that retried.
func script(t *testing.T, ctx context.Context, p *retry.Plan, timer retry.Timer, outcomes ...string) (string, []retry.Step, error) {
	t.Helper()
	var steps []retry.Step
	res, err := retry.Run(ctx, p, timer, decideWith[string](func(n int, target provider.Target) (string, error) {
		if n != p.Attempts() || target != testTarget {
			t.Errorf("attempt %d to %v; the plan says %d to %v", n, target, p.Attempts(), testTarget)
		}
		if n > len(outcomes) {
			t.Fatalf("attempt %d beyond the script", n)
		}
		var step retry.Step
		switch outcomes[n-1] {
		case "ok":
			return "done", nil
		case "fail":
			step = p.Failed(overloaded, retry.Classify(overloaded), false)
		case "reask":
			step = p.Reask(errors.New("invalid output"))
		case "refused":
			step = p.Failed(refusedOutput, retry.Classify(refusedOutput), true)
		case "unsent":
			// The plan retries, but the caller could not tell the client.
			if step = p.Failed(overloaded, retry.Classify(overloaded), false); !step.Retry() {
				t.Fatalf("attempt %d: the plan does not retry", n)
			}
			return "", errUnsent
		}
		if step.Retry() {
			if step.Next != n+1 || step.Target != testTarget {
				t.Errorf("after attempt %d the step announces attempt %d to %v", n, step.Next, step.Target)
			}
			steps = append(steps, step)
		}
		return "", step.Continue()
	}))
	return res, steps, err
}

func TestPlanRunsUntilSuccessWithTheAnnouncedWaits(t *testing.T) {
	p, timer := newPlan(3, 0), &waits{}
	res, steps, err := script(t, t.Context(), p, timer, "fail", "fail", "ok")
	if err != nil || res != "done" || p.Attempts() != 3 {
		t.Fatalf("Run = %q, %v after %d attempts; want done after 3", res, err, p.Attempts())
	}
	// Each retrying step's delay is exactly the wait that followed it.
	var announced []time.Duration
	for _, s := range steps {
		announced = append(announced, s.Delay)
	}
	if want := []time.Duration{50 * ms, 100 * ms}; !slices.Equal(announced, want) || !slices.Equal(timer.d, want) {
		t.Errorf("steps announced %v and the waits were %v; want %v for both", announced, timer.d, want)
	}
}

func TestPlanStopsAfterMaxAttempts(t *testing.T) {
	p, timer := newPlan(3, 0), &waits{}
	_, steps, err := script(t, t.Context(), p, timer, "fail", "fail", "fail")
	var f *retry.Failure
	if !errors.As(err, &f) || f.Stop != retry.StopAttempts || f.Attempts != 3 || f.Provider != "up" {
		t.Fatalf("Run error = %v, want a Failure with StopAttempts after 3 attempts to up", err)
	}
	// A step retries only when another attempt follows: none after the last.
	if len(steps) != 2 || len(timer.d) != 2 {
		t.Errorf("%d retrying steps and %d waits, want 2 and 2", len(steps), len(timer.d))
	}
}

func TestPlanReasksComeOnTopOfMaxAttempts(t *testing.T) {
	p := newPlan(2, 2)
	if p.MaxAttempts() != 4 {
		t.Fatalf("MaxAttempts = %d, want 2 attempts and 2 re-asks", p.MaxAttempts())
	}
	_, steps, err := script(t, t.Context(), p, &waits{}, "fail", "reask", "reask", "fail")
	var f *retry.Failure
	if !errors.As(err, &f) || f.Stop != retry.StopAttempts || f.Attempts != 4 {
		t.Fatalf("Run error = %v, want StopAttempts after 4 attempts (2 failed, 2 re-asked)", err)
	}
	if len(steps) != 3 || steps[1].Delay != 0 || steps[2].Delay != 0 {
		t.Errorf("steps %+v, want 3, the re-asks without delay", steps)
	}

	p = newPlan(2, 2)
	if res, _, err := script(t, t.Context(), p, &waits{}, "reask", "reask", "fail", "ok"); err != nil || res != "done" {
		t.Errorf("two re-asks then a failure: Run = %q, %v; want the 4th attempt, a retry, to succeed", res, err)
	}
}

// TestPlanRetriesARefusedOutputOnce: the model's output refused by the
// provider (a malformed tool call) is retried, reason INVALID_OUTPUT,
// within max_attempts, but only once per call: a second one ends the call
// even with attempts left; transport failures around it are retried as
// ever.
func TestPlanRetriesARefusedOutputOnce(t *testing.T) {
	p := newPlan(3, 0)
	res, steps, err := script(t, t.Context(), p, &waits{}, "refused", "ok")
	if err != nil || res != "done" || len(steps) != 1 || steps[0].Reason != retry.ReasonInvalidOutput {
		t.Fatalf("Run = %q, %v, steps %+v; want a retry with INVALID_OUTPUT, then the answer", res, err, steps)
	}

	p = newPlan(5, 0)
	_, steps, err = script(t, t.Context(), p, &waits{}, "refused", "fail", "refused")
	var f *retry.Failure
	if !errors.As(err, &f) || f.Stop != retry.StopNotRetryable || f.Attempts != 3 || f.Class.Class != provider.ClassInvalidOutput {
		t.Fatalf("Run error = %v, want the second refused output to end the call (not retryable) after 3 attempts", err)
	}
	if len(steps) != 2 {
		t.Errorf("%d retries, want 2 (the first refusal, the overload)", len(steps))
	}
}

func TestPlanInterruptedWait(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := newPlan(3, 0)
	_, err := retry.Run(ctx, p, never{}, decideWith[string](func(int, provider.Target) (string, error) {
		step := p.Failed(overloaded, retry.Classify(overloaded), true)
		cancel() // the client goes away during the wait
		return "", step.Continue()
	}))
	var f *retry.Failure
	if !errors.As(err, &f) || f.Class.Class != provider.ClassCanceled || f.Stop != retry.StopNotRetryable || f.Attempts != 1 {
		t.Fatalf("Run error = %v, want a canceled Failure after 1 attempt", err)
	}
}

func TestPlanContextEndedBeforeTheFirstAttempt(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), -time.Second)
	defer cancel()
	_, err := retry.Run(ctx, newPlan(3, 0), nil, decideWith[string](func(int, provider.Target) (string, error) {
		t.Fatal("an attempt ran after the deadline")
		return "", nil
	}))
	var f *retry.Failure
	if !errors.As(err, &f) || f.Class.Class != provider.ClassDeadline || f.Attempts != 0 {
		t.Fatalf("Run error = %v, want a deadline Failure with no attempt", err)
	}
}

// inFlight is a budget's attempts and retries in flight at one point.
type inFlight struct{ attempts, retries int }

func TestPlanAsksTheProvidersBudget(t *testing.T) {
	budget := retry.NewBudget(retry.BudgetConfig{MinRetryConcurrency: 1})
	var asked []string
	p := retry.NewPlan(retry.PlanConfig{
		Policy: retry.Policy{MaxAttempts: 5, InitialBackoff: ms, MaxBackoff: ms, MaxRetryAfter: time.Minute},
		Target: testTarget,
		Env:    &retry.Env{Budget: func(name string) retry.Throttle { asked = append(asked, name); return budget }},
	})
	snap := func() inFlight { a, r := budget.InFlight(); return inFlight{a, r} }
	var seen []inFlight
	_, err := retry.Run(t.Context(), p, &waits{}, decideWith[string](func(n int, _ provider.Target) (string, error) {
		seen = append(seen, snap())
		if n == 2 {
			// Another call's retry takes the budget's one slot.
			if _, ok := budget.Retry(t.Context()); !ok {
				t.Error("another call's retry was denied while this call's retry was no longer waiting")
			}
		}
		step := p.Failed(overloaded, retry.Classify(overloaded), false)
		seen = append(seen, snap())
		return "", step.Continue()
	}))
	var f *retry.Failure
	if !errors.As(err, &f) || f.Stop != retry.StopBudget || f.Attempts != 2 {
		t.Fatalf("Run error = %v, want StopBudget after 2 attempts", err)
	}
	want := []inFlight{
		{1, 0}, // attempt 1 in flight
		{1, 1}, // it failed: its retry is in flight, waiting
		{1, 0}, // attempt 2 started: no longer a retry in flight
		{1, 1}, // the other call's retry fills the budget: this one is denied
	}
	if !slices.Equal(seen, want) {
		t.Errorf("in flight at each step: %v, want %v", seen, want)
	}
	if got := snap(); got != (inFlight{0, 1}) {
		t.Errorf("after the call: %v in flight, want only the other call's retry", got)
	}
	if slices.ContainsFunc(asked, func(n string) bool { return n != "up" }) || len(asked) == 0 {
		t.Errorf("budgets asked for %v, want the target's provider, up", asked)
	}
}

// TestPlanReleasesItsRetries: a call's retries leave the budget when their
// attempts start, or when the call ends during a wait.
func TestPlanReleasesItsRetries(t *testing.T) {
	budget := retry.NewBudget(retry.BudgetConfig{MinRetryConcurrency: 1})
	cfg := retry.PlanConfig{
		Policy: retry.Policy{MaxAttempts: 3, InitialBackoff: ms, MaxBackoff: ms, MaxRetryAfter: time.Minute},
		Target: testTarget,
		Env:    &retry.Env{Budget: func(string) retry.Throttle { return budget }},
	}
	p := retry.NewPlan(cfg)
	if _, _, err := script(t, t.Context(), p, &waits{}, "fail", "fail", "fail"); err == nil {
		t.Fatal("three failures succeeded")
	}
	if p.Attempts() != 3 {
		t.Errorf("%d attempts, want 3: each retry's slot must be free again once its attempt started", p.Attempts())
	}

	ctx, cancel := context.WithCancel(t.Context())
	p = retry.NewPlan(cfg)
	_, _ = retry.Run(ctx, p, never{}, decideWith[string](func(int, provider.Target) (string, error) {
		step := p.Failed(overloaded, retry.Classify(overloaded), false)
		cancel()
		return "", step.Continue()
	}))
	if a, r := budget.InFlight(); a != 0 || r != 0 {
		t.Errorf("after a call cancelled in its wait: %d attempts and %d retries in flight, want none", a, r)
	}
}

// TestPlanCallerCausedFailuresSpendNoBudget: a stall under the caller's own
// stricter idle timeout is retried without asking the provider's budget.
func TestPlanCallerCausedFailuresSpendNoBudget(t *testing.T) {
	budget := retry.NewBudget(retry.BudgetConfig{}) // denies every retry
	cfg := retry.PlanConfig{
		Policy: retry.Policy{MaxAttempts: 3, InitialBackoff: ms, MaxBackoff: ms, MaxRetryAfter: time.Minute},
		Target: testTarget,
		Env:    &retry.Env{Budget: func(string) retry.Throttle { return budget }},
	}
	p := retry.NewPlan(cfg)
	own := &retry.StallError{Timeout: 100 * ms, CallerSet: true}
	res, err := retry.Run(t.Context(), p, &waits{}, decideWith[string](func(n int, _ provider.Target) (string, error) {
		if n == 2 {
			return "done", nil
		}
		return "", p.Failed(own, retry.Classify(own), false).Continue()
	}))
	if err != nil || res != "done" {
		t.Fatalf("Run = %q, %v; want the retry of a caller-caused stall to succeed", res, err)
	}

	p = retry.NewPlan(cfg)
	server := &retry.StallError{Timeout: 30 * time.Second}
	_, err = retry.Run(t.Context(), p, &waits{}, decideWith[string](func(int, provider.Target) (string, error) {
		return "", p.Failed(server, retry.Classify(server), false).Continue()
	}))
	var f *retry.Failure
	if !errors.As(err, &f) || f.Stop != retry.StopBudget {
		t.Errorf("a stall under the server's idle timeout: Run error = %v, want StopBudget", err)
	}
}

var errUnsent = errors.New("the will_retry event could not be sent")

// TestPlanEndsWithTheCallersOwnError: an attempt function that ends the
// call with its own error where the plan would retry (its will_retry
// event could not be sent) ends it with that error, in the first round or
// a later one, not with an overrun.
func TestPlanEndsWithTheCallersOwnError(t *testing.T) {
	for _, outcomes := range [][]string{{"unsent"}, {"fail", "unsent"}, {"fail", "fail", "unsent"}} {
		p := newPlan(5, 0)
		_, _, err := script(t, t.Context(), p, &waits{}, outcomes...)
		if !errors.Is(err, errUnsent) || p.Attempts() != len(outcomes) {
			t.Errorf("%v: Run error = %v after %d attempts; want the caller's own error after %d", outcomes, err, p.Attempts(), len(outcomes))
		}
	}
}

// TestPlanOverrunIsAFailure: a plan that retries past its own bound (here
// a re-ask the plan was not told to allow) ends the call with a Failure
// rather than a retry that never runs.
func TestPlanOverrunIsAFailure(t *testing.T) {
	p := newPlan(1, 0)
	_, _, err := script(t, t.Context(), p, &waits{}, "reask")
	var f *retry.Failure
	if !errors.As(err, &f) || f.Stop != retry.StopAttempts || f.Attempts != 1 || f.Err == nil {
		t.Fatalf("Run error = %v, want a Failure naming the overrun", err)
	}
}

// decideWith adapts a decision function, which the attempt functions of
// plans without hedging were, to an Attempter: Attempt produces nothing,
// and Settle decides with the function.
type decideWith[T any] func(n int, t provider.Target) (T, error)

func (f decideWith[T]) Attempt(context.Context, *retry.Attempt) (T, error) {
	var zero T
	return zero, nil
}

func (f decideWith[T]) Settle(a *retry.Attempt, _ T, _ error) (T, error) { return f(a.N, a.Target) }
