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

// CallOutputTooLarge is the status of a call with server tools whose
// output passed maxBytes, the call's output limit, at turn: what its
// final would carry (every turn's reply and every server tool result in
// its transcript, and the last reply again as its message) would not have
// fit. RESOURCE_EXHAUSTED, reason OUTPUT_TOO_LARGE, metadata
// max_output_bytes, provider, attempts and turn, no RetryInfo.
func CallOutputTooLarge(maxBytes int64, providerName string, attempts, turn int) *Error {
	e := OutputTooLarge(maxBytes, providerName, attempts)
	e.Message = "turn " + strconv.Itoa(turn) + " of the call passed its output limit of " + strconv.FormatInt(maxBytes, 10) +
		" bytes, which with server tools bounds the whole call: every turn's reply and every tool result, and the last reply " +
		"twice (the final's message and the end of its transcript); ask for shorter replies or smaller tool results, " +
		"a higher output_limit.max_bytes, or for the call cut at the limit (output_limit.on_limit: ON_OUTPUT_LIMIT_TRUNCATE)"
	e.Metadata["turn"] = strconv.Itoa(turn)
	return e
}
