// Package retry owns llmrelay's retry policy: whether a failure is worth
// another attempt (Classify reads the class the adapter gave a provider
// error, and classifies stalls, context and network errors itself), how
// long to wait before it (Policy.Backoff and the provider's retry hint),
// when to stop (Policy.Decide: attempts, hint cap, the call's deadline, the
// midstream rule), how many retries may be in flight to a provider at once
// (Throttle, implemented in process by Budget: Envoy's retry budget), and
// the attempt plan of one call that ties them together (Plan, executed by
// retry-go).
//
// The package is pure: it knows provider errors and context errors, but no
// gRPC. It reports neutral provider.Class and Stop values; internal/apierr
// maps them to gRPC statuses, and internal/service runs the attempts.
package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// ErrStalled is the cause an attempt's context is cancelled with when the
// provider showed no sign of life in time: nothing before its first event
// timeout, or nothing for its stream idle timeout once streaming. Classify
// reports it as ClassStalled, which is retried.
var ErrStalled = errors.New("the provider showed no sign of life within the attempt's timeout")

// The stall timeouts a StallError names, by their request fields.
const (
	SettingFirstEvent = "first_event_timeout"
	SettingStreamIdle = "stream_idle_timeout"
)

// StallError is the error of an attempt abandoned because the provider
// showed no sign of life for one of its stall timeouts. It matches
// ErrStalled.
type StallError struct {
	// Setting names the timeout that passed: SettingFirstEvent (nothing
	// before the first sign of life) or SettingStreamIdle (silence once it
	// streamed).
	Setting string
	// Timeout is that timeout's value.
	Timeout time.Duration
	// CallerSet says the timeout was the caller's own choice, stricter
	// than the one the server would have used: the caller caused the stall
	// as much as the provider did, so its retry does not spend the
	// provider's retry budget (Classification.CallerCaused).
	CallerSet bool
}

// Error implements error.
func (e *StallError) Error() string {
	if e.Setting == SettingFirstEvent {
		return "nothing from the provider within first_event_timeout (" + e.Timeout.String() + "): " + ErrStalled.Error()
	}
	return "no sign of life from the provider for stream_idle_timeout (" + e.Timeout.String() + "): " + ErrStalled.Error()
}

// Is makes errors.Is(err, ErrStalled) true.
func (e *StallError) Is(target error) bool { return target == ErrStalled }

// Reason says why an attempt failed, as a WillRetry event reports it. The
// values mirror the proto enum llmrelay.v1.RetryReason number for number.
type Reason int32

// Retry reasons.
const (
	ReasonUnspecified   Reason = 0
	ReasonRateLimited   Reason = 1
	ReasonOverloaded    Reason = 2
	ReasonServerError   Reason = 3
	ReasonTransport     Reason = 4
	ReasonStalled       Reason = 5
	ReasonInvalidOutput Reason = 6
	// ReasonTargetRefused: the target cannot serve the call, and retrying
	// it will not change that (a spent quota, an unknown model, refused
	// credentials); only a move to another target follows it.
	ReasonTargetRefused Reason = 9
)

// String returns the reason's name without the proto prefix, e.g.
// "RATE_LIMITED", as logs and metrics label it.
func (r Reason) String() string {
	switch r {
	case ReasonRateLimited:
		return "RATE_LIMITED"
	case ReasonOverloaded:
		return "OVERLOADED"
	case ReasonServerError:
		return "SERVER_ERROR"
	case ReasonTransport:
		return "TRANSPORT"
	case ReasonStalled:
		return "STALLED"
	case ReasonInvalidOutput:
		return "INVALID_OUTPUT"
	case ReasonTargetRefused:
		return "TARGET_REFUSED"
	}
	return "UNSPECIFIED"
}

// reasonOf is the WillRetry reason of a class that is retried.
func reasonOf(c provider.Class) Reason {
	switch c {
	case provider.ClassRateLimited:
		return ReasonRateLimited
	case provider.ClassOverloaded:
		return ReasonOverloaded
	case provider.ClassServerError:
		return ReasonServerError
	case provider.ClassTransport:
		return ReasonTransport
	case provider.ClassStalled:
		return ReasonStalled
	case provider.ClassInvalidOutput:
		return ReasonInvalidOutput
	}
	return ReasonUnspecified
}

// Classification is what Classify concluded about one failed attempt.
type Classification struct {
	// Class is the kind of failure.
	Class provider.Class
	// Retryable says whether another attempt may help: the class is
	// transient, unless the provider said otherwise with x-should-retry.
	Retryable bool
	// Reason is the WillRetry reason when Retryable. A non-transient error
	// the provider asked to retry (x-should-retry: true) is SERVER_ERROR,
	// or RATE_LIMITED for a 429.
	Reason Reason
	// Hint is the provider's retry hint (retry-after-ms, retry-after,
	// google.rpc.RetryInfo), valid when HasHint.
	Hint    time.Duration
	HasHint bool
	// Provider is the provider's error, when the failure was one.
	Provider *provider.Error
	// CallerCaused says the caller's own settings caused the failure (a
	// stall under a stream idle or first event timeout stricter than the
	// server's): it is retried under the call's policy, but its retry does
	// not spend the provider's retry budget, so that one caller's
	// pathological settings cannot deny every other caller's retries.
	CallerCaused bool
}

// FallsBack reports whether another target may serve the call: the
// failure is the target's (TargetFailed), or the request outgrew the
// model's context window (another target's model may have a larger one).
// Other failures of the request (rejected as invalid or refused by a
// content policy), unrecognised errors, the call's own end (cancelled,
// out of time) and failures the caller caused (a stall under its own
// stricter idle timeout) do not fall back.
func (c Classification) FallsBack() bool {
	return c.TargetFailed() || c.Class == provider.ClassContextLength
}

// TargetFailed reports whether the failure is the target's rather than the
// request's, and counts against its health: the provider is rate-limited,
// out of quota, overloaded or failing, unreachable or stalled, sends a
// stream that does not decode, does not know the model, or refused
// llmrelay's credentials. A failure the caller caused (a stall under its
// own stricter idle timeout) never is.
func (c Classification) TargetFailed() bool {
	if c.CallerCaused {
		return false
	}
	switch c.Class {
	case provider.ClassRateLimited, provider.ClassQuotaExhausted, provider.ClassOverloaded,
		provider.ClassServerError, provider.ClassTransport, provider.ClassStalled,
		provider.ClassNotFound, provider.ClassAuth, provider.ClassProtocol:
		return true
	}
	return false
}

// Classify decides what a failed attempt's error means. It looks at the
// error's type and codes only, never at its text, in this order:
//
//   - ErrStalled (wrapped anywhere) is ClassStalled, CallerCaused when a
//     *StallError says the timeout was the caller's own;
//   - a *provider.Error has the class its adapter gave it (FailureClass),
//     and its ShouldRetry (x-should-retry) overrides whether it is retried;
//   - context.Canceled is ClassCanceled, context.DeadlineExceeded
//     ClassDeadline;
//   - bare network failures (io.EOF, io.ErrUnexpectedEOF, connection
//     refused or reset, a net.Error that timed out) are ClassTransport;
//   - anything else is ClassUnknown and not retried.
//
// Which provider error is which class is each adapter's decision (its
// error table), not this package's. The caller passes the call context's
// cause instead of the attempt's error once the call's own context has
// ended: a provider error that merely reports the cancellation must not be
// retried.
func Classify(err error) Classification {
	if errors.Is(err, ErrStalled) {
		c := transient(provider.ClassStalled)
		var se *StallError
		c.CallerCaused = errors.As(err, &se) && se.CallerSet
		return c
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return classifyProvider(pe)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Classification{Class: provider.ClassCanceled}
	case errors.Is(err, context.DeadlineExceeded):
		return Classification{Class: provider.ClassDeadline}
	case isNetworkFailure(err):
		return transient(provider.ClassTransport)
	}
	return Classification{Class: provider.ClassUnknown}
}

func transient(c provider.Class) Classification {
	return Classification{Class: c, Retryable: true, Reason: reasonOf(c)}
}

func classifyProvider(pe *provider.Error) Classification {
	c := Classification{Provider: pe, Class: pe.FailureClass()}
	// The model's refused output is retried too, once per call (Plan.Failed).
	c.Retryable = c.Class.Transient() || c.Class == provider.ClassInvalidOutput
	c.Reason = reasonOf(c.Class)
	if pe.ShouldRetry != nil {
		c.Retryable = *pe.ShouldRetry
		if c.Retryable && c.Reason == ReasonUnspecified {
			c.Reason = ReasonServerError
			if pe.Status == 429 {
				c.Reason = ReasonRateLimited
			}
		}
	}
	if pe.HasRetryAfter && pe.RetryAfter >= 0 {
		c.Hint, c.HasHint = pe.RetryAfter, true
	}
	return c
}

// isNetworkFailure reports a connection-level failure that reached Classify
// without an adapter wrapping it in a *provider.Error.
func isNetworkFailure(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
