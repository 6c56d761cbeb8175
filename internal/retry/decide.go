package retry

import (
	"time"
)

// Stop says why a call stops retrying. StopNone means it retries.
type Stop uint8

// Reasons to stop.
const (
	// StopNone: retry after Decision.Delay.
	StopNone Stop = iota
	// StopNotRetryable: the failure is not worth retrying (by class, or the
	// provider said x-should-retry: false).
	StopNotRetryable
	// StopMidstream: the attempt had streamed output and the policy is
	// MidstreamFail.
	StopMidstream
	// StopAttempts: the call used its MaxAttempts.
	StopAttempts
	// StopHintTooLong: the provider's retry hint exceeds MaxRetryAfter.
	StopHintTooLong
	// StopHintPastDeadline: waiting for the provider's retry hint would
	// cross the call's deadline.
	StopHintPastDeadline
	// StopBackoffPastDeadline: waiting the backoff would cross the call's
	// deadline.
	StopBackoffPastDeadline
	// StopBudget: the provider's retry budget denies the retry: too many
	// retries to the provider are in flight already.
	StopBudget
)

// String returns the stop's snake_case name, for logs.
func (s Stop) String() string {
	switch s {
	case StopNone:
		return "none"
	case StopNotRetryable:
		return "not_retryable"
	case StopMidstream:
		return "midstream"
	case StopAttempts:
		return "attempts_exhausted"
	case StopHintTooLong:
		return "hint_too_long"
	case StopHintPastDeadline:
		return "hint_past_deadline"
	case StopBackoffPastDeadline:
		return "backoff_past_deadline"
	case StopBudget:
		return "budget_exhausted"
	}
	return "unknown"
}

// FailedAttempt describes one failed attempt for Policy.Decide.
type FailedAttempt struct {
	// N is the attempt's number, from 1.
	N int
	// Class is Classify's verdict on the attempt's error.
	Class Classification
	// Streamed says whether the attempt had sent output to the client.
	Streamed bool
	// Now is the current time and Deadline the call's deadline (zero: none).
	Now      time.Time
	Deadline time.Time
}

// Decision is what to do after a failed attempt.
type Decision struct {
	// Stop is why the call ends now; StopNone means retry.
	Stop Stop
	// Delay is the exact wait before the next attempt (when retrying), or the
	// provider's hint (when stopping because of it).
	Delay time.Duration
	// FromHint says Delay is the provider's retry hint, not the backoff.
	FromHint bool
}

// Retry reports whether the decision is to retry.
func (d Decision) Retry() bool { return d.Stop == StopNone }

// Decide says whether to retry after a failed attempt, and after how long.
// In order: a failure that is not retryable stops; a failure after output
// stops under MidstreamFail; the last attempt stops; a provider hint replaces
// the backoff, and stops the call at once when it exceeds MaxRetryAfter; a
// wait that would reach the deadline stops. The provider's retry budget is
// not the policy's: the plan asks it after a decision to retry (Plan.Failed).
func (p Policy) Decide(a FailedAttempt, rnd Rand) Decision {
	if !a.Class.Retryable {
		return Decision{Stop: StopNotRetryable}
	}
	if a.Streamed && p.Midstream == MidstreamFail {
		return Decision{Stop: StopMidstream}
	}
	if a.N >= p.MaxAttempts {
		return Decision{Stop: StopAttempts}
	}
	d := Decision{Delay: p.Backoff(a.N, rnd)}
	if a.Class.HasHint {
		d = Decision{Delay: a.Class.Hint, FromHint: true}
		if d.Delay > p.MaxRetryAfter {
			d.Stop = StopHintTooLong
			return d
		}
	}
	if !a.Deadline.IsZero() && !a.Now.Add(d.Delay).Before(a.Deadline) {
		d.Stop = StopBackoffPastDeadline
		if d.FromHint {
			d.Stop = StopHintPastDeadline
		}
	}
	return d
}
