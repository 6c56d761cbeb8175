package retry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

func target(name string) provider.Target {
	return provider.Target{Entry: &provider.Entry{Config: provider.Config{Name: name}}, Model: "m"}
}

// healthLog records what a plan tells the targets' health.
type healthLog []string

func (h *healthLog) Succeeded(t provider.Target) { *h = append(*h, "ok "+t.Entry.Config.Name) }
func (h *healthLog) Failed(t provider.Target)    { *h = append(*h, "fail "+t.Entry.Config.Name) }

// outcome is one scripted attempt of a fallback plan.
type outcome struct {
	err      error // nil: the attempt succeeds
	streamed bool
}

var (
	quota    = &provider.Error{Kind: provider.KindHTTP, Status: 429, Type: "insufficient_quota", Class: provider.ClassQuotaExhausted}
	rejected = &provider.Error{Kind: provider.KindHTTP, Status: 400, Class: provider.ClassRejected}
	notFound = &provider.Error{Kind: provider.KindHTTP, Status: 404, Class: provider.ClassNotFound}
	tooLong  = &provider.Error{Kind: provider.KindHTTP, Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Class: provider.ClassContextLength}
	noAuth   = &provider.Error{Kind: provider.KindHTTP, Status: 401, Class: provider.ClassAuth}
	garbled  = &provider.Error{Kind: provider.KindProtocol, Class: provider.ClassProtocol}
	unknown  = &provider.Error{Kind: provider.KindInStream, Type: "weird"}
	dropped  = &provider.Error{Kind: provider.KindTransport, Class: provider.ClassTransport}
	noRetry  = func() *provider.Error {
		f := false
		return &provider.Error{Kind: provider.KindHTTP, Status: 503, Class: provider.ClassOverloaded, ShouldRetry: &f}
	}()
)

// runFallback runs a plan over targets a, b and c with the scripted
// outcomes and returns the attempts as "n→target", each retrying step as
// "[fallback ]next→target reason delay", and what health heard.
func runFallback(t *testing.T, policy retry.Policy, budget retry.Throttle, outcomes ...outcome) (trace []string, health healthLog, err error) {
	t.Helper()
	p := retry.NewPlan(retry.PlanConfig{
		Policy:    policy,
		Target:    target("a"),
		Fallbacks: []provider.Target{target("b"), target("c")},
		Env:       &retry.Env{Health: &health, Budget: func(string) retry.Throttle { return budget }, Rand: func(int64) int64 { return 0 }},
	})
	_, err = retry.Run(t.Context(), p, &waits{}, decideWith[string](func(n int, tg provider.Target) (string, error) {
		trace = append(trace, fmt.Sprintf("%d→%s", n, tg.Entry.Config.Name))
		if n > len(outcomes) {
			t.Fatalf("attempt %d beyond the script", n)
		}
		o := outcomes[n-1]
		if o.err == nil {
			p.Succeeded()
			return "done", nil
		}
		step := p.Failed(o.err, retry.Classify(o.err), o.streamed)
		if step.Retry() {
			s := fmt.Sprintf("%d→%s %s %v", step.Next, step.Target.Entry.Config.Name, step.Reason, step.Delay)
			if step.Fallback {
				s = "fallback " + s
			}
			trace = append(trace, s)
		}
		return "", step.Continue()
	}))
	return trace, health, err
}

func TestPlanFallsBackToTheNextTarget(t *testing.T) {
	two := retry.Policy{MaxAttempts: 2, InitialBackoff: 100 * ms, MaxBackoff: time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}
	one := two
	one.MaxAttempts = 1
	failFast := two
	failFast.Midstream = retry.MidstreamFail
	tests := []struct {
		name       string
		policy     retry.Policy
		budget     retry.Throttle
		outcomes   []outcome
		want       []string
		wantHealth string
		wantStop   retry.Stop // for a call that fails; StopNone when it succeeds
		wantLast   string     // the failing call's provider
	}{
		{
			name:       "a target's attempts exhausted, then the next",
			policy:     two,
			outcomes:   []outcome{{err: overloaded}, {err: overloaded}, {}},
			want:       []string{"1→a", "2→a OVERLOADED 50ms", "2→a", "fallback 3→b OVERLOADED 0s", "3→b"},
			wantHealth: "fail a, fail a, ok b",
		},
		{
			name:       "a spent quota moves on at once",
			policy:     two,
			outcomes:   []outcome{{err: quota}, {}},
			want:       []string{"1→a", "fallback 2→b TARGET_REFUSED 0s", "2→b"},
			wantHealth: "fail a, ok b",
		},
		{
			name:       "an unknown model moves on at once",
			policy:     two,
			outcomes:   []outcome{{err: notFound}, {}},
			want:       []string{"1→a", "fallback 2→b TARGET_REFUSED 0s", "2→b"},
			wantHealth: "fail a, ok b",
		},
		{
			name:       "a stream that does not decode is not retried, but moves on at once",
			policy:     two,
			outcomes:   []outcome{{err: garbled}, {}},
			want:       []string{"1→a", "fallback 2→b TARGET_REFUSED 0s", "2→b"},
			wantHealth: "fail a, ok b",
		},
		{
			name:       "refused credentials move on at once",
			policy:     two,
			outcomes:   []outcome{{err: noAuth}, {}},
			want:       []string{"1→a", "fallback 2→b TARGET_REFUSED 0s", "2→b"},
			wantHealth: "fail a, ok b",
		},
		{
			name:       "x-should-retry: false moves on at once",
			policy:     two,
			outcomes:   []outcome{{err: noRetry}, {}},
			want:       []string{"1→a", "fallback 2→b OVERLOADED 0s", "2→b"},
			wantHealth: "fail a, ok b",
		},
		{
			name:       "a mid-stream failure under MIDSTREAM_RESTART falls back",
			policy:     one,
			outcomes:   []outcome{{err: dropped, streamed: true}, {}},
			want:       []string{"1→a", "fallback 2→b TRANSPORT 0s", "2→b"},
			wantHealth: "fail a, ok b",
		},
		{
			name:       "a mid-stream failure under MIDSTREAM_FAIL ends the call",
			policy:     failFast,
			outcomes:   []outcome{{err: dropped, streamed: true}},
			want:       []string{"1→a"},
			wantHealth: "fail a",
			wantStop:   retry.StopMidstream,
			wantLast:   "a",
		},
		{
			name:       "even one that retrying could not fix",
			policy:     failFast,
			outcomes:   []outcome{{err: quota, streamed: true}},
			want:       []string{"1→a"},
			wantHealth: "fail a",
			wantStop:   retry.StopNotRetryable,
			wantLast:   "a",
		},
		{
			name:       "a request longer than the context window moves on at once, counting against no target",
			policy:     two,
			outcomes:   []outcome{{err: tooLong}, {}},
			want:       []string{"1→a", "fallback 2→b TARGET_REFUSED 0s", "2→b"},
			wantHealth: "ok b",
		},
		{
			name:       "too long for every target: the last one's failure ends the call",
			policy:     two,
			outcomes:   []outcome{{err: tooLong}, {err: tooLong}, {err: tooLong}},
			want:       []string{"1→a", "fallback 2→b TARGET_REFUSED 0s", "2→b", "fallback 3→c TARGET_REFUSED 0s", "3→c"},
			wantHealth: "",
			wantStop:   retry.StopNotRetryable,
			wantLast:   "c",
		},
		{
			name:       "a rejected request does not fall back",
			policy:     two,
			outcomes:   []outcome{{err: rejected}},
			want:       []string{"1→a"},
			wantHealth: "",
			wantStop:   retry.StopNotRetryable,
			wantLast:   "a",
		},
		{
			name:       "an unrecognised error does not fall back",
			policy:     two,
			outcomes:   []outcome{{err: unknown}},
			want:       []string{"1→a"},
			wantHealth: "",
			wantStop:   retry.StopNotRetryable,
			wantLast:   "a",
		},
		{
			name:       "a spent retry budget moves on",
			policy:     two,
			budget:     retry.NewBudget(retry.BudgetConfig{}), // denies every retry
			outcomes:   []outcome{{err: overloaded}, {err: overloaded}, {}},
			want:       []string{"1→a", "fallback 2→b OVERLOADED 0s", "2→b", "fallback 3→c OVERLOADED 0s", "3→c"},
			wantHealth: "fail a, fail b, ok c",
		},
		{
			name:       "a stall the caller caused neither falls back nor counts against the target",
			policy:     one,
			outcomes:   []outcome{{err: &retry.StallError{Timeout: 100 * ms, CallerSet: true}}},
			want:       []string{"1→a"},
			wantHealth: "",
			wantStop:   retry.StopAttempts,
			wantLast:   "a",
		},
		{
			name:       "every target exhausted: the last failure ends the call",
			policy:     one,
			outcomes:   []outcome{{err: overloaded}, {err: quota}, {err: dropped}},
			want:       []string{"1→a", "fallback 2→b OVERLOADED 0s", "2→b", "fallback 3→c TARGET_REFUSED 0s", "3→c"},
			wantHealth: "fail a, fail b, fail c",
			wantStop:   retry.StopAttempts,
			wantLast:   "c",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace, health, err := runFallback(t, tt.policy, tt.budget, tt.outcomes...)
			if got := strings.Join(trace, " | "); got != strings.Join(tt.want, " | ") {
				t.Errorf("trace\n  %s\nwant\n  %s", got, strings.Join(tt.want, " | "))
			}
			if got := strings.Join(health, ", "); got != tt.wantHealth {
				t.Errorf("health heard %q, want %q", got, tt.wantHealth)
			}
			var f *retry.Failure
			switch {
			case tt.wantStop == retry.StopNone && err != nil:
				t.Errorf("Run error %v, want success", err)
			case tt.wantStop != retry.StopNone && (!errors.As(err, &f) || f.Stop != tt.wantStop || f.Provider != tt.wantLast):
				t.Errorf("Run error %v, want a Failure at %s stopping with %v", err, tt.wantLast, tt.wantStop)
			}
		})
	}
}

func TestPlanMaxAttemptsCoversEveryTarget(t *testing.T) {
	p := retry.NewPlan(retry.PlanConfig{
		Policy:    retry.Policy{MaxAttempts: 3},
		Target:    target("a"),
		Fallbacks: []provider.Target{target("b")},
		MaxReasks: 2,
	})
	if got := p.MaxAttempts(); got != 8 {
		t.Errorf("MaxAttempts = %d, want 3 per target and 2 re-asks", got)
	}
}

// TestPlanReasksStayOnTheTarget: a re-ask does not count against the
// target's attempts, and goes to the same target.
func TestPlanReasksStayOnTheTarget(t *testing.T) {
	p := retry.NewPlan(retry.PlanConfig{
		Policy:    retry.Policy{MaxAttempts: 1, MaxRetryAfter: time.Minute},
		Target:    target("a"),
		Fallbacks: []provider.Target{target("b")},
		MaxReasks: 1,
	})
	var trace []string
	_, err := retry.Run(t.Context(), p, &waits{}, decideWith[string](func(n int, tg provider.Target) (string, error) {
		trace = append(trace, fmt.Sprintf("%d→%s", n, tg.Entry.Config.Name))
		switch n {
		case 1:
			return "", p.Reask(errors.New("invalid")).Continue()
		case 2:
			return "", p.Failed(overloaded, retry.Classify(overloaded), true).Continue()
		}
		return "done", nil
	}))
	if err != nil || strings.Join(trace, " ") != "1→a 2→a 3→b" {
		t.Fatalf("trace %v, %v; want a re-ask to a, then a's one attempt, then b", trace, err)
	}
}
