package apierr

import (
	"strconv"
)

// ReasonOutputTooLarge is the ErrorInfo reason of a call whose reply passed
// its output limit (output_limit.max_bytes) without asking for truncation.
const ReasonOutputTooLarge = "OUTPUT_TOO_LARGE"

// OutputTooLarge is the status of a call whose attempt's output passed
// maxBytes: RESOURCE_EXHAUSTED (as gRPC's own refusal of an oversized
// message), reason OUTPUT_TOO_LARGE, metadata max_output_bytes, provider
// and attempts, and no RetryInfo: the reply would be as long again.
func OutputTooLarge(maxBytes int64, providerName string, attempts int) *Error {
	return &Error{
		Kind:   ResourceExhausted,
		Reason: ReasonOutputTooLarge,
		Message: "the reply of provider " + strconv.Quote(providerName) + " passed the output limit of " +
			strconv.FormatInt(maxBytes, 10) + " bytes and was stopped at the provider; ask for a shorter reply " +
			"(generation.max_output_tokens), or for the reply cut at the limit (output_limit.on_limit: ON_OUTPUT_LIMIT_TRUNCATE)",
		Metadata: map[string]string{
			"max_output_bytes": strconv.FormatInt(maxBytes, 10),
			"provider":         providerName,
			"attempts":         strconv.Itoa(attempts),
		},
	}
}
