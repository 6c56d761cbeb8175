package telemetry

import "go.opentelemetry.io/otel/attribute"

// Span attributes of the OpenTelemetry GenAI semantic conventions that
// llmrelay sets. The token counts' attributes are usage.Kinds'.
const (
	AttrOperationName      = attribute.Key("gen_ai.operation.name")
	AttrProviderName       = attribute.Key("gen_ai.provider.name")
	AttrRequestModel       = attribute.Key("gen_ai.request.model")
	AttrRequestMaxTokens   = attribute.Key("gen_ai.request.max_tokens")
	AttrRequestTemperature = attribute.Key("gen_ai.request.temperature")
	AttrRequestTopP        = attribute.Key("gen_ai.request.top_p")
	AttrRequestStop        = attribute.Key("gen_ai.request.stop_sequences")
	AttrOutputType         = attribute.Key("gen_ai.output.type")
	AttrResponseModel      = attribute.Key("gen_ai.response.model")
	AttrFinishReasons      = attribute.Key("gen_ai.response.finish_reasons")
	// Content, recorded only when the operator opts in
	// (tracing.capture_content).
	AttrInputMessages      = attribute.Key("gen_ai.input.messages")
	AttrOutputMessages     = attribute.Key("gen_ai.output.messages")
	AttrSystemInstructions = attribute.Key("gen_ai.system_instructions")
	// AttrErrorType is the general conventions' error.type: the failure
	// class of an attempt, the ErrorInfo reason of a call.
	AttrErrorType = attribute.Key("error.type")
)

// OperationChat is the gen_ai.operation.name of a Generate call, and
// OperationEmbeddings an Embed call's (its metrics' label).
const (
	OperationChat       = "chat"
	OperationEmbeddings = "embeddings"
)

// llmrelay's own span attributes.
const (
	// AttrProvider is the configured provider's name (gen_ai.provider.name
	// is its kind's well-known name).
	AttrProvider  = attribute.Key("llmrelay.provider")
	AttrRequestID = attribute.Key("llmrelay.request_id")
	// AttrAPIKey is the name of the caller's API key (never the key).
	AttrAPIKey = attribute.Key("llmrelay.api_key.name")
	// AttrRoute is the route the request's model named (absent for
	// "<provider>/<model>").
	AttrRoute = attribute.Key("llmrelay.route")
	// AttrModel is the model as the client asked for it.
	AttrModel = attribute.Key("llmrelay.model")
	// AttrAttempt is an attempt's number, from 1; AttrAttempts how many a
	// call made.
	AttrAttempt  = attribute.Key("llmrelay.attempt")
	AttrAttempts = attribute.Key("llmrelay.attempts")
	// AttrDeltas counts the deltas an attempt sent the client.
	AttrDeltas = attribute.Key("llmrelay.deltas")
	// AttrCost is what the call's tokens cost at the price table's prices.
	AttrCost = attribute.Key("llmrelay.cost")
	// AttrEstimatedInputTokens and AttrEstimatedOutputTokens are the
	// tokens budgets counted by estimate on top of gen_ai.usage.*, for
	// attempts whose provider did not report their whole usage (a
	// cancelled or broken stream); AttrEstimatedCost is their cost.
	AttrEstimatedInputTokens  = attribute.Key("llmrelay.estimated.input_tokens")
	AttrEstimatedOutputTokens = attribute.Key("llmrelay.estimated.output_tokens")
	AttrEstimatedCost         = attribute.Key("llmrelay.estimated.cost")
	// AttrErrorClass is the failure class of a failed attempt (the
	// adapter's error table or retry.Classify).
	AttrErrorClass = attribute.Key("llmrelay.error.class")
	// AttrRetryReason is why a failed attempt is retried, as its
	// will_retry event says (on the attempt and on the wait).
	AttrRetryReason = attribute.Key("llmrelay.retry.reason")
	// AttrDiscardPartial says the failed attempt had streamed output the
	// client must discard (will_retry.discard_partial).
	AttrDiscardPartial = attribute.Key("llmrelay.retry.discard_partial")
	// AttrStop says why a call's last failed attempt was not retried.
	AttrStop = attribute.Key("llmrelay.retry.stop")
	// AttrDelay is a wait's planned length, in seconds.
	AttrDelay = attribute.Key("llmrelay.retry.delay")
	// AttrFromHint says the wait is the provider's retry hint, not the
	// backoff.
	AttrFromHint = attribute.Key("llmrelay.retry.from_hint")
	// AttrNextAttempt is the number of the attempt a wait leads to.
	AttrNextAttempt = attribute.Key("llmrelay.retry.next_attempt")
	// AttrNextProvider and AttrNextModel are where that attempt goes.
	AttrNextProvider = attribute.Key("llmrelay.retry.next_provider")
	AttrNextModel    = attribute.Key("llmrelay.retry.next_model")
	// AttrFallback says the next attempt goes to another target than the
	// failed one (route fallback).
	AttrFallback = attribute.Key("llmrelay.retry.fallback")
	// AttrInterrupted says a wait was cut short by the call's end.
	AttrInterrupted = attribute.Key("llmrelay.retry.interrupted")
	// AttrHedge marks an attempt that is a hedge (started beside a slower
	// attempt); AttrHedgeHedges counts a call's hedges, on its span.
	AttrHedge       = attribute.Key("llmrelay.hedge")
	AttrHedgeHedges = attribute.Key("llmrelay.hedges")
	// AttrRaceOutcome is how an attempt that raced others fared: "won"
	// (it produced a delta first), "lost" (cancelled: another did), or
	// "failed" (it failed before producing one).
	AttrRaceOutcome = attribute.Key("llmrelay.hedge.outcome")
)

// Span names of the spans llmrelay makes (the server span is otelgrpc's,
// named after the method).
const (
	// SpanWait names a wait between two attempts.
	SpanWait = "llmrelay.retry.wait"
)

// ProviderName returns the gen_ai.provider.name of an adapter kind: the
// conventions' well-known name where there is one, else the kind.
func ProviderName(kind string) string {
	switch kind {
	case "gemini":
		return "gcp.gemini"
	case "mock":
		return "llmrelay.mock"
	}
	return kind // "openai", "anthropic"
}
