package interceptors

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

// ErrorInfo reasons of the errors the chain returns, in domain "llmrelay".
const (
	ReasonCredentialsMissing   = "CREDENTIALS_MISSING"
	ReasonCredentialsMalformed = "CREDENTIALS_MALFORMED"
	ReasonAPIKeyUnknown        = "API_KEY_UNKNOWN"
	ReasonScopeMissing         = "SCOPE_MISSING"
	ReasonModelNotAllowed      = "MODEL_NOT_ALLOWED"
	ReasonInvalidRequest       = "INVALID_REQUEST"
	ReasonRequestTooLarge      = "REQUEST_TOO_LARGE"
	ReasonRateLimited          = "RATE_LIMITED"
	ReasonTooManyStreams       = "TOO_MANY_STREAMS"
	ReasonProviderBusy         = "PROVIDER_BUSY"
	ReasonCancelled            = "CANCELLED"
	ReasonInternal             = "INTERNAL"
)

// errorDomain is ErrorInfo.domain of every llmrelay error.
const errorDomain = "llmrelay"

// statusError builds the chain's gRPC errors: always an ErrorInfo, a
// RetryInfo when retryAfter > 0, then extra details.
//
// TODO(integration): switch to internal/apierr once it lands on main.
func statusError(code codes.Code, reason, msg string, meta map[string]string, retryAfter time.Duration, extra ...protoadapt.MessageV1) error {
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain, Metadata: meta}}
	if retryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)})
	}
	details = append(details, extra...)
	st := status.New(code, msg)
	withDetails, err := st.WithDetails(details...)
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}
