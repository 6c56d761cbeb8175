package apierr_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// TestPushback: every failure tells a client's retry policy not to retry,
// except a call refused only because the server was busy or shutting down,
// which says how long to wait. Failed provider calls say do not retry even
// when their status is UNAVAILABLE with a RetryInfo: the server has already
// decided against another attempt.
func TestPushback(t *testing.T) {
	no := false
	shouldNot := httpErr(503, "overloaded_error")
	shouldNot.ShouldRetry = &no
	retryDisallowed := failure(withHint(shouldNot, time.Second), retry.StopNotRetryable, 1)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"max_attempts 1 (or reached)", apierr.FromFailure(failure(httpErr(503, ""), retry.StopAttempts, 1)), "-1"},
		{"x-should-retry: false", apierr.FromFailure(retryDisallowed), "-1"},
		{"retry budget exhausted", apierr.FromFailure(failure(httpErr(503, ""), retry.StopBudget, 1)), "-1"},
		{"backoff past the deadline", apierr.FromFailure(failure(httpErr(502, ""), retry.StopBackoffPastDeadline, 1)), "-1"},
		{"provider hint past the deadline, with RetryInfo", apierr.FromFailure(failure(withHint(httpErr(503, ""), 5*time.Second), retry.StopHintPastDeadline, 1)), "-1"},
		{"provider hint too long, with RetryInfo", apierr.FromFailure(failure(withHint(httpErr(503, ""), 5*time.Minute), retry.StopHintTooLong, 1)), "-1"},
		{"failed after output (midstream fail)", apierr.FromFailure(failure(httpErr(503, ""), retry.StopMidstream, 1)), "-1"},
		{"a class never retried", apierr.FromFailure(failure(httpErr(400, "invalid_request_error"), retry.StopNotRetryable, 1)), "-1"},
		{"invalid structured output", apierr.FromError(&schema.InvalidOutputError{}), "-1"},
		{"the call's deadline", apierr.FromError(context.DeadlineExceeded), "-1"},
		{"an error that is not llmrelay's", errors.New("boom"), "-1"},
		{"shutting down: call again in 1s", apierr.FromError(apierr.ErrShuttingDown), "1000"},
		{"busy: call again after the RetryInfo", &apierr.Error{Kind: apierr.Unavailable, Reason: "PROVIDER_BUSY", RetryAfter: time.Second, CallAgain: true}, "1000"},
		{"sub-millisecond waits round up", &apierr.Error{Kind: apierr.Unavailable, RetryAfter: 1500 * time.Microsecond, CallAgain: true}, "2"},
		{"call again without a wait is no pushback", &apierr.Error{Kind: apierr.Unavailable, CallAgain: true}, "-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := apierr.Pushback(tt.err); got != tt.want {
				t.Errorf("Pushback = %s, want %s", got, tt.want)
			}
		})
	}
}
