package interceptors

import (
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/protoadapt"

	"github.com/llmrelay/llmrelay/internal/apierr"
)

// ErrorInfo reasons of the errors the chain returns, in addition to
// apierr's. Stable: clients switch on them.
const (
	// UNAUTHENTICATED: no authorization header.
	ReasonCredentialsMissing = "CREDENTIALS_MISSING"
	// UNAUTHENTICATED: the header is not one "Bearer <key>".
	ReasonCredentialsMalformed = "CREDENTIALS_MALFORMED"
	// UNAUTHENTICATED: the key matches no configured key.
	ReasonAPIKeyUnknown = "API_KEY_UNKNOWN"
	// PERMISSION_DENIED: the key lacks the method's scope.
	ReasonScopeMissing = "SCOPE_MISSING"
	// PERMISSION_DENIED: the key may not use the request's model.
	ReasonModelNotAllowed = "MODEL_NOT_ALLOWED"
	// RESOURCE_EXHAUSTED: the request is larger than limits.max_request_bytes.
	ReasonRequestTooLarge = "REQUEST_TOO_LARGE"
	// RESOURCE_EXHAUSTED, with RetryInfo: the key's rate limit.
	ReasonRateLimited = "RATE_LIMITED"
	// RESOURCE_EXHAUSTED: the key's max_concurrent_streams.
	ReasonTooManyStreams = "TOO_MANY_STREAMS"
	// UNAVAILABLE, with RetryInfo: the provider's max_concurrent and queue.
	ReasonProviderBusy = "PROVIDER_BUSY"
	// UNAVAILABLE, with RetryInfo: the shared state store (Redis) that
	// holds the key's limits is unreachable and state.on_store_failure is
	// fail_closed.
	ReasonStateStoreUnavailable = apierr.ReasonStateStoreUnavailable

	// Shared with the rest of llmrelay.
	ReasonInvalidRequest = apierr.ReasonInvalidRequest
	ReasonCancelled      = apierr.ReasonCancelled
	ReasonInternal       = apierr.ReasonInternal
)

// statusError builds the chain's errors through apierr: an ErrorInfo always,
// a RetryInfo when retryAfter > 0, then the extra details. The chain's
// refusals with a RetryInfo (a key's rate, a busy provider) are served by
// calling again after it: apierr.Pushback tells a client's retry policy so.
func statusError(code codes.Code, reason, msg string, meta map[string]string, retryAfter time.Duration, extra ...protoadapt.MessageV1) error {
	return &apierr.Error{Kind: apierr.Kind(code), Reason: reason, Message: msg, Metadata: meta, RetryAfter: retryAfter, CallAgain: retryAfter > 0, Extra: extra}
}
