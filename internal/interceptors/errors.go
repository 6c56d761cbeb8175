package interceptors

import (
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
)

// ErrorInfo reasons of the errors the chain returns: the engine's
// admission's and apierr's. Stable: clients switch on them.
const (
	ReasonCredentialsMissing    = apierr.ReasonCredentialsMissing
	ReasonCredentialsMalformed  = engine.ReasonCredentialsMalformed
	ReasonAPIKeyUnknown         = engine.ReasonAPIKeyUnknown
	ReasonAuthThrottled         = engine.ReasonAuthThrottled
	ReasonScopeMissing          = engine.ReasonScopeMissing
	ReasonModelNotAllowed       = engine.ReasonModelNotAllowed
	ReasonRequestTooLarge       = engine.ReasonRequestTooLarge
	ReasonRateLimited           = engine.ReasonRateLimited
	ReasonTooManyStreams        = engine.ReasonTooManyStreams
	ReasonProviderBusy          = engine.ReasonProviderBusy
	ReasonStateStoreUnavailable = apierr.ReasonStateStoreUnavailable
	ReasonInvalidRequest        = apierr.ReasonInvalidRequest
	ReasonCancelled             = apierr.ReasonCancelled
	ReasonInternal              = apierr.ReasonInternal
)

// Labels of metrics.RateLimited, one per limit.
const (
	LimitRate          = engine.LimitRate
	LimitConcurrency   = engine.LimitConcurrency
	LimitProviderQueue = engine.LimitProviderQueue
	LimitAuthFailures  = engine.LimitAuthFailures
	LimitResumeReaders = engine.LimitResumeReaders
)
