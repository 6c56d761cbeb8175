// Package retry owns llmrelay's retry decisions: which failures are worth
// another attempt (Classify), how long to wait before it (Policy.Backoff and
// the provider's retry hint), when to stop (Policy.Decide: attempts, hint
// cap, the call's deadline, the midstream rule) and how many retries a
// provider may receive while it fails (Budget, gRFC A6 retry throttling).
//
// The package is pure: it knows provider errors and context errors, but no
// gRPC. It reports neutral Class and Stop values; internal/apierr maps them
// to gRPC statuses, and internal/service drives the attempts.
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
// provider sent nothing for the stream idle timeout. Classify reports it as
// ClassStalled, which is retried.
var ErrStalled = errors.New("the provider sent nothing within the stream idle timeout")

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
	}
	return "UNSPECIFIED"
}

// Class is what kind of failure an error is. It decides the gRPC code a
// failed call ends with (see internal/apierr) and labels the provider error
// metric.
type Class uint8

// Failure classes.
const (
	// ClassUnknown: an error Classify does not recognise. Not retried.
	ClassUnknown Class = iota
	// ClassRateLimited: HTTP 429 or a rate-limit error type. Retried.
	ClassRateLimited
	// ClassOverloaded: HTTP 503 or 529, or an overloaded error type. Retried.
	ClassOverloaded
	// ClassServerError: HTTP 408, 409, 500, 502, 504 and other 5xx, or a
	// server error type. Retried.
	ClassServerError
	// ClassTransport: the connection failed, dropped or timed out, or the
	// provider's stream was malformed or truncated. Retried.
	ClassTransport
	// ClassStalled: no provider event within the stream idle timeout. Retried.
	ClassStalled
	// ClassQuotaExhausted: a 429 (or error type) saying the account's quota or
	// spend limit is used up. Not retried: waiting does not help.
	ClassQuotaExhausted
	// ClassRejected: the provider rejected the request (400, 404, 413, 422
	// and other 4xx), or answered with a redirect that was not followed
	// (3xx). Not retried.
	ClassRejected
	// ClassAuth: the provider rejected llmrelay's credentials (401, 403).
	// Not retried.
	ClassAuth
	// ClassCanceled: the client cancelled the call. Not retried.
	ClassCanceled
	// ClassDeadline: the call's deadline passed. Not retried.
	ClassDeadline
)

// String returns the class's snake_case name, used as a metric label.
func (c Class) String() string {
	switch c {
	case ClassRateLimited:
		return "rate_limited"
	case ClassOverloaded:
		return "overloaded"
	case ClassServerError:
		return "server_error"
	case ClassTransport:
		return "transport"
	case ClassStalled:
		return "stalled"
	case ClassQuotaExhausted:
		return "quota_exhausted"
	case ClassRejected:
		return "rejected"
	case ClassAuth:
		return "auth"
	case ClassCanceled:
		return "canceled"
	case ClassDeadline:
		return "deadline"
	}
	return "unknown"
}

// Transient reports whether failures of this class are worth retrying by
// nature (before any x-should-retry override).
func (c Class) Transient() bool {
	switch c {
	case ClassRateLimited, ClassOverloaded, ClassServerError, ClassTransport, ClassStalled:
		return true
	}
	return false
}

// reason is the WillRetry reason of a transient class.
func (c Class) reason() Reason {
	switch c {
	case ClassRateLimited:
		return ReasonRateLimited
	case ClassOverloaded:
		return ReasonOverloaded
	case ClassServerError:
		return ReasonServerError
	case ClassTransport:
		return ReasonTransport
	case ClassStalled:
		return ReasonStalled
	}
	return ReasonUnspecified
}

// Classification is what Classify concluded about one failed attempt.
type Classification struct {
	// Class is the kind of failure.
	Class Class
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
}

// Classify decides what a failed attempt's error means. It looks at the
// error's type and codes only, never at its text, in this order:
//
//   - ErrStalled (wrapped anywhere) is ClassStalled;
//   - a *provider.Error is classified by Kind, Status, Type and Code, and
//     its ShouldRetry (x-should-retry) overrides whether it is retried;
//   - context.Canceled is ClassCanceled, context.DeadlineExceeded
//     ClassDeadline;
//   - bare network failures (io.EOF, io.ErrUnexpectedEOF, connection
//     refused or reset, a net.Error that timed out) are ClassTransport;
//   - anything else is ClassUnknown and not retried.
//
// The caller passes the call context's cause instead of the attempt's error
// once the call's own context has ended: a provider error that merely reports
// the cancellation must not be retried.
func Classify(err error) Classification {
	if errors.Is(err, ErrStalled) {
		return transient(ClassStalled)
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return classifyProvider(pe)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Classification{Class: ClassCanceled}
	case errors.Is(err, context.DeadlineExceeded):
		return Classification{Class: ClassDeadline}
	case isNetworkFailure(err):
		return transient(ClassTransport)
	}
	return Classification{Class: ClassUnknown}
}

func transient(c Class) Classification {
	return Classification{Class: c, Retryable: true, Reason: c.reason()}
}

func classifyProvider(pe *provider.Error) Classification {
	c := Classification{Provider: pe}
	switch pe.Kind {
	case provider.KindTransport:
		c.Class = ClassTransport
	case provider.KindInStream:
		// The stream's HTTP status was 200: the error type says what
		// happened; the status the error stands for is a fallback.
		c.Class = classByType(pe.Type, pe.Code)
		if c.Class == ClassUnknown && pe.Status != 0 {
			c.Class = classByStatus(pe.Status)
		}
	default:
		c.Class = classByStatus(pe.Status)
		if c.Class == ClassRateLimited && isQuota(pe.Type, pe.Code) {
			c.Class = ClassQuotaExhausted
		}
		if pe.Status == 0 {
			c.Class = classByType(pe.Type, pe.Code)
		}
	}
	c.Retryable = c.Class.Transient()
	c.Reason = c.Class.reason()
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

// classByStatus classifies an HTTP status.
func classByStatus(status int) Class {
	switch {
	case status == 429:
		return ClassRateLimited
	case status == 503 || status == 529:
		return ClassOverloaded
	case status == 408 || status == 409 || status >= 500 && status <= 599:
		return ClassServerError
	case status == 401 || status == 403:
		return ClassAuth
	case status >= 400 && status <= 499:
		return ClassRejected
	case status >= 300 && status <= 399:
		// A redirect llmrelay did not follow: the same request gets the
		// same answer, so it is not retried.
		return ClassRejected
	}
	return ClassUnknown
}

// classByType classifies a provider's error type or status name (OpenAI and
// Anthropic error types, Gemini's google.rpc code names) and, failing that,
// its error code.
func classByType(typ, code string) Class {
	if isQuota(typ, code) {
		return ClassQuotaExhausted
	}
	for _, s := range [...]string{typ, code} {
		switch s {
		case "rate_limit_error", "rate_limit_exceeded", "RESOURCE_EXHAUSTED":
			return ClassRateLimited
		case "overloaded_error", "UNAVAILABLE":
			return ClassOverloaded
		case "api_error", "server_error", "timeout_error", "INTERNAL", "DEADLINE_EXCEEDED":
			return ClassServerError
		case "authentication_error", "permission_error", "UNAUTHENTICATED", "PERMISSION_DENIED":
			return ClassAuth
		case "invalid_request_error", "not_found_error", "request_too_large",
			"INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION":
			return ClassRejected
		}
	}
	return ClassUnknown
}

// isQuota reports whether a provider's error type or code says the account
// has no quota or spend left (OpenAI insufficient_quota and
// billing_hard_limit_reached, Anthropic billing_error).
func isQuota(typ, code string) bool {
	for _, s := range [...]string{typ, code} {
		switch s {
		case "insufficient_quota", "billing_hard_limit_reached", "billing_error":
			return true
		}
	}
	return false
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
