package engine

import (
	"context"
	"strings"
	"time"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// What a call reports about itself: its metrics (internal/metrics), its
// usage for the log line (the call record), and its spans
// (internal/telemetry). None of it allocates for a call that is not
// traced, beyond the metrics' first use of a label set.

// keyName returns the name of the caller's API key, "" without keys.
func keyName(ctx context.Context) string {
	if id, ok := auth.FromContext(ctx); ok {
		return id.Name
	}
	return ""
}

// labels returns the labels of the call's metrics for target t.
func (c *call) labels(t provider.Target) metrics.CallLabels {
	l := metrics.CallLabels{Key: c.key(), Team: c.team(), Route: c.routeName(), Interface: c.info.Interface(), Operation: telemetry.OperationChat}
	return withTarget(l, t)
}

// withTarget returns l with target t's provider and model labels, l as it
// is for no target (a call that never resolved one). Chat and embedding
// calls alike label their metrics with it.
func withTarget(l metrics.CallLabels, t provider.Target) metrics.CallLabels {
	if e := t.Entry; e != nil {
		l.Provider, l.Model, l.OpenModels = e.Config.Name, t.Model, e.OpenModels()
	}
	return l
}

// lastTarget returns the target of the call's last attempt (of its first
// before any; none before the call resolved).
func (c *call) lastTarget() provider.Target {
	switch {
	case c.plan() != nil:
		return c.plan().Target()
	case c.resolved != nil:
		return c.resolved.Targets[0]
	}
	return provider.Target{}
}

// account records the tokens the provider of an attempt to t reported
// (res.usage) in the metrics and adds their cost to the call's. What
// settlement counts on top (spend.Charge: an estimate of what the provider
// did not report, for an attempt whose stream ended before its usage came)
// is added to the call's estimate, at t's prices, and counted in the
// estimated tokens' and cost's metrics, so that /metrics holds what the
// key was charged; the Final's usage stays what providers reported.
func (c *call) account(t provider.Target, res *attemptResult) {
	cost, priced := c.eng.prices.Cost(t.Entry.Config.Name, t.Model, res.usage)
	c.cost += cost
	c.priced = c.priced || priced
	l := c.labels(t)
	c.eng.metrics.AttemptUsage(l, res.usage, cost, priced)
	a := spend.Attempt{Usage: res.usage, Reported: res.reported, Finished: res.finish != provider.FinishUnspecified, Opened: res.opened}
	if !a.Estimated() {
		// Most attempts: their request is not measured.
		return
	}
	a.InputBytes, a.OutputBytes = c.inputBytes(), res.produced()
	est := spend.Charge(a)
	if est == (provider.Usage{}) {
		return
	}
	cost, priced = c.eng.prices.Cost(t.Entry.Config.Name, t.Model, est)
	if c.estimated == nil {
		c.estimated = new(estimate)
	}
	c.estimated.usage.Add(est)
	c.estimated.cost += cost
	c.eng.metrics.Estimated(l, est, cost, priced)
}

// estimate is what settlement counts by estimate for a call's attempts
// whose provider did not report their whole usage: tokens and their cost.
type estimate struct {
	usage provider.Usage
	cost  float64
}

// spent returns what the call's hold settles: the usage and cost of
// every attempt of every turn, what providers reported (the Final's usage)
// and the estimates.
func (c *call) spent() spend.Spent {
	s := spend.Spent{Usage: c.usage, Cost: c.cost}
	if e := c.estimated; e != nil {
		s.Usage.Add(e.usage)
		s.Cost += e.cost
		s.Estimated, s.EstimatedCost = e.usage, e.cost
	}
	return s
}

// inputBytes returns the size of the current turn's request, as a
// reservation counts a request's (spend.Attempt.InputBytes): the encoded
// request and, with server tools, the transcript of the turns before,
// which the turn's request carries; the images of both (a user's, a
// server tool's screenshot) counted by spend.RequestBytes, not by their
// bytes.
func (c *call) inputBytes() int64 {
	n := estimatedBytes(c.req)
	if c.tools != nil {
		n += withImagesCounted(c.tools.spent, c.tools.transcript)
	}
	return n
}

// done records the end of the call, with gRPC code and ErrorInfo reason
// (empty on success); res is the successful attempt's result, nil when
// the call failed.
func (c *call) done(ctx context.Context, code apierr.Kind, reason string, res *attemptResult) {
	t := c.lastTarget()
	c.eng.metrics.GenerateDone(c.labels(t), metrics.CallResult{
		Code: code.String(), ErrorType: reason, Attempts: c.attempts(), Duration: time.Since(c.start),
	})
	if res != nil {
		// The target the Final names: after a fallback, the one the
		// call fell back to; after a race, the winner.
		c.info.RecordServed(t.Entry.Config.Name, t.Model)
	}
	var est estimate
	if c.estimated != nil {
		est = *c.estimated
	}
	c.info.RecordUsage(callinfo.Usage{Tokens: c.usage, Cost: c.cost, Priced: c.priced, Estimated: est.usage, EstimatedCost: est.cost})
	c.settle(ctx)
	if !telemetry.Recording(ctx) {
		return
	}
	call := telemetry.Call{
		RequestID: c.requestID, Key: c.key(), Route: c.routeName(), Model: c.req.GetModel(), Target: t, Attempts: c.attempts(), Hedges: c.hedges(),
		Usage: c.usage, Cost: c.cost, Priced: c.priced, Estimated: est.usage, EstimatedCost: est.cost, ErrorType: reason,
	}
	if res != nil {
		call.FinishReason = finishName(res.finish)
	}
	telemetry.EndCall(ctx, call)
}

// startAttempt starts the span of attempt a, when the call is traced.
func (c *call) startAttempt(ctx context.Context, a *retry.Attempt) (context.Context, telemetry.Span) {
	if !telemetry.Recording(ctx) {
		return ctx, telemetry.Span{}
	}
	return telemetry.StartAttempt(ctx, telemetry.Attempt{N: a.N, Target: a.Target, Request: c.turn.preq, CaptureContent: c.eng.captureContent, Hedge: a.Hedge})
}

// endAttempt ends the span of attempt a, which produced res and ended with
// err (nil: the provider's stream ended normally), when it ended; an
// attempt of a race says how it fared.
func (c *call) endAttempt(a *retry.Attempt, res *attemptResult, err error) {
	span := res.span
	if !span.Recording() {
		return
	}
	e := telemetry.AttemptEnd{Usage: res.usage, FinishReason: finishName(res.finish), Deltas: res.deltas, At: a.Ended}
	if err == nil && a.Outcome() != retry.OutcomeLost {
		e.Model = a.Target.Model
	}
	if a.Raced() {
		e.RaceOutcome = a.Outcome().String()
	}
	if c.eng.captureContent {
		out := &telemetry.Output{Text: res.text.String()}
		for _, tc := range res.more().toolCalls {
			out.ToolCalls = append(out.ToolCalls, provider.ToolCall{ID: tc.id, Name: tc.name, Arguments: tc.arguments.String()})
		}
		e.Output = out
	}
	span.EndAttempt(e)
}

// traceFailure records on the attempt span in ctx how the attempt failed
// with err (classified cl, with res sent before) and the step the plan
// took.
func (c *call) traceFailure(ctx context.Context, err error, cl retry.Classification, step retry.Step, res *attemptResult) {
	if !telemetry.Recording(ctx) {
		return
	}
	f := telemetry.AttemptFailure{
		Class: cl.Class.String(), Err: err, Retried: step.Retry(),
		RetryReason: step.Reason.String(), DiscardPartial: res.streamed(),
	}
	if !step.Retry() {
		f.Stop = step.Failure.Stop.String()
	}
	telemetry.AttemptFailed(ctx, f)
}

// finishName is a finish reason's gen_ai.response.finish_reasons value
// ("stop", "length", "tool_calls", ...), "" when none came.
func finishName(r provider.FinishReason) string {
	if r == provider.FinishUnspecified {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(finishReason(r).String(), "FINISH_REASON_"))
}
