package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	retrygo "github.com/avast/retry-go/v4"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// nextAttempt is what a failed attempt returns to retry-go when the call
// retries: the failure and the exact wait that internal/retry decided and
// the WillRetry event announced.
type nextAttempt struct {
	delay time.Duration
	err   error
}

func (e *nextAttempt) Error() string { return e.err.Error() }
func (e *nextAttempt) Unwrap() error { return e.err }

// sendError is a failure to send an event to the client: never a provider
// failure, never retried.
type sendError struct{ err error }

func (e *sendError) Error() string { return "send to client: " + e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// isNextAttempt is retry-go's RetryIf: only a failure the call decided to
// retry is retried. (A custom RetryIf replaces retry-go's IsRecoverable, so
// the decision is carried by the error's type alone.)
func isNextAttempt(err error) bool {
	var next *nextAttempt
	return errors.As(err, &next)
}

// nextDelay is retry-go's DelayType: the wait the call decided on.
func nextDelay(_ uint, err error, _ *retrygo.Config) time.Duration {
	var next *nextAttempt
	if errors.As(err, &next) {
		return next.delay
	}
	return 0
}

// run makes the call's attempts until one succeeds or internal/retry says
// to stop, and returns the successful attempt's result. With structured
// output, an attempt succeeds once its reply conforms (or stays invalid
// under ON_INVALID_RETURN_TEXT); an invalid reply is re-asked (see
// checkOutput). A call that fails returns a *retry.Failure, an
// *apierr.Error when its structured output stayed invalid, or a *sendError
// when the client could not be written to.
//
// retry-go runs the loop and makes the waits, which end early when ctx
// ends. Each decision is internal/retry's: the attempt itself classifies its
// failure, decides, and sends the WillRetry event with the exact delay
// before retry-go waits it. (retry-go's OnRetry also fires after the last
// failure, so it is not where WillRetry is sent.)
func (c *call) run(ctx context.Context) (*attemptResult, error) {
	budget := c.svc.budgets.For(c.entry.Config.Name)
	opts := []retrygo.Option{
		retrygo.Context(ctx),
		// Re-asks do not use up max_attempts: the call makes at most
		// max_attempts attempts that fail in transport and the re-asks on
		// top (see afterFailure), so this bound is never what stops it.
		retrygo.Attempts(uint(c.policy.MaxAttempts + c.so.maxReasks())),
		retrygo.RetryIf(isNextAttempt),
		retrygo.DelayType(nextDelay),
		retrygo.LastErrorOnly(true),
	}
	if c.svc.timer != nil {
		opts = append(opts, retrygo.WithTimer(c.svc.timer))
	}
	res, err := retrygo.DoWithData(func() (*attemptResult, error) {
		c.attempts++
		c.info.ObserveAttempt(c.attempts)
		res, err := c.runAttempt(ctx, c.attempts)
		c.usage.InputTokens += res.usage.InputTokens
		c.usage.OutputTokens += res.usage.OutputTokens
		if err != nil {
			return nil, c.afterFailure(ctx, res, err, budget)
		}
		budget.Success()
		if c.so != nil {
			return c.checkOutput(c.attempts, res)
		}
		return res, nil
	}, opts...)
	if err == nil {
		return res, nil
	}
	var f *retry.Failure
	var se *sendError
	var ae *apierr.Error
	if errors.As(err, &f) || errors.As(err, &se) || errors.As(err, &ae) {
		return nil, err
	}
	// The wait before the next attempt was cut short: the call's context
	// ended (client cancel, deadline, shutdown).
	cause := err
	if ctx.Err() != nil {
		cause = context.Cause(ctx)
	}
	return nil, &retry.Failure{Err: cause, Class: retry.Classify(cause), Stop: retry.StopNotRetryable, Attempts: c.attempts, Provider: c.entry.Config.Name}
}

// afterFailure decides what follows failed attempt c.attempts. When the
// call retries, it logs and counts the retry, sends the WillRetry event and
// returns a *nextAttempt; otherwise it returns the *retry.Failure that ends
// the call (or the *sendError that already did).
func (c *call) afterFailure(ctx context.Context, res *attemptResult, err error, budget *retry.Budget) error {
	var se *sendError
	if errors.As(err, &se) {
		return err
	}
	if ctx.Err() != nil {
		// The call itself ended: report why, not how the provider call
		// noticed it.
		err = context.Cause(ctx)
	}
	name, n := c.entry.Config.Name, c.attempts
	cl := retry.Classify(err)
	if pe := cl.Provider; pe != nil && pe.Raw != "" {
		// What the provider sent with its error status may be anything (a
		// proxy's page): never in a status, only here, at debug level.
		c.svc.log.Debug("provider error response", "request_id", c.requestID, "provider", name,
			"attempt", n, "provider_status", pe.Status, "body", pe.Raw)
	}
	if cl.Class != retry.ClassCanceled && cl.Class != retry.ClassDeadline {
		c.svc.metrics.ProviderError(name, cl.Class.String())
	}
	// Re-asks do not count against max_attempts: the attempt's number in
	// the policy's eyes leaves them out.
	d := c.policy.Decide(retry.Attempt{
		N: n - c.so.retries(), Class: cl, Streamed: res.streamed(), Now: time.Now(), Deadline: c.deadline,
	}, budget, nil)
	if !d.Retry() {
		if d.Stop == retry.StopBudget {
			c.svc.metrics.RetryBudgetExhausted(name)
		}
		return &retry.Failure{Err: err, Class: cl, Stop: d.Stop, Attempts: n, Provider: name}
	}

	c.svc.log.Info("retrying",
		"request_id", c.requestID, "provider", name, "attempt", n,
		"reason", cl.Reason.String(), "delay", d.Delay, "discard_partial", res.streamed(), "error", err)
	c.svc.metrics.Retry(name, cl.Reason.String())
	if err := c.sendWillRetry(n, &llmrelayv1.WillRetry{
		Reason:         llmrelayv1.RetryReason(cl.Reason),
		Delay:          durationpb.New(d.Delay),
		DiscardPartial: res.streamed(),
		Cause:          apierr.AttemptCause(cl, name, n),
	}); err != nil {
		return err
	}
	return &nextAttempt{delay: d.Delay, err: err}
}

// sendWillRetry sends w, the WillRetry that follows failed attempt n. Its
// error is a *sendError.
func (c *call) sendWillRetry(n int, w *llmrelayv1.WillRetry) error {
	w.NextAttempt = uint32(n + 1)
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

// runAttempt runs attempt n: it streams the provider's deltas to the client
// as they arrive and returns the assembled result, or the error that ended
// the attempt (with res holding what was sent before it). Once the provider
// has accepted the attempt (Provider.Stream returned), an attempt that
// receives no provider event for the call's idle timeout is cancelled and
// fails with retry.ErrStalled. Until then the provider's transport
// timeouts (dial, TLS handshake, response headers), its attempt timeout and
// the call's deadline bound the wait, so that a configured
// response_header_timeout is not cut short by the idle timer.
func (c *call) runAttempt(ctx context.Context, n int) (*attemptResult, error) {
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
	st, err := c.entry.Provider.Stream(actx, &preq)
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
		c.svc.metrics.FirstDelta(c.entry.Config.Name, time.Since(c.start))
	}
	res.deltas++
	de.event.Attempt = uint32(n)
	if err := c.out.send(&de.event); err != nil {
		return &sendError{err}
	}
	return nil
}
