package telemetry

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// Recording reports whether ctx holds a span that records: the call is
// traced and sampled. Every helper below does nothing unless it does, so
// the callers need not check; they check only to skip building what a
// helper would take.
func Recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// Span is a span llmrelay started, or nothing when the call is not
// traced: every method of the zero Span does nothing.
type Span struct{ span trace.Span }

// Recording reports whether s records.
func (s Span) Recording() bool { return s.span != nil }

// start starts a child of ctx's span, when that one records.
func start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, Span{}
	}
	ctx, sp := parent.TracerProvider().Tracer(instrumentationScope).Start(ctx, name,
		trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, Span{sp}
}

// Attempt is what an attempt span starts with.
type Attempt struct {
	// N is the attempt's number, from 1.
	N int
	// Target is where the attempt goes.
	Target provider.Target
	// Request is the attempt's request: its generation settings become
	// attributes, and its messages too when CaptureContent.
	Request        *provider.Request
	CaptureContent bool
	// Hedge marks a hedge.
	Hedge bool
}

// StartAttempt starts the span of one attempt, a child of the call's span
// in ctx: a GenAI client span named "chat <model>" (the conventions'
// inference span), with the provider, the model and the request's
// generation settings. The returned context carries it to the provider
// adapter, whose request carries it on as `traceparent`.
func StartAttempt(ctx context.Context, a Attempt) (context.Context, Span) {
	if !Recording(ctx) {
		return ctx, Span{}
	}
	cfg := a.Target.Entry.Config
	attrs := []attribute.KeyValue{
		AttrOperationName.String(OperationChat),
		AttrProviderName.String(ProviderName(cfg.Kind)),
		AttrRequestModel.String(a.Target.Model),
		AttrProvider.String(cfg.Name),
		AttrAttempt.Int(a.N),
	}
	if a.Hedge {
		attrs = append(attrs, AttrHedge.Bool(true))
	}
	if r := a.Request; r != nil {
		g := r.Generation
		if g.MaxOutputTokens != nil {
			attrs = append(attrs, AttrRequestMaxTokens.Int(*g.MaxOutputTokens))
		}
		if g.Temperature != nil {
			attrs = append(attrs, AttrRequestTemperature.Float64(*g.Temperature))
		}
		if g.TopP != nil {
			attrs = append(attrs, AttrRequestTopP.Float64(*g.TopP))
		}
		if len(g.Stop) > 0 {
			attrs = append(attrs, AttrRequestStop.StringSlice(g.Stop))
		}
		if r.ResponseFormat != nil {
			attrs = append(attrs, AttrOutputType.String("json"))
		}
		if a.CaptureContent {
			attrs = append(attrs, inputContent(r.Messages)...)
		}
	}
	return start(ctx, OperationChat+" "+a.Target.Model, trace.SpanKindClient, attrs...)
}

// AttemptFailure is how an attempt failed and what follows it.
type AttemptFailure struct {
	// Class is the failure class; Err the attempt's error.
	Class string
	Err   error
	// Retried says another attempt follows, for RetryReason;
	// DiscardPartial says the client must discard what this attempt
	// showed. Stop says why none follows, when none does.
	// RetryReason is recorded in lower case, as the conventions' values
	// are.
	Retried        bool
	RetryReason    string
	DiscardPartial bool
	Stop           string
}

// AttemptFailed records on the attempt span in ctx how the attempt failed:
// its status, error.type and llmrelay's retry attributes.
func AttemptFailed(ctx context.Context, f AttemptFailure) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		AttrErrorType.String(f.Class),
		AttrErrorClass.String(f.Class),
		AttrDiscardPartial.Bool(f.DiscardPartial),
	}
	if f.Retried {
		attrs = append(attrs, AttrRetryReason.String(strings.ToLower(f.RetryReason)))
	} else if f.Stop != "" {
		attrs = append(attrs, AttrStop.String(f.Stop))
	}
	sp.SetAttributes(attrs...)
	if f.Err != nil {
		sp.RecordError(f.Err)
		sp.SetStatus(codes.Error, f.Err.Error())
	}
}

// AttemptEnd is what an attempt produced.
type AttemptEnd struct {
	// Model is the model that answered; "" when none did (the attempt
	// failed).
	Model        string
	Usage        provider.Usage
	FinishReason string // the conventions' name, "" when none came
	Deltas       int
	// Output is the attempt's reply, recorded with CaptureContent (nil:
	// none).
	Output *Output
	// RaceOutcome is how the attempt fared in a race of hedged attempts
	// ("won", "lost", "failed"); "" when it ran alone.
	RaceOutcome string
	// At is when the attempt ended; zero: now. (An attempt of a race may
	// be settled after it ended.)
	At time.Time
}

// EndAttempt ends an attempt span with what the attempt produced.
func (s Span) EndAttempt(e AttemptEnd) {
	if s.span == nil {
		return
	}
	attrs := []attribute.KeyValue{AttrDeltas.Int(e.Deltas)}
	if e.Model != "" {
		attrs = append(attrs, AttrResponseModel.String(e.Model))
	}
	attrs = appendUsage(attrs, e.Usage)
	if e.FinishReason != "" {
		attrs = append(attrs, AttrFinishReasons.StringSlice([]string{e.FinishReason}))
	}
	if e.Output != nil {
		attrs = append(attrs, e.Output.attribute(e.FinishReason))
	}
	if e.RaceOutcome != "" {
		attrs = append(attrs, AttrRaceOutcome.String(e.RaceOutcome))
	}
	s.span.SetAttributes(attrs...)
	if e.At.IsZero() {
		s.span.End()
		return
	}
	s.span.End(trace.WithTimestamp(e.At))
}

// appendUsage appends the token counts of every kind the conventions
// name that u reports.
func appendUsage(attrs []attribute.KeyValue, u provider.Usage) []attribute.KeyValue {
	for _, k := range usage.Kinds {
		if n := k.Tokens(u); n > 0 || k.PartOf == "" {
			attrs = append(attrs, attribute.Int64(k.SpanAttribute, n))
		}
	}
	return attrs
}

// Wait is one wait between two attempts.
type Wait struct {
	// Next is the number of the attempt it leads to, and NextProvider and
	// NextModel where that attempt goes.
	Next         int
	NextProvider string
	NextModel    string
	// Delay is the planned wait; FromHint says it is the provider's hint.
	Delay    time.Duration
	FromHint bool
	// Reason is why the attempt before failed, as will_retry says
	// (recorded in lower case).
	Reason string
	// Fallback says the next attempt goes to another target.
	Fallback bool
}

// StartWait starts the span of a wait between attempts, a child of the
// call's span in ctx.
func StartWait(ctx context.Context, w Wait) Span {
	if !Recording(ctx) {
		return Span{}
	}
	_, s := start(ctx, SpanWait, trace.SpanKindInternal,
		AttrNextAttempt.Int(w.Next),
		AttrNextProvider.String(w.NextProvider),
		AttrNextModel.String(w.NextModel),
		AttrDelay.Float64(w.Delay.Seconds()),
		AttrFromHint.Bool(w.FromHint),
		AttrRetryReason.String(strings.ToLower(w.Reason)),
		AttrFallback.Bool(w.Fallback),
	)
	return s
}

// EndWait ends a wait span: interrupted, with the cause, when the call
// ended before the next attempt could start.
func (s Span) EndWait(interrupted error) {
	if s.span == nil {
		return
	}
	if interrupted != nil {
		s.span.SetAttributes(AttrInterrupted.Bool(true))
		s.span.SetStatus(codes.Error, interrupted.Error())
	}
	s.span.End()
}

// Call is what the call's server span gets once the call ends.
type Call struct {
	RequestID string
	// Key is the caller's API key name, "" without keys.
	Key string
	// Route is the route the model named, "" for "<provider>/<model>".
	Route string
	// Model is the model as the client asked for it.
	Model string
	// Target is where the last attempt went ("" model before any).
	Target provider.Target
	// Attempts counts every attempt, Hedges the hedges among them.
	Attempts     int
	Hedges       int
	Usage        provider.Usage
	FinishReason string
	// Cost is the call's cost when Priced.
	Cost   float64
	Priced bool
	// Estimated is what budgets counted on top of Usage, by estimate, for
	// the attempts whose provider did not report their whole usage, and
	// EstimatedCost its cost when Priced.
	Estimated     provider.Usage
	EstimatedCost float64
	// ErrorType is the failed call's ErrorInfo reason, "" on success.
	ErrorType string
}

// EndCall sets the call's GenAI and llmrelay attributes on the server
// span in ctx (otelgrpc's, which ends it when the call returns).
func EndCall(ctx context.Context, c Call) {
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		AttrOperationName.String(OperationChat),
		AttrRequestID.String(c.RequestID),
		AttrModel.String(c.Model),
		AttrAttempts.Int(c.Attempts),
	}
	if c.Hedges > 0 {
		attrs = append(attrs, AttrHedgeHedges.Int(c.Hedges))
	}
	if c.Key != "" {
		attrs = append(attrs, AttrAPIKey.String(c.Key))
	}
	if c.Route != "" {
		attrs = append(attrs, AttrRoute.String(c.Route))
	}
	if e := c.Target.Entry; e != nil {
		attrs = append(attrs,
			AttrProviderName.String(ProviderName(e.Config.Kind)),
			AttrProvider.String(e.Config.Name),
			AttrRequestModel.String(c.Target.Model),
		)
		if c.ErrorType == "" {
			attrs = append(attrs, AttrResponseModel.String(c.Target.Model))
		}
	}
	attrs = appendUsage(attrs, c.Usage)
	if c.FinishReason != "" {
		attrs = append(attrs, AttrFinishReasons.StringSlice([]string{c.FinishReason}))
	}
	if c.Priced {
		attrs = append(attrs, AttrCost.Float64(c.Cost))
	}
	if e := c.Estimated; e.InputTokens > 0 || e.OutputTokens > 0 {
		attrs = append(attrs, AttrEstimatedInputTokens.Int64(e.InputTokens), AttrEstimatedOutputTokens.Int64(e.OutputTokens))
		if c.Priced {
			attrs = append(attrs, AttrEstimatedCost.Float64(c.EstimatedCost))
		}
	}
	if c.ErrorType != "" {
		attrs = append(attrs, AttrErrorType.String(c.ErrorType))
	}
	sp.SetAttributes(attrs...)
}
