package provider

// Class is what kind of failure ended an attempt. The adapter that reports a
// provider failure decides its class from its own error table (each
// adapter's errors.go) and sets Error.Class; internal/retry classifies the
// failures that are not the provider's (a stall, the call's context, a bare
// network error) and turns a class into a retry decision, internal/apierr
// into a gRPC status, and internal/metrics labels provider errors with it.
type Class uint8

// Failure classes.
const (
	// ClassUnknown: a failure nobody recognises. Not retried.
	ClassUnknown Class = iota
	// ClassRateLimited: HTTP 429 or a rate-limit error type. Retried.
	ClassRateLimited
	// ClassOverloaded: HTTP 503 or 529, or an overloaded error type. Retried.
	ClassOverloaded
	// ClassServerError: HTTP 408, 409, 500, 502, 504 and other 5xx, or a
	// server error type. Retried.
	ClassServerError
	// ClassTransport: the connection failed, dropped or timed out, or the
	// provider's stream was cut short (mid-event, or before its
	// terminator). Retried.
	ClassTransport
	// ClassStalled: no sign of life from the provider within the first
	// event timeout or, once streaming, the stream idle timeout. Retried.
	ClassStalled
	// ClassQuotaExhausted: HTTP 402 (Payment Required), or a 429 (or error
	// type) saying the account's quota, spend limit or prepaid balance is
	// used up. Not retried: waiting does not help.
	ClassQuotaExhausted
	// ClassRejected: the provider rejected the request (400, 413, 422 and
	// other 4xx but 402 and 404), or answered with a redirect that was not
	// followed (3xx). Not retried; never falls back to another target.
	ClassRejected
	// ClassAuth: the provider rejected llmrelay's credentials (401, 403).
	// Not retried.
	ClassAuth
	// ClassCanceled: the client cancelled the call. Not retried.
	ClassCanceled
	// ClassDeadline: the call's deadline passed. Not retried.
	ClassDeadline
	// ClassProtocol: the provider's stream arrived whole but does not decode
	// (KindProtocol). Not retried: the provider would send the same.
	ClassProtocol
	// ClassNotFound: the provider does not know the model, or the endpoint
	// (HTTP 404, or an error type that says so). Not retried: the same
	// target gives the same answer; a route falls back to its next target,
	// which may serve the model.
	ClassNotFound
	// ClassInvalidOutput: the provider refused the model's own output, not
	// the request: a tool call the model got wrong (Groq's
	// `tool_use_failed`: arguments that do not fit the tool's schema, or
	// no call where one was required). Another generation of the same
	// request often gets it right, so it is retried, on the same target,
	// once per call (retry.Plan): a second one says the request itself
	// leads the model astray. It is the model's failure, not the
	// target's: it never falls back and counts against no target's
	// health.
	ClassInvalidOutput
	// ClassContextLength: the provider rejected the request as longer than
	// the model's context window (its input, or its input and maximum
	// output together): OpenAI's `context_length_exceeded`, Anthropic's
	// "prompt is too long", Gemini's "input token count ... exceeds".
	// Not retried: the same model gives the same answer. A route falls
	// back to its next target, whose model may have a larger window; it is
	// the request's failure, not the target's, and counts against no
	// target's health.
	ClassContextLength
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
	case ClassProtocol:
		return "protocol_error"
	case ClassNotFound:
		return "not_found"
	case ClassInvalidOutput:
		return "invalid_output"
	case ClassContextLength:
		return "context_length"
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

// ClassOfStatus is the generic meaning of an HTTP error status, which every
// HTTP adapter shares: 429 is ClassRateLimited; 503 and 529 (Anthropic's,
// and some proxies') ClassOverloaded; 408, 409 and the other 5xx
// ClassServerError; 401 and 403 ClassAuth; 402 ClassQuotaExhausted (the
// account's balance or billing: Anthropic's billing_error, DeepSeek's
// "Insufficient Balance", OpenRouter's spent credits, whatever the body's
// type says); 404 ClassNotFound; the other 4xx, and a 3xx (a redirect
// that was not followed), ClassRejected; anything else ClassUnknown.
func ClassOfStatus(status int) Class {
	switch {
	case status == 429:
		return ClassRateLimited
	case status == 503 || status == 529:
		return ClassOverloaded
	case status == 408 || status == 409 || status >= 500 && status <= 599:
		return ClassServerError
	case status == 401 || status == 403:
		return ClassAuth
	case status == 402:
		// Payment Required: the account, not the request. Another target
		// has its own (the call falls back); waiting does not help.
		return ClassQuotaExhausted
	case status == 404:
		return ClassNotFound
	case status >= 400 && status <= 499:
		return ClassRejected
	case status >= 300 && status <= 399:
		// A redirect llmrelay did not follow (httpx follows none, or only
		// same-origin ones): the same request gets the same answer.
		return ClassRejected
	}
	return ClassUnknown
}

// HTTPClass is the class of an error status, given the class the adapter's
// error table gives the provider's error type (ClassUnknown when it names
// none): the status decides (ClassOfStatus), except that a 429 whose type
// says the quota is used up is ClassQuotaExhausted, a 4xx whose type
// says the model is unknown is ClassNotFound, one whose type says the
// model's output was refused is ClassInvalidOutput, and one whose type
// says the request outgrew the model's context window is
// ClassContextLength. A response without a status is classified by its
// type alone.
func HTTPClass(status int, byType Class) Class {
	if status == 0 {
		return byType
	}
	c := ClassOfStatus(status)
	switch {
	case c == ClassRateLimited && byType == ClassQuotaExhausted:
		return ClassQuotaExhausted
	case c == ClassRejected && (byType == ClassNotFound || byType == ClassInvalidOutput || byType == ClassContextLength):
		// Some compatible servers answer an unknown model with 400; Groq
		// answers a malformed tool call with 400 tool_use_failed; a
		// context window overflow is a 400 (413 from some servers).
		return byType
	}
	return c
}
