package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// sendError is a failure to send an event to the client: never a provider
// failure, never retried.
type sendError struct{ err error }

func (e *sendError) Error() string { return "send to client: " + e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// run runs the call's attempt plan until an attempt succeeds or the plan
// ends the call, and returns the successful attempt's result. With
// structured output, an attempt succeeds once its reply conforms (or stays
// invalid under ON_INVALID_RETURN_TEXT); an invalid reply is re-asked (see
// checkOutput). A call that fails returns a *retry.Failure, an
// *apierr.Error when its structured output stayed invalid, or a *sendError
// when the client could not be written to.
//
// retry.Run executes the plan on retry-go, which makes the waits and ends
// them early when ctx ends. After each failed attempt the plan decides
// (afterFailure), and the WillRetry event is sent with the step's exact
// delay before retry-go waits it.
func (c *call) run(ctx context.Context) (*attemptResult, error) {
	return retry.Run(ctx, c.plan, c.svc.timer, func(n int, t provider.Target) (*attemptResult, error) {
		c.info.ObserveAttempt(n)
		actx, span := c.startAttempt(ctx, n, t)
		res, err := c.runAttempt(actx, n, t)
		defer c.endAttempt(span, t, res, err)
		c.usage.Add(res.usage)
		c.account(t, res.usage)
		if err != nil {
			return nil, c.afterFailure(actx, n, t, res, err)
		}
		c.plan.Succeeded()
		if c.so != nil && res.finish != provider.FinishRefusal {
			// A refusal is the model's answer: nothing to validate, and
			// re-asking would only be refused again.
			return c.checkOutput(n, res)
		}
		return res, nil
	})
}

// afterFailure reports attempt n to target t, which failed with err, to the
// plan. When the call retries, it logs and counts the retry, sends the
// WillRetry event and returns the step's Continue; otherwise it returns the
// *retry.Failure that ends the call (or the *sendError that already did).
func (c *call) afterFailure(ctx context.Context, n int, t provider.Target, res *attemptResult, err error) error {
	var se *sendError
	var ae *apierr.Error
	if errors.As(err, &se) || errors.As(err, &ae) {
		// Not a provider failure: the client could not be written to, or
		// the attempt ended the call itself (its output passed the limit).
		return err
	}
	if ctx.Err() != nil {
		// The call itself ended: report why, not how the provider call
		// noticed it.
		err = context.Cause(ctx)
	}
	name := t.Entry.Config.Name
	cl := retry.Classify(err)
	if pe := cl.Provider; pe != nil && pe.Raw != "" {
		// What the provider sent that the error is about (an event that did
		// not decode, an error status's body: a proxy's page, say) may be
		// anything: never in a status, only here, at debug level.
		c.svc.log.Debug("provider error response", "request_id", c.requestID, "provider", name,
			"attempt", n, "provider_status", pe.Status, "body", pe.Raw)
	}
	if cl.Class != provider.ClassCanceled && cl.Class != provider.ClassDeadline {
		c.svc.metrics.ProviderError(name, cl.Class.String())
	}
	step := c.plan.Failed(err, cl, res.streamed())
	c.traceFailure(ctx, err, cl, step, res)
	if step.Decision.Stop == retry.StopBudget {
		c.svc.metrics.RetryBudgetExhausted(name)
	}
	if !step.Retry() {
		return step.Failure
	}

	if step.Fallback {
		from, to := c.svc.routes.Label(t), c.svc.routes.Label(step.Target)
		c.svc.log.Info("falling back",
			"request_id", c.requestID, "route", c.routeName(), "from", from, "to", to, "attempt", n,
			"reason", step.Reason.String(), "stop", step.Decision.Stop.String(), "discard_partial", res.streamed(), "error", err)
		c.svc.metrics.Fallback(c.routeName(), from, to)
	} else {
		c.svc.log.Info("retrying",
			"request_id", c.requestID, "provider", name, "attempt", n,
			"reason", step.Reason.String(), "delay", step.Delay, "discard_partial", res.streamed(), "error", err)
	}
	c.svc.metrics.Retry(name, step.Reason.String())
	if err := c.sendWillRetry(n, step, &llmrelayv1.WillRetry{
		Reason:         llmrelayv1.RetryReason(step.Reason),
		Delay:          durationpb.New(step.Delay),
		DiscardPartial: res.streamed(),
		Cause:          apierr.AttemptCause(cl, name, n),
	}); err != nil {
		return err
	}
	return step.Continue()
}

// sendWillRetry sends w, the WillRetry that follows failed attempt n and
// announces the step's next attempt: its number and target, and whether
// the call falls back. Its error is a *sendError.
func (c *call) sendWillRetry(n int, step retry.Step, w *llmrelayv1.WillRetry) error {
	w.NextAttempt = uint32(step.Next)
	w.NextProvider, w.NextModel, w.Fallback = step.Target.Entry.Config.Name, step.Target.Model, step.Fallback
	if err := c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(n), Event: &llmrelayv1.GenerateEvent_WillRetry{WillRetry: w}}); err != nil {
		return &sendError{err}
	}
	return nil
}

// attemptResult is what one attempt produced.
type attemptResult struct {
	text      strings.Builder
	toolCalls []*llmrelayv1.ToolCall
	reasoning []*reasoningBlock
	refusal   strings.Builder
	finish    provider.FinishReason
	usage     provider.Usage
	// deltas and partials count the deltas (text, reasoning, refusal and
	// tool-call fragments) and partial objects this attempt sent to the
	// client.
	deltas, partials int
	// outputBytes counts the attempt's output against the call's limit.
	outputBytes int64
	// partial reads the reply as it streams, for partial objects; nil
	// without stream_partial_objects.
	partial *partialObjects
	// object is the conforming structured output, set once checked.
	object *structpb.Value
}

// streamed reports whether the attempt sent the client anything that a
// retry must tell it to discard.
func (r *attemptResult) streamed() bool { return r.deltas > 0 || r.partials > 0 }

// runAttempt runs attempt n to target t: it streams the provider's deltas
// to the client as they arrive and returns the assembled result, or the
// error that ended the attempt (with res holding what was sent before it).
// An attempt whose provider shows no sign of life within the first event
// timeout (the call's first_event_timeout, else the provider's default),
// or for the call's stream idle timeout once it streams, is cancelled and
// fails with a *retry.StallError (see stallTimer), which says whether the
// timeout was the caller's own stricter one. An attempt whose output
// reaches the call's limit is cancelled at once, which stops the provider's
// stream: under truncation it succeeds, cut, with FinishLength; otherwise
// it fails with OUTPUT_TOO_LARGE, which ends the call.
func (c *call) runAttempt(ctx context.Context, n int, t provider.Target) (*attemptResult, error) {
	res := &attemptResult{partial: c.so.newPartial()}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first := c.svc.limits.FirstEventTimeout(c.firstEvent, t.Entry.Config.FirstEventTimeout)
	// A first event timeout the caller chose stricter than the one it
	// would otherwise get makes a stall under it the caller's doing.
	firstCallerSet := first < c.svc.limits.FirstEventTimeout(0, t.Entry.Config.FirstEventTimeout)
	stall := startStallTimer(first, c.idle, cancel)
	defer stall.stop()
	stalled := func(err error) error {
		var se *retry.StallError
		if ctx.Err() == nil && errors.As(context.Cause(actx), &se) {
			stall := *se
			stall.CallerSet = c.idleCallerSet
			if stall.Setting == retry.SettingFirstEvent {
				stall.CallerSet = firstCallerSet
			}
			return fmt.Errorf("attempt %d: %w", n, &stall)
		}
		return err
	}

	preq := *c.preq
	preq.Attempt = n
	preq.Model = t.Model
	preq.Activity = &stall.act
	st, err := t.Entry.Provider.Stream(actx, &preq)
	if err != nil {
		return res, stalled(err)
	}
	defer st.Close()
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, stalled(err)
		}
		// Handing the event to the client is not the provider's time: a
		// client slow to read must not make the provider look stalled.
		stall.relay()
		err = c.handle(n, ev, res)
		stall.relayed()
		if errors.Is(err, errTruncated) {
			res.finish = provider.FinishLength
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
}

// handle folds one provider event of attempt n into res and sends the
// client its delta, if it makes one. Output past the call's limit ends the
// attempt (meterOutput): cut at the limit and errTruncated, or an error.
func (c *call) handle(n int, ev provider.Event, res *attemptResult) error {
	limited := c.meterOutput(n, &ev, res)
	if limited != nil && !errors.Is(limited, errTruncated) {
		return limited
	}
	if err := c.fold(n, ev, res); err != nil {
		return err
	}
	return limited
}

// fold folds one provider event of attempt n into res and sends the client
// its delta, if it makes one.
func (c *call) fold(n int, ev provider.Event, res *attemptResult) error {
	switch ev.Kind {
	case provider.EventText:
		if ev.Text == "" {
			return nil
		}
		res.text.WriteString(ev.Text)
		de := newDeltaEvent()
		de.delta.Text = ev.Text
		if err := c.sendDelta(n, de, res); err != nil {
			return err
		}
		return c.sendPartial(n, ev.Text, res)
	case provider.EventToolCall:
		res.addToolCall(ev.ToolCall)
		tc := ev.ToolCall
		if tc.ID == "" && tc.Name == "" && tc.ArgumentsDelta == "" {
			return nil // a signature alone: it is in the final message
		}
		de := newDeltaEvent()
		de.delta.ToolCall = &llmrelayv1.ToolCallDelta{
			Index: uint32(tc.Index), Id: tc.ID, Name: tc.Name, ArgumentsDelta: tc.ArgumentsDelta,
		}
		return c.sendDelta(n, de, res)
	case provider.EventReasoning:
		r := ev.Reasoning
		if r == (provider.ReasoningDelta{Index: r.Index}) {
			return nil
		}
		res.addReasoning(r)
		de := newReasoningDeltaEvent()
		de.r.Index, de.r.Text, de.r.Signature, de.r.Redacted, de.r.Format = uint32(r.Index), r.Text, r.Signature, r.Redacted, r.Format
		return c.sendDelta(n, &de.deltaEvent, res)
	case provider.EventRefusal:
		if ev.Text == "" {
			return nil
		}
		res.refusal.WriteString(ev.Text)
		de := newDeltaEvent()
		de.delta.Refusal = ev.Text
		return c.sendDelta(n, de, res)
	case provider.EventUsage:
		res.usage = ev.Usage
	case provider.EventFinish:
		res.finish = ev.FinishReason
	}
	return nil
}

// deltaEvent is a delta event's three messages in one allocation instead
// of three: deltas are most of a call's events. Each event gets its own;
// gRPC does not allow a message to be reused once sent.
type deltaEvent struct {
	event llmrelayv1.GenerateEvent
	oneof llmrelayv1.GenerateEvent_Delta
	delta llmrelayv1.Delta
}

func newDeltaEvent() *deltaEvent {
	de := &deltaEvent{}
	de.init()
	return de
}

func (de *deltaEvent) init() {
	de.oneof.Delta = &de.delta
	de.event.Event = &de.oneof
}

// reasoningDeltaEvent is a reasoning delta's four messages in one
// allocation; text deltas do not pay for its size.
type reasoningDeltaEvent struct {
	deltaEvent
	r llmrelayv1.ReasoningDelta
}

func newReasoningDeltaEvent() *reasoningDeltaEvent {
	de := &reasoningDeltaEvent{}
	de.init()
	de.delta.Reasoning = &de.r
	return de
}

// sendDelta sends one delta of attempt n. Its error is a *sendError.
func (c *call) sendDelta(n int, de *deltaEvent, res *attemptResult) error {
	if !c.firstDelta {
		c.firstDelta = true
		c.svc.metrics.FirstToken(c.labels(c.lastTarget()), time.Since(c.start))
	}
	res.deltas++
	de.event.Attempt = uint32(n)
	if err := c.out.send(&de.event); err != nil {
		return &sendError{err}
	}
	return nil
}
