package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine"
)

// errCannotDiscard ends a call whose stream would have to take back output
// its client was shown, which a client that did not opt in to restarts
// cannot do.
var errCannotDiscard = errors.New("the client cannot discard output it was shown")

// exchange is one call's HTTP response: the engine's Sink for the call,
// writing its events in the call's wire format. It writes nothing before
// the first thing the client is to see, so a call that fails before its
// first delta, after however many invisible attempts, is still answered
// with an HTTP error status the SDKs understand.
//
// The engine calls it from one goroutine at a time.
type exchange struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	f   format
	r   replyInfo
	enc streamEncoder // nil: the reply is one response body
	buf frame
	// committed: the status line and headers are written; ended: the
	// reply is complete (its final, or its error, is written).
	committed, ended bool
	// started is committed for a streamed reply, read by the client's
	// deadline (clientDeadline) on the call contexts' shared timer.
	started atomic.Bool
	// shown: the client was shown output it would have to discard if the
	// attempt it came from failed.
	shown bool
	// final is the call's Final, once sent.
	final *llmrelayv1.Final
	// early is the usage the provider of the attempt whose first delta
	// comes next reported before it (EarlyUsage), for the stream's
	// opening; nil for none.
	early *llmrelayv1.Usage
	// status is the HTTP status written (0 before).
	status int
	// tools holds a streamed call's tool calls while server tools may run
	// (servertools.go); nil when none can. turn is the turn of the last
	// delta shown.
	tools *toolTurns
	turn  uint32
}

// The engine's optional Sink capabilities an exchange has.
var (
	_ engine.ShownOutputKeeper = (*exchange)(nil)
	_ engine.EarlyUsageSink    = (*exchange)(nil)
)

func newExchange(w http.ResponseWriter, f format, r replyInfo, stream bool) *exchange {
	x := &exchange{w: w, rc: http.NewResponseController(w), f: f, r: r}
	if stream {
		x.enc = f.stream(&x.r)
	}
	return x
}

// Send implements the engine's Sink.
func (x *exchange) Send(ev *llmrelayv1.GenerateEvent) error {
	if x.ended {
		return errCannotDiscard
	}
	switch e := ev.GetEvent().(type) {
	case *llmrelayv1.GenerateEvent_Delta:
		if x.enc == nil {
			return nil // the reply's Final has it all
		}
		if x.tools != nil {
			if e.Delta.GetToolCall() != nil {
				x.tools.hold(ev)
				return nil
			}
			x.tools.next(ev.GetTurn())
		}
		return x.delta(ev)
	case *llmrelayv1.GenerateEvent_WillRetry:
		if x.tools != nil {
			x.tools.discard()
		}
		return x.willRetry(e.WillRetry, ev.GetAttempt())
	case *llmrelayv1.GenerateEvent_ToolResult:
		if x.tools != nil {
			x.tools.ranAtServer(e.ToolResult.GetToolCallId())
		}
		return x.keepAlive()
	case *llmrelayv1.GenerateEvent_ToolProgress:
		return x.keepAlive()
	case *llmrelayv1.GenerateEvent_Final:
		return x.finish(e.Final, ev.GetAttempt())
	case *llmrelayv1.GenerateEvent_Heartbeat:
		return x.keepAlive()
	}
	// partial_object: neither format has a place for it; the reply's text
	// streams the same object.
	return nil
}

// delta writes one delta of a streamed reply. A delta of a later turn
// than the last shown starts a new block (Anthropic's format).
func (x *exchange) delta(ev *llmrelayv1.GenerateEvent) error {
	if err := x.commit(); err != nil {
		return err
	}
	b := x.buf.reset()
	if t := ev.GetTurn(); t > x.turn {
		if x.turn != 0 {
			b = x.enc.turn(b)
		}
		x.turn = t
	}
	x.shown = true
	return x.write(x.enc.delta(b, ev.GetDelta(), ev.GetAttempt()))
}

// keepAlive writes the format's keep-alive on a stream under way: for a
// heartbeat, or a server tool's sign of life.
func (x *exchange) keepAlive() error {
	if x.enc == nil || !x.committed {
		return nil
	}
	return x.write(x.enc.ping(x.buf.reset()))
}

// willRetry handles a failed attempt that another follows. Nothing of it
// shows unless the client was shown output of the failed attempt: then a
// client that opted in is told to discard it, and any other cannot be,
// so its reply ends with an error (the door asks the engine for
// MIDSTREAM_FAIL for such clients, so this happens only when a call
// replaces shown output anyway).
func (x *exchange) willRetry(w *llmrelayv1.WillRetry, attempt uint32) error {
	if x.enc == nil || !x.shown {
		return nil
	}
	x.shown = false
	if !x.r.extension {
		x.fail(failure{
			status: http.StatusBadGateway, reason: apierr.ReasonMidstreamFailed,
			message: "the attempt whose output was streamed failed, and another would replace it",
		})
		return errCannotDiscard
	}
	return x.write(x.enc.restart(x.buf.reset(), w, attempt))
}

// finish writes the call's Final: the whole reply, or a stream's end.
func (x *exchange) finish(f *llmrelayv1.Final, attempt uint32) error {
	x.final = f
	if x.enc != nil {
		if x.tools != nil {
			for _, ev := range x.tools.left(f) {
				if err := x.delta(ev); err != nil {
					return err
				}
			}
		}
		if err := x.commit(); err != nil {
			return err
		}
		b, err := x.enc.final(x.buf.reset(), f)
		x.ended = true
		if err != nil {
			return err
		}
		return x.write(b)
	}
	body, err := x.f.reply(&x.r, clientFinal(f))
	if err != nil {
		return err
	}
	h := x.w.Header()
	h.Set(HeaderAttempts, strconv.FormatUint(uint64(f.GetAttempts()), 10))
	h.Set(HeaderProvider, f.GetProvider())
	h.Set(HeaderModel, f.GetModel())
	return x.reply(body)
}

// reply answers with a whole JSON body, with the headers every response
// carries.
func (x *exchange) reply(body []byte) error {
	h := x.w.Header()
	x.setHeaders(h)
	h.Set("Content-Type", "application/json")
	x.committed, x.ended, x.status = true, true, http.StatusOK
	x.w.WriteHeader(http.StatusOK)
	_, err := x.w.Write(body)
	return err
}

// EarlyUsage implements engine.EarlyUsageSink: the usage the provider of
// the attempt about to send its first delta reported before it, for a
// streamed reply's opening (Anthropic's message_start), which that delta
// writes. A reply already started (by an earlier attempt's output, or at
// once for a heartbeat) keeps the opening it had; an attempt that starts
// none leaves it to the next one's.
func (x *exchange) EarlyUsage(u *llmrelayv1.Usage) {
	if !x.committed {
		x.early = u
	}
}

// KeepsShownOutput implements engine.ShownOutputKeeper: a streamed reply
// to a client that did not opt in to restarts cannot take back what it
// showed, so the engine makes no structured-output re-ask of it (the
// door asks for retry.midstream FAIL too: cannotDiscard).
func (x *exchange) KeepsShownOutput() bool { return x.enc != nil && !x.r.extension }

// SetHeader implements the engine's Sink: a header of the reply, if it is
// not sent yet.
func (x *exchange) SetHeader(kv ...string) {
	if !x.committed {
		for i := 0; i+1 < len(kv); i += 2 {
			x.w.Header().Set(kv[i], kv[i+1])
		}
	}
}

// SendHeader implements the engine's Sink: a streamed reply starts now (a
// call with heartbeats starts at once); a reply that is one body waits
// for the Final, since its status depends on it.
func (x *exchange) SendHeader() error {
	if x.enc == nil {
		return nil
	}
	return x.commit()
}

// commit starts a streamed reply: the status, the headers, and the
// format's opening event.
func (x *exchange) commit() error {
	if x.committed {
		return nil
	}
	x.committed, x.status = true, http.StatusOK
	x.started.Store(true)
	h := x.w.Header()
	x.setHeaders(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not hold the stream back
	x.w.WriteHeader(http.StatusOK)
	return x.write(x.enc.start(x.buf.reset(), x.early))
}

// setHeaders sets the request id, which every response carries. The
// engine sets the attempt, provider and model a streamed reply starts with
// (SetHeader, with the call's first delta); a whole reply takes them from
// its Final, an error from its metadata.
func (x *exchange) setHeaders(h http.Header) {
	h.Set(HeaderRequestID, x.r.requestID)
	if _, ok := x.f.(anthropic); ok {
		h.Set(HeaderAnthropicRequestID, x.r.requestID)
	}
}

// write sends one event (or a whole frame of them) and flushes it.
func (x *exchange) write(b []byte) error {
	x.buf.b = b[:0] // keep what the buffer grew to for the next event
	if len(b) == 0 {
		return nil
	}
	if _, err := x.w.Write(b); err != nil {
		return err
	}
	return x.rc.Flush()
}

// fail answers a call that failed: with the error's HTTP status when
// nothing was sent yet, else with the format's error event, which ends
// the stream.
func (x *exchange) fail(f failure) {
	if x.ended {
		return
	}
	x.ended = true
	if f.reason == apierr.ReasonMidstreamFailed && !x.r.extension {
		f.message += "; a client that can discard what it was shown sends the header " +
			HeaderMidstream + ": " + MidstreamRestart + " to have llmrelay restart the reply instead"
	}
	if x.committed {
		if x.enc != nil {
			_ = x.write(x.enc.fail(x.buf.reset(), f))
		}
		return
	}
	body, status := x.f.errorBody(f, x.r.requestID)
	h := x.w.Header()
	x.setHeaders(h)
	h.Del(HeaderModel) // the attempts failed: no model answered
	h.Set(HeaderAttempts, "0")
	if n := f.metadata["attempts"]; n != "" {
		h.Set(HeaderAttempts, n)
	}
	if p := f.metadata["provider"]; p != "" {
		h.Set(HeaderProvider, p)
	}
	f.setRetryHeaders(h)
	h.Set("Content-Type", "application/json")
	x.committed, x.status = true, status
	x.w.WriteHeader(status)
	_, _ = x.w.Write(body)
}
