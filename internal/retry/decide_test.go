package retry_test

import (
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

func TestDecide(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	restart := retry.Policy{MaxAttempts: 3, InitialBackoff: 100 * ms, MaxBackoff: time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}
	fail := restart
	fail.Midstream = retry.MidstreamFail
	lowest := func(int64) int64 { return 0 }

	overloaded := retry.Classify(&provider.Error{Kind: provider.KindHTTP, Status: 503})
	rejected := retry.Classify(&provider.Error{Kind: provider.KindHTTP, Status: 400})
	hint := func(d time.Duration) retry.Classification {
		return retry.Classify(&provider.Error{Kind: provider.KindHTTP, Status: 429, RetryAfter: d, HasRetryAfter: true})
	}
	tests := []struct {
		name   string
		policy retry.Policy
		a      retry.FailedAttempt
		want   retry.Decision
	}{
		{"backoff before the first retry", restart,
			retry.FailedAttempt{N: 1, Class: overloaded, Now: now},
			retry.Decision{Delay: 50 * ms}},
		{"backoff doubles", restart,
			retry.FailedAttempt{N: 2, Class: overloaded, Now: now},
			retry.Decision{Delay: 100 * ms}},
		{"not retryable", restart,
			retry.FailedAttempt{N: 1, Class: rejected, Now: now},
			retry.Decision{Stop: retry.StopNotRetryable}},
		{"last attempt", restart,
			retry.FailedAttempt{N: 3, Class: overloaded, Now: now},
			retry.Decision{Stop: retry.StopAttempts}},
		{"midstream restart retries", restart,
			retry.FailedAttempt{N: 1, Class: overloaded, Streamed: true, Now: now},
			retry.Decision{Delay: 50 * ms}},
		{"midstream fail stops", fail,
			retry.FailedAttempt{N: 1, Class: overloaded, Streamed: true, Now: now},
			retry.Decision{Stop: retry.StopMidstream}},
		{"midstream fail retries a failure before output", fail,
			retry.FailedAttempt{N: 1, Class: overloaded, Now: now},
			retry.Decision{Delay: 50 * ms}},
		{"the hint replaces the backoff", restart,
			retry.FailedAttempt{N: 1, Class: hint(700 * ms), Now: now},
			retry.Decision{Delay: 700 * ms, FromHint: true}},
		{"a hint above max_backoff is still honoured", restart,
			retry.FailedAttempt{N: 1, Class: hint(30 * time.Second), Now: now},
			retry.Decision{Delay: 30 * time.Second, FromHint: true}},
		{"a hint above the cap stops at once", restart,
			retry.FailedAttempt{N: 1, Class: hint(2 * time.Minute), Now: now},
			retry.Decision{Stop: retry.StopHintTooLong, Delay: 2 * time.Minute, FromHint: true}},
		{"a hint past the deadline stops at once", restart,
			retry.FailedAttempt{N: 1, Class: hint(5 * time.Second), Now: now, Deadline: now.Add(time.Second)},
			retry.Decision{Stop: retry.StopHintPastDeadline, Delay: 5 * time.Second, FromHint: true}},
		{"a hint ending exactly at the deadline stops", restart,
			retry.FailedAttempt{N: 1, Class: hint(time.Second), Now: now, Deadline: now.Add(time.Second)},
			retry.Decision{Stop: retry.StopHintPastDeadline, Delay: time.Second, FromHint: true}},
		{"a backoff past the deadline stops", restart,
			retry.FailedAttempt{N: 1, Class: overloaded, Now: now, Deadline: now.Add(10 * ms)},
			retry.Decision{Stop: retry.StopBackoffPastDeadline, Delay: 50 * ms}},
		{"a backoff within the deadline retries", restart,
			retry.FailedAttempt{N: 1, Class: overloaded, Now: now, Deadline: now.Add(51 * ms)},
			retry.Decision{Delay: 50 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Decide(tt.a, lowest)
			if got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
			if got.Retry() != (tt.want.Stop == retry.StopNone) {
				t.Errorf("Retry() = %v for stop %v", got.Retry(), got.Stop)
			}
		})
	}
}
