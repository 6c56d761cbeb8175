package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// sendError is a failure to send an event to the client: never a provider
// failure, never retried.
type sendError struct{ err error }

func (e *sendError) Error() string { return "send to client: " + e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// isSendError reports whether err is, or wraps, a *sendError. (AsType:
// errors.As's target would escape, an allocation on the paths every call
// takes.)
func isSendError(err error) bool {
	_, ok := errors.AsType[*sendError](err)
	return ok
}

// run runs the call's attempt plan until an attempt succeeds or the plan
// ends the call, and returns the successful attempt's result. With
// structured output, an attempt succeeds once its reply conforms (or stays
// invalid under ON_INVALID_RETURN_TEXT); an invalid reply is re-asked (see
// checkOutput). A call that fails returns a *retry.Failure, an
// *apierr.Error when its structured output stayed invalid, or a *sendError
// when the client could not be written to.
//
// retry.Run executes the plan on retry-go, which makes the waits and ends
// them early when ctx ends, and runs the races of hedged attempts: each
// attempt streams on its own (attempter.Attempt), and once it ended the
// call settles it (attempter.Settle): after a failure that decides its
// round the plan decides (afterFailure), and the WillRetry event is sent
// with the step's exact delay before retry-go waits it.
func (c *call) run(ctx context.Context) (*attemptResult, error) {
	return retry.Run(ctx, c.turn.plan, c.eng.timer, attempter{c: c, ctx: ctx})
}

// attempter is the call's side of its attempts, as retry.Run runs them.
type attempter struct {
	c   *call
	ctx context.Context // the call's
}

// Attempt implements retry.Attempter: it runs attempt a, streaming its
// deltas to the client once a commits. With hedging it runs on a goroutine
// of its own, beside the other attempts of its race: it touches only what
// is a's (its result, its span) and, once committed, the emitter.
func (at attempter) Attempt(ctx context.Context, a *retry.Attempt) (*attemptResult, error) {
	c := at.c
	c.info.ObserveAttempt(a.N)
	c.info.ObserveTurn(c.turn.n)
	if a.Hedge {
		c.eng.log.Debug("hedging", "request_id", c.requestID, "attempt", a.N, "provider", a.Target.Entry.Config.Name, "model", a.Target.Model)
	}
	sctx, span := c.startAttempt(ctx, a)
	res, err := c.runAttempt(sctx, a)
	res.sctx, res.span = sctx, span
	return res, err
}

// Settle implements retry.Attempter, on the call's goroutine: it accounts
// for attempt a's usage, ends its span, and, when a decides its round,
// reports it to the plan (a failure: afterFailure; a success: the target's
// health, then the structured-output check).
func (at attempter) Settle(a *retry.Attempt, res *attemptResult, err error) (*attemptResult, error) {
	c := at.c
	defer c.endAttempt(a, res, err)
	if u, out := res.usage.Bounded(); out {
		c.eng.log.Warn("provider reported token counts out of range; counted within 0..4294967295", "request_id", c.requestID,
			"provider", a.Target.Entry.Config.Name, "model", a.Target.Model, "input", res.usage.InputTokens, "output", res.usage.OutputTokens,
			"reasoning", res.usage.ReasoningTokens, "cached_input", res.usage.CachedInputTokens, "cache_creation_input", res.usage.CacheCreationInputTokens)
		res.usage = u
	}
	c.usage.Add(res.usage)
	c.account(a.Target, res)
	if a.Hedge {
		c.eng.metrics.Hedge(a.Target.Entry.Config.Name, a.Outcome().String())
	}
	if !a.Decides() {
		if a.Outcome() == retry.OutcomeFailed {
			c.raceFailure(at.ctx, a, res, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, c.afterFailure(at.ctx, a, res, err)
	}
	c.turn.plan.Succeeded()
	res.attempt = a.N
	if c.turn.so != nil && res.finish != provider.FinishRefusal {
		// A refusal is the model's answer: nothing to validate, and
		// re-asking would only be refused again.
		return c.checkOutput(at.ctx, a.N, res)
	}
	return res, nil
}

// HedgeRefused implements retry.HedgeObserver.
func (at attempter) HedgeRefused(t provider.Target) {
	at.c.eng.metrics.Hedge(t.Entry.Config.Name, metrics.HedgeRefused)
}

// classify classifies the error of attempt a, which failed with err while
// the call's context was ctx: the call's own end when ctx ended (not how
// the provider call noticed it). It logs what the provider sent that the
// error is about and counts the provider error.
func (c *call) classify(ctx context.Context, a *retry.Attempt, err error) (error, retry.Classification) {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	name := a.Target.Entry.Config.Name
	cl := retry.Classify(err)
	if pe := cl.Provider; pe != nil && pe.Raw != "" {
		// What the provider sent that the error is about (an event that did
		// not decode, an error status's body: a proxy's page, say) may be
		// anything: never in a status, only here, at debug level.
		c.eng.log.Debug("provider error response", "request_id", c.requestID, "provider", name,
			"attempt", a.N, "provider_status", pe.Status, "body", pe.Raw)
	}
	if cl.Class != provider.ClassCanceled && cl.Class != provider.ClassDeadline {
		c.eng.metrics.ProviderError(name, cl.Class.String())
	}
	return err, cl
}

// raceFailure accounts for attempt a of a race, which failed with err
// before it produced a delta while another attempt of its race ran on:
// the failure counts (metrics, its target's health, its span), and nothing
// follows it.
func (c *call) raceFailure(ctx context.Context, a *retry.Attempt, res *attemptResult, err error) {
	err, cl := c.classify(ctx, a, err)
	c.turn.plan.RaceFailed(a, cl)
	c.eng.log.Debug("attempt failed beside another", "request_id", c.requestID, "attempt", a.N, "hedge", a.Hedge,
		"provider", a.Target.Entry.Config.Name, "class", cl.Class.String(), "error", err)
	if telemetry.Recording(res.sctx) {
		telemetry.AttemptFailed(res.sctx, telemetry.AttemptFailure{Class: cl.Class.String(), Err: err})
	}
}

// afterFailure reports attempt a, which failed with err and decides its
// round, to the plan. When the call retries, it logs and counts the retry,
// sends the WillRetry event and returns the step's Continue; otherwise it
// returns the *retry.Failure that ends the call (or the *sendError that
// already did).
func (c *call) afterFailure(ctx context.Context, a *retry.Attempt, res *attemptResult, err error) error {
	if _, ok := errors.AsType[*apierr.Error](err); ok || isSendError(err) {
		// Not a provider failure: the client could not be written to, or
		// the attempt ended the call itself (its output passed the limit).
		return err
	}
	n, t := a.N, a.Target
	name := t.Entry.Config.Name
	err, cl := c.classify(ctx, a, err)
	step := c.turn.plan.Failed(err, cl, res.streamed())
	c.traceFailure(res.sctx, err, cl, step, res)
	c.eng.observeStep(c.requestID, c.routeName(), a, step, res.streamed(), err)
	if !step.Retry() {
		return step.Failure
	}
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

// observeStep logs and counts the step the attempt plan took after
// attempt a of the call with requestID, on route ("" for none), failed
// with err (discardPartial: after output the client must discard): a
// retry the retry budget denied; a fallback to another target ("falling
// back", NameFallbacks) or a retry on a's target ("retrying"), each a
// retry (NameRetries). Generate and Embed calls report their steps here
// alike.
func (s *Engine) observeStep(requestID, route string, a *retry.Attempt, step retry.Step, discardPartial bool, err error) {
	name := a.Target.Entry.Config.Name
	if step.Decision.Stop == retry.StopBudget {
		s.metrics.RetryBudgetExhausted(name)
	}
	if !step.Retry() {
		return
	}
	if step.Fallback {
		from, to := s.routes.Label(a.Target), s.routes.Label(step.Target)
		s.log.Info("falling back",
			"request_id", requestID, "route", route, "from", from, "to", to, "attempt", a.N,
			"reason", step.Reason.String(), "stop", step.Decision.Stop.String(), "discard_partial", discardPartial, "error", err)
		s.metrics.Fallback(route, from, to)
	} else {
		s.log.Info("retrying",
			"request_id", requestID, "provider", name, "attempt", a.N,
			"reason", step.Reason.String(), "delay", step.Delay, "discard_partial", discardPartial, "error", err)
	}
	s.metrics.Retry(name, step.Reason.String())
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
	// attempt is the attempt's number, set once it succeeded.
	attempt int
	// sctx is the attempt's context, with its span (span).
	sctx context.Context
	span telemetry.Span
	text strings.Builder
	// blocks is the rest of the reply: nil while it has none.
	blocks *replyBlocks
	// order is the order of all the reply's blocks (for Message.parts).
	order  provider.Order
	finish provider.FinishReason
	usage  provider.Usage
	// reported says the provider reported usage; opened that its stream
	// opened (the provider took the request).
	reported, opened bool
	// deltas and partials count the deltas (text, reasoning, refusal and
	// tool-call fragments) and partial objects this attempt sent to the
	// client.
	deltas, partials int
	// outputBytes counts the attempt's output against the call's limit;
	// cut says the output was cut at the limit (truncation).
	outputBytes int64
	cut         bool
	// co is the delta being made (coalesce.go): taken when an event makes
	// a delta, given back when the attempt waits for its provider with
	// nothing pending (so before it reads its provider's end).
	co *coalescing
	// partial reads the reply as it streams, for partial objects; nil
	// without stream_partial_objects.
	partial *partialObjects
	// object is the conforming structured output, set once checked.
	object *structpb.Value
}

// replyBlocks is what a reply has besides its text. Most replies are
// text alone, and an attempt's result lives as long as its stream, so
// these fields, about 100 bytes, are allocated with the first of them.
type replyBlocks struct {
	toolCalls []*toolCallBlock
	reasoning []*reasoningBlock
	refusal   strings.Builder
	// providerTools are the blocks of tools the provider ran itself.
	providerTools []provider.ProviderTool
	// stopSequence is the stop sequence the provider said ended the
	// reply (provider.EventFinish), as it said it: rare, so kept here.
	stopSequence string
}

// more returns a copy of the reply's blocks besides its text, for
// reading (a few times per attempt, as it ends).
func (r *attemptResult) more() replyBlocks {
	if r.blocks == nil {
		return replyBlocks{}
	}
	return *r.blocks
}

// addBlocks returns the reply's blocks besides its text, for adding to.
func (r *attemptResult) addBlocks() *replyBlocks {
	if r.blocks == nil {
		r.blocks = new(replyBlocks)
	}
	return r.blocks
}

// produced returns the bytes of what the attempt produced, as an estimate
// of its output counts them (spend.Attempt.OutputBytes): its text,
// refusal, reasoning and tool-call arguments, shown or not.
func (r *attemptResult) produced() int64 {
	n := int64(r.text.Len())
	if b := r.blocks; b != nil {
		n += int64(b.refusal.Len())
		for _, rb := range b.reasoning {
			n += int64(rb.text.Len())
		}
		for _, tc := range b.toolCalls {
			n += int64(tc.arguments.Len())
		}
	}
	return n
}

// streamed reports whether the attempt sent the client anything that a
// retry must tell it to discard.
func (r *attemptResult) streamed() bool { return r.deltas > 0 || r.partials > 0 }

// runAttempt runs attempt a: it streams the provider's deltas to the
// client as they arrive, once a committed (see queueDelta), and returns the
// assembled result, or the error that ended the attempt (with res holding
// what was sent before it); errLost when another attempt of its race
// committed first.
// An attempt whose provider shows no sign of life within the first event
// timeout (the call's first_event_timeout, else the provider's default),
// or for the call's stream idle timeout once it streams, is cancelled and
// fails with a *retry.StallError (see stallTimer), which says whether the
// timeout was the caller's own stricter one. An attempt whose output
// reaches the call's limit is cancelled at once, which stops the provider's
// stream: under truncation it succeeds, cut, with FinishLength; otherwise
// it fails with OUTPUT_TOO_LARGE, which ends the call.
func (c *call) runAttempt(ctx context.Context, a *retry.Attempt) (*attemptResult, error) {
	res := &attemptResult{partial: c.turn.so.newPartial()}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := c.startStall(a, cancel)
	defer stall.stop()
	st, err := c.openStream(actx, a, stall)
	if err != nil {
		return res, stalled(ctx, actx, a.N, err)
	}
	res.opened = true
	defer st.Close()
	return res, c.relay(ctx, actx, a, st, res, stall)
}

// The attempt's waiting for its provider happens in relay, below
// runAttempt: every frame down to it stays on the call's stack for as long
// as the reply streams, so runAttempt keeps only a few words and the work
// that needs more (starting the timers, building the request) is done in
// functions of its own, which have returned before the wait.

// startStall starts attempt a's stall timer, which cancels it with cancel.
func (c *call) startStall(a *retry.Attempt, cancel context.CancelCauseFunc) *stallTimer {
	w := startStallTimer(&c.eng.stalls, c.eng.limits.Stall(c.turn.idle, c.turn.firstEvent, a.Target.Entry.Config.FirstEventTimeout), cancel)
	if testStallStarted != nil {
		testStallStarted(func() { cancel(w.timeouts.Stalled(retry.SettingStreamIdle)) })
	}
	return w
}

// openStream sends attempt a's request to its provider.
func (c *call) openStream(actx context.Context, a *retry.Attempt, stall *stallTimer) (provider.Stream, error) {
	preq := *c.turn.preq
	preq.Attempt = a.N
	preq.Model = a.Target.Model
	preq.Activity = &stall.act
	preq.Prepared = c.turn.takePrepared(a.Target)
	return a.Target.Entry.Provider.Stream(actx, &preq)
}

// stalled returns err, or the *retry.StallError (wrapped) that cancelled
// attempt n's context actx while the call's ctx goes on.
func stalled(ctx, actx context.Context, n int, err error) error {
	if ctx.Err() != nil {
		return err
	}
	// errors.AsType, not errors.As: As's target would escape, an
	// allocation for every attempt.
	if se, ok := errors.AsType[*retry.StallError](context.Cause(actx)); ok {
		return fmt.Errorf("attempt %d: %w", n, se)
	}
	return err
}

// relay streams attempt a's provider stream st to the client, folding
// each event into res, until the provider's stream ends (nil), fails, or
// the attempt ends the call (see runAttempt).
func (c *call) relay(ctx, actx context.Context, a *retry.Attempt, st provider.Stream, res *attemptResult, stall *stallTimer) error {
	// What the stream already holds joins the pending delta (coalesce.go).
	var buffered provider.BufferedStream
	if c.eng.streaming.CoalesceDeltas {
		buffered, _ = st.(provider.BufferedStream)
	}
	await, _ := st.(provider.AwaitStream)
	for {
		if await != nil && res.pending() == nil {
			// Holding no Event and no delta in the making while the
			// provider is slow.
			res.dropDelta()
			if testAwaiting != nil {
				testAwaiting(res.co != nil)
			}
			await.Await()
		}
		ev := events.Get().(*provider.Event)
		ready, err := recv(st, buffered, res.pending() != nil, ev)
		if !ready {
			events.Put(ev)
			// Nothing more is here yet: the pending delta goes now.
			if err := c.flushDelta(a, res, stall); err != nil {
				return err
			}
			continue
		}
		if err == nil && actx.Err() != nil && shows(ev) {
			// The attempt was cancelled (its call ended, another attempt
			// won its race, it stalled): what the provider's stream still
			// holds in its buffers is nobody's to see. Without this check
			// a reply the transport had already buffered whole would
			// stream on to its end. (Usage and the finish reason are
			// accounted for all the same.)
			err = context.Cause(actx)
		}
		if err != nil {
			putEvent(ev)
			return c.ended(ctx, actx, a, res, stall, err)
		}
		err = c.handle(a, ev, res, stall)
		putEvent(ev)
		if err != nil {
			return c.limited(a, res, stall, err)
		}
	}
}

// events are the Events relay reads into, one at a time: a call holds one
// only while it handles an event, not while it waits for the next.
var events = sync.Pool{New: func() any { return new(provider.Event) }}

// putEvent gives ev back to events, holding nothing of the event it was.
func putEvent(ev *provider.Event) {
	*ev = provider.Event{}
	events.Put(ev)
}

// recv reads st's next event into ev: with a delta pending, only one
// that buffered (st, when it can tell) already holds (ready false: none).
// The Event a stream returns is held in recvNext's or recvReady's frame,
// not in relay's, which stays under every event's sending (see
// runAttempt).
func recv(st provider.Stream, buffered provider.BufferedStream, pending bool, ev *provider.Event) (ready bool, err error) {
	switch {
	case !pending:
		if into, ok := st.(provider.IntoStream); ok {
			return true, into.RecvInto(ev)
		}
		return true, recvNext(st, ev)
	case buffered == nil:
		return false, nil
	}
	return recvReady(buffered, ev)
}

//go:noinline
func recvNext(st provider.Stream, ev *provider.Event) (err error) {
	*ev, err = st.Recv()
	return err
}

//go:noinline
func recvReady(st provider.BufferedStream, ev *provider.Event) (ready bool, err error) {
	*ev, ready, err = st.RecvBuffered()
	return ready, err
}

// ended ends attempt a, whose provider stream ended with err (io.EOF for
// its terminator): what arrived before the end is shown before it, as it
// would have been one delta at a time, so that a successful attempt's
// deltas are its reply whole. An attempt that lost its race, or whose
// call ended, shows nothing more and does not succeed, however its
// stream ended: it ends with its context's cause, as when an event
// arrives after it. A stalled attempt whose stream then ended whole
// (what arrived came before the stall) succeeds: its stall came too late
// to matter.
func (c *call) ended(ctx, actx context.Context, a *retry.Attempt, res *attemptResult, stall *stallTimer, err error) error {
	eof := errors.Is(err, io.EOF)
	switch {
	case ctx.Err() != nil:
		if eof {
			return context.Cause(actx)
		}
	case actx.Err() == nil || eof:
		if ferr := c.flushDelta(a, res, stall); ferr != nil {
			return ferr
		}
	}
	if eof {
		return nil
	}
	return stalled(ctx, actx, a.N, err)
}

// limited ends attempt a after handle returned err: a truncated reply
// succeeds (what fit is shown), an output limit's error ends the call
// (what fit is shown first), a lost race or a failed send ends it as it
// is.
func (c *call) limited(a *retry.Attempt, res *attemptResult, stall *stallTimer, err error) error {
	switch {
	case errors.Is(err, errTruncated):
		res.finish, res.cut = provider.FinishLength, true
		return c.flushDelta(a, res, stall)
	case errors.Is(err, errLost), isSendError(err):
		return err
	}
	if ferr := c.flushDelta(a, res, stall); ferr != nil {
		return ferr
	}
	return err
}

// shows reports whether ev is something the client is shown (text,
// reasoning, a refusal, a tool call), rather than accounted for (usage,
// the finish reason).
func shows(ev *provider.Event) bool {
	return ev.Kind != provider.EventUsage && ev.Kind != provider.EventFinish
}

// handle folds one provider event of attempt a into res and sends the
// client its delta, if it makes one. Output past the call's limit ends the
// attempt (meterOutput): cut at the limit and errTruncated, or an error
// that ends the call, for which a commits first (errLost when it cannot).
// A block the next request's assistant message could not take back
// (fitReply) fails the attempt as a protocol error, as a stream that does
// not decode does.
func (c *call) handle(a *retry.Attempt, ev *provider.Event, res *attemptResult, stall *stallTimer) error {
	if ev.Kind != provider.EventText {
		if err := fitReply(ev, res); err != nil {
			return err
		}
	}
	limited := c.meterOutput(a, ev, res)
	if limited != nil && !errors.Is(limited, errTruncated) {
		if !a.Commit() {
			return errLost
		}
		return limited
	}
	if !c.fold(ev, res) {
		return limited
	}
	if err := c.queueDelta(a, &res.co.frag, res, stall); err != nil {
		return err
	}
	return limited
}

// errLost ends an attempt that another attempt of its race beat to its
// first delta: it shows nothing.
var errLost = errors.New("another attempt answered first")

// fold folds one provider event into res and reports whether it makes a
// delta for the client, left in res.co.frag for handle to queue (queueDelta;
// the first one commits the attempt). A delta is what the client sees
// (text, reasoning, a refusal, a tool call's id, name, arguments or
// signature, which the HTTP doors show with the call); usage and finish
// reasons make none. fold returns
// before the delta is sent: its frame is large (the event's parts) and
// would otherwise sit under every send (see runAttempt).
func (c *call) fold(ev *provider.Event, res *attemptResult) (queue bool) {
	switch ev.Kind {
	case provider.EventText:
		if ev.Text == "" {
			return false
		}
		res.order.Add(ev, res.text.Len())
		res.text.WriteString(ev.Text)
		res.delta().frag = fragment{kind: ev.Kind, text: ev.Text}
		return true
	case provider.EventToolCall:
		tc := ev.ToolCall
		if tc == (provider.ToolCallDelta{Index: tc.Index}) {
			return false // nothing, or nothing left under the output limit
		}
		res.order.Add(ev, 0)
		res.addToolCall(tc)
		res.delta().frag = fragment{kind: ev.Kind, index: tc.Index, id: tc.ID, name: tc.Name, text: tc.ArgumentsDelta, signature: tc.Signature}
		return true
	case provider.EventReasoning:
		r := ev.Reasoning
		if r == (provider.ReasoningDelta{Index: r.Index}) {
			return false
		}
		res.order.Add(ev, 0)
		res.addReasoning(r)
		if r.Text == "" && r.Signature == "" && r.Redacted == "" && r.Format == "" {
			return false // the block's id or kind alone: it is in the final message
		}
		res.delta().frag = fragment{kind: ev.Kind, index: r.Index, text: r.Text, signature: r.Signature, redacted: r.Redacted, format: r.Format}
		return true
	case provider.EventRefusal:
		if ev.Text == "" {
			return false
		}
		res.addBlocks().refusal.WriteString(ev.Text)
		res.delta().frag = fragment{kind: ev.Kind, text: ev.Text}
		return true
	case provider.EventProviderTool:
		// A block of a tool the provider ran: no delta (nothing to show
		// as it streams), kept for the final message.
		if ev.ProviderTool != nil {
			res.order.Add(ev, 0)
			b := res.addBlocks()
			b.providerTools = append(b.providerTools, *ev.ProviderTool)
		}
	case provider.EventUsage:
		res.usage, res.reported = ev.Usage, true
	case provider.EventFinish:
		res.finish = ev.FinishReason
		// The last finish event has the word: one without a stop
		// sequence takes back an earlier one's.
		if ev.Text != "" {
			res.addBlocks().stopSequence = ev.Text
		} else if res.blocks != nil {
			res.blocks.stopSequence = ""
		}
	}
	return false
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

// Response headers sent with a call's first delta (the response's headers,
// when nothing sent them before): which attempt, provider and model the
// reply starts with. A door that writes headers once, before the reply (an
// HTTP door), shows the client where the answer comes from.
const (
	HeaderAttempts = "llmrelay-attempts"
	HeaderProvider = "llmrelay-provider"
	HeaderModel    = "llmrelay-model"
)

// answerHeaders sets the headers of the attempt whose delta is the call's
// first.
func (c *call) answerHeaders(a *retry.Attempt) {
	n := strconv.Itoa(a.N)
	if e := a.Target.Entry; e != nil {
		c.out.setHeader(HeaderAttempts, n, HeaderProvider, e.Config.Name, HeaderModel, a.Target.Model)
		return
	}
	c.out.setHeader(HeaderAttempts, n)
}
