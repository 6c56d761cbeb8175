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
		res, err := c.runAttempt(ctx, n, t)
		c.usage.InputTokens += res.usage.InputTokens
		c.usage.OutputTokens += res.usage.OutputTokens
		if err != nil {
			return nil, c.afterFailure(ctx, n, t, res, err)
		}
		c.plan.Succeeded()
		if c.so != nil {
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
	if errors.As(err, &se) {
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
		// What the provider sent with its error status may be anything (a
		// proxy's page): never in a status, only here, at debug level.
		c.svc.log.Debug("provider error response", "request_id", c.requestID, "provider", name,
			"attempt", n, "provider_status", pe.Status, "body", pe.Raw)
	}
	if cl.Class != provider.ClassCanceled && cl.Class != provider.ClassDeadline {
		c.svc.metrics.ProviderError(name, cl.Class.String())
	}
	step := c.plan.Failed(err, cl, res.streamed())
	if !step.Retry() {
		if step.Failure.Stop == retry.StopBudget {
			c.svc.metrics.RetryBudgetExhausted(name)
		}
		return step.Failure
	}

	c.svc.log.Info("retrying",
		"request_id", c.requestID, "provider", name, "attempt", n,
		"reason", cl.Reason.String(), "delay", step.Delay, "discard_partial", res.streamed(), "error", err)
	c.svc.metrics.Retry(name, cl.Reason.String())
	if err := c.sendWillRetry(n, step, &llmrelayv1.WillRetry{
		Reason:         llmrelayv1.RetryReason(cl.Reason),
		Delay:          durationpb.New(step.Delay),
		DiscardPartial: res.streamed(),
		Cause:          apierr.AttemptCause(cl, name, n),
	}); err != nil {
		return err
	}
	return step.Continue()
}

// sendWillRetry sends w, the WillRetry that follows failed attempt n and
// announces the step's next attempt. Its error is a *sendError.
func (c *call) sendWillRetry(n int, step retry.Step, w *llmrelayv1.WillRetry) error {
	w.NextAttempt = uint32(step.Next)
	if err := c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(n), Event: &llmrelayv1.GenerateEvent_WillRetry{WillRetry: w}}); err != nil {
		return &sendError{err}
	}
	return nil
}

// attemptResult is what one attempt produced.
type attemptResult struct {
	text      strings.Builder
	toolCalls []*llmrelayv1.ToolCall
	finish    provider.FinishReason
	usage     provider.Usage
	// deltas and partials count the deltas and partial objects this
	// attempt sent to the client.
	deltas, partials int
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
// Once the provider has accepted the attempt (Provider.Stream returned), an
// attempt that receives no provider event for the call's idle timeout is
// cancelled and fails with retry.ErrStalled. Until then the provider's
// transport timeouts (dial, TLS handshake, response headers), its attempt
// timeout and the call's deadline bound the wait, so that a configured
// response_header_timeout is not cut short by the idle timer.
func (c *call) runAttempt(ctx context.Context, n int, t provider.Target) (*attemptResult, error) {
	res := &attemptResult{partial: c.so.newPartial()}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stalled := func(err error) error {
		if ctx.Err() == nil && errors.Is(context.Cause(actx), retry.ErrStalled) {
			return fmt.Errorf("attempt %d: nothing for %v: %w", n, c.idle, retry.ErrStalled)
		}
		return err
	}

	preq := *c.preq
	preq.Attempt = n
	preq.Model = t.Model
	st, err := t.Entry.Provider.Stream(actx, &preq)
	if err != nil {
		return res, err
	}
	defer st.Close()
	idle := time.AfterFunc(c.idle, func() { cancel(retry.ErrStalled) })
	defer idle.Stop()
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, stalled(err)
		}
		// The idle timer runs only while waiting for the provider: a client
		// slow to read must not make the provider look stalled.
		idle.Stop()
		if err := c.handle(n, ev, res); err != nil {
			return res, err
		}
		idle.Reset(c.idle)
	}
}

// handle folds one provider event of attempt n into res and sends the
// client its delta, if it makes one.
func (c *call) handle(n int, ev provider.Event, res *attemptResult) error {
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
		de := newDeltaEvent()
		de.delta.ToolCall = &llmrelayv1.ToolCallDelta{
			Index: uint32(ev.ToolCall.Index), Id: ev.ToolCall.ID, Name: ev.ToolCall.Name, ArgumentsDelta: ev.ToolCall.ArgumentsDelta,
		}
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
	de.oneof.Delta = &de.delta
	de.event.Event = &de.oneof
	return de
}

// sendDelta sends one delta of attempt n. Its error is a *sendError.
func (c *call) sendDelta(n int, de *deltaEvent, res *attemptResult) error {
	if !c.firstDelta {
		c.firstDelta = true
		c.svc.metrics.FirstDelta(c.providerName(), time.Since(c.start))
	}
	res.deltas++
	de.event.Attempt = uint32(n)
	if err := c.out.send(&de.event); err != nil {
		return &sendError{err}
	}
	return nil
}
