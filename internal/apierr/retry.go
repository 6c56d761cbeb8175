package apierr

import (
	"maps"
	"strconv"

	spb "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// FromFailure turns a call whose attempts failed into its status. The code
// follows what the last failure was:
//
//	rate limited, quota exhausted                 RESOURCE_EXHAUSTED
//	overloaded, server error, transport, stalled  UNAVAILABLE
//	request rejected (400, 404, 413, 422, ...)    INVALID_ARGUMENT
//	  (404: the model is unknown at the provider;
//	  longer than the context window: reason PROVIDER_CONTEXT_LENGTH_EXCEEDED)
//	credentials rejected (401, 403)               FAILED_PRECONDITION
//	a stream that does not decode (protocol)      UNKNOWN
//	deadline                                      DEADLINE_EXCEEDED
//	client cancelled                              CANCELLED
//	an unrecognised provider error                UNKNOWN
//
// and the ErrorInfo reason says why retrying stopped (RETRIES_EXHAUSTED,
// RETRY_BUDGET_EXHAUSTED, RETRY_HINT_TOO_LONG, ...) or, for a failure that
// is never retried, what it was (PROVIDER_REJECTED, ...). The metadata holds
// attempts, provider and, when known, what the last attempt's failure was:
// retry_reason (for every failure that has one, a call of one attempt
// included), provider_status, provider_error_type and transport_failure
// (see the Meta* keys). A call cut off (cancelled, past its deadline) is
// its cause's error, with the cause's own metadata (a key revoked while
// the call ran: key) and the attempts' added. A RetryInfo carries the provider's retry hint when
// the failure was transient and the provider did not forbid retrying it.
func FromFailure(f *retry.Failure) *Error {
	c := f.Class
	switch c.Class {
	case provider.ClassCanceled, provider.ClassDeadline:
		// The call's end, which may be a typed error of its own (a key
		// revoked while the call ran names the key): its metadata stays,
		// the attempts' is added, on a copy (the cause is not ours to
		// change).
		e := *FromError(f.Err)
		md := failureMetadata(f)
		maps.Copy(md, e.Metadata)
		e.Metadata = md
		return &e
	case provider.ClassUnknown:
		if c.Provider == nil {
			// Not a provider failure: a bug, reported as INTERNAL.
			return FromError(f.Err)
		}
	}
	cs := statusOf(c.Class)
	e := &Error{
		Kind:     cs.kind,
		Reason:   stopReason(f),
		Message:  "provider " + strconv.Quote(f.Provider) + " " + cs.describe(c) + describeProvider(c),
		Metadata: failureMetadata(f),
		Cause:    f,
	}
	// A protocol error with a status is about the whole response (a JSON
	// document or an HTML page instead of an event stream): its message,
	// llmrelay's own words, says which.
	said := c.Class == provider.ClassRejected || c.Class == provider.ClassNotFound || c.Class == provider.ClassInvalidOutput || c.Class == provider.ClassContextLength ||
		c.Class == provider.ClassProtocol && c.Provider != nil && c.Provider.Status != 0
	if said && c.Provider != nil && c.Provider.Message != "" {
		// Only the message the adapter parsed from the provider's error
		// format, cleaned and bounded: never a raw body.
		e.Message += ": " + provider.CleanText(c.Provider.Message, provider.MaxMessageLen)
	}
	e.Message += "; " + describeStop(f)
	if c.HasHint && c.Class.Transient() && f.Stop != retry.StopNotRetryable {
		// Waiting helps: the failure is transient and the provider said for
		// how long.
		e.RetryAfter = c.Hint
	}
	return e
}

// AttemptCause is the status a WillRetry event carries as its cause: the
// code FromFailure would give the failure, an ErrorInfo whose reason names
// the kind of failure (PROVIDER_RATE_LIMITED, PROVIDER_OVERLOADED,
// PROVIDER_SERVER_ERROR, PROVIDER_TRANSPORT_ERROR, PROVIDER_STALLED) and
// the metadata attempt, provider, retry_reason, provider_status,
// provider_error_type and transport_failure, as they apply.
func AttemptCause(c retry.Classification, providerName string, attempt int) *spb.Status {
	cs := statusOf(c.Class)
	e := &Error{
		Kind:     cs.kind,
		Reason:   cs.reason,
		Message:  "provider " + strconv.Quote(providerName) + " " + cs.describe(c) + describeProvider(c),
		Metadata: providerMetadata(c, providerName),
	}
	e.Metadata[MetaAttempt] = strconv.Itoa(attempt)
	return e.GRPCStatus().Proto()
}

// classStatus is what a failure class becomes: its gRPC code, the
// ErrorInfo reason naming it and how the public message describes it.
type classStatus struct {
	kind   Kind
	reason string
	what   string
}

var classStatuses = map[provider.Class]classStatus{
	provider.ClassRateLimited:    {ResourceExhausted, ReasonProviderRateLimited, "rate-limited the request"},
	provider.ClassQuotaExhausted: {ResourceExhausted, ReasonProviderQuotaExhausted, "reports the account's quota or spend limit exhausted"},
	provider.ClassOverloaded:     {Unavailable, ReasonProviderOverloaded, "is overloaded"},
	provider.ClassServerError:    {Unavailable, ReasonProviderServerError, "failed"},
	provider.ClassTransport:      {Unavailable, ReasonProviderTransport, "could not be reached or its stream broke"},
	provider.ClassStalled:        {Unavailable, ReasonProviderStalled, "showed no sign of life within the attempt's first event or stream idle timeout"},
	provider.ClassProtocol:       {Unknown, ReasonProviderProtocolError, "sent an answer llmrelay cannot decode"},
	provider.ClassRejected:       {InvalidArgument, ReasonProviderRejected, "rejected the request"},
	provider.ClassNotFound:       {InvalidArgument, ReasonProviderRejected, "does not know the model (or the endpoint)"},
	provider.ClassInvalidOutput:  {InvalidArgument, ReasonProviderRejected, "rejected the model's output"},
	provider.ClassContextLength:  {InvalidArgument, ReasonProviderContextLength, "found the request longer than the model's context window"},
	provider.ClassAuth:           {FailedPrecondition, ReasonProviderAuthFailed, "rejected llmrelay's credentials"},
	provider.ClassCanceled:       {Canceled, ReasonCancelled, "call was cancelled"},
	provider.ClassDeadline:       {DeadlineExceeded, ReasonDeadlineExceeded, "call ran out of time"},
}

// describe says what happened, for the public message: the class's
// words, or for a transport failure whose kind the HTTP layer could tell
// (refused, DNS, TLS, timeout, ...), that kind's.
func (cs classStatus) describe(c retry.Classification) string {
	if pe := c.Provider; pe != nil && c.Class == provider.ClassTransport && pe.Net != provider.NetUnknown {
		return pe.Net.Describe()
	}
	return cs.what
}

// statusOf returns the class's status; unknown failures are UNKNOWN.
func statusOf(c provider.Class) classStatus {
	if cs, ok := classStatuses[c]; ok {
		return cs
	}
	return classStatus{Unknown, ReasonProviderError, "returned an error llmrelay does not recognise"}
}

// stopReason is the ErrorInfo reason of a failed call: why retrying stopped,
// or what the failure was when it is never retried.
func stopReason(f *retry.Failure) string {
	switch f.Stop {
	case retry.StopAttempts:
		return ReasonRetriesExhausted
	case retry.StopBudget:
		return ReasonRetryBudgetExhausted
	case retry.StopHintTooLong:
		return ReasonRetryHintTooLong
	case retry.StopHintPastDeadline:
		return ReasonRetryHintExceedsDeadline
	case retry.StopBackoffPastDeadline:
		return ReasonRetryBackoffExceedsDeadline
	case retry.StopMidstream:
		return ReasonMidstreamFailed
	}
	if f.Class.Class.Transient() {
		// The provider said x-should-retry: false.
		return ReasonProviderRetryDisallowed
	}
	return statusOf(f.Class.Class).reason
}

// describeStop says in the public message why retrying stopped.
func describeStop(f *retry.Failure) string {
	attempts := strconv.Itoa(f.Attempts) + " attempt"
	if f.Attempts != 1 {
		attempts += "s"
	}
	switch f.Stop {
	case retry.StopAttempts:
		return "gave up after " + attempts
	case retry.StopBudget:
		return "not retried after " + attempts + ": the provider's retry budget is exhausted (too many retries to it in flight)"
	case retry.StopHintTooLong:
		return "not retried after " + attempts + ": the provider asked to wait " + f.Class.Hint.String() + ", longer than the server waits"
	case retry.StopHintPastDeadline:
		return "not retried after " + attempts + ": the provider asked to wait " + f.Class.Hint.String() + ", past the call's deadline"
	case retry.StopBackoffPastDeadline:
		return "not retried after " + attempts + ": the backoff would pass the call's deadline"
	case retry.StopMidstream:
		return "failed after output was sent, and the retry policy is MIDSTREAM_FAIL"
	}
	if f.Class.Class.Transient() {
		return "not retried: the provider said not to (x-should-retry: false)"
	}
	if f.Class.Class == provider.ClassInvalidOutput && f.Attempts > 1 {
		return "not retried again after " + attempts + ": a refused output is retried once per call"
	}
	return "not retried"
}

// describeProvider adds the provider's HTTP status and error type to a
// public message.
func describeProvider(c retry.Classification) string {
	pe := c.Provider
	if pe == nil {
		return ""
	}
	typ := provider.CleanText(pe.Type, provider.MaxTypeLen)
	if pe.Status == 0 && typ == "" {
		return ""
	}
	s := " ("
	if pe.Status != 0 {
		s += "HTTP " + strconv.Itoa(pe.Status)
		if typ != "" {
			s += ", "
		}
	}
	return s + typ + ")"
}

// ErrorInfo metadata keys of a failed provider call (FromFailure) and of
// a WillRetry cause (AttemptCause). Stable: clients read them.
const (
	// MetaProvider is the configured provider the (last) attempt went to.
	MetaProvider = "provider"
	// MetaAttempts is how many attempts the call made (FromFailure).
	MetaAttempts = "attempts"
	// MetaAttempt is the number of the attempt that failed (AttemptCause).
	MetaAttempt = "attempt"
	// MetaRetryReason is why the last attempt failed, as a RetryReason
	// without its RETRY_REASON_ prefix ("STALLED", "OVERLOADED",
	// "TRANSPORT", ...), set whenever the failure has one, however many
	// attempts the call made (one included).
	MetaRetryReason = "retry_reason"
	// MetaProviderStatus is the HTTP status of the provider's error (or
	// the status an in-stream error stands for).
	MetaProviderStatus = "provider_status"
	// MetaProviderErrorType is the provider's error type, cleaned.
	MetaProviderErrorType = "provider_error_type"
	// MetaTransportFailure is what kind of network failure a transport
	// failure was (provider.NetFailure: connection_refused, dns, tls,
	// timeout, connection_reset, stream_cut), when known.
	MetaTransportFailure = "transport_failure"
)

func failureMetadata(f *retry.Failure) map[string]string {
	md := providerMetadata(f.Class, f.Provider)
	md[MetaAttempts] = strconv.Itoa(f.Attempts)
	return md
}

// providerMetadata is the metadata that says what one failed attempt's
// failure was: the provider, the retry reason, the provider's status and
// error type, and the kind of network failure.
func providerMetadata(c retry.Classification, providerName string) map[string]string {
	md := map[string]string{MetaProvider: providerName}
	if c.Reason != retry.ReasonUnspecified {
		md[MetaRetryReason] = c.Reason.String()
	}
	if pe := c.Provider; pe != nil {
		if pe.Status != 0 {
			md[MetaProviderStatus] = strconv.Itoa(pe.Status)
		}
		if typ := provider.CleanText(pe.Type, provider.MaxTypeLen); typ != "" {
			md[MetaProviderErrorType] = typ
		}
		if pe.Net != provider.NetUnknown {
			md[MetaTransportFailure] = pe.Net.String()
		}
	}
	return md
}
