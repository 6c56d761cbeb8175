package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"google.golang.org/protobuf/proto"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/route"
)

// Response headers of a resumable call (GenerateRequest.resumable).
const (
	// HeaderRequestID carries the call's request id: the id Resume takes.
	HeaderRequestID = "llmrelay-request-id"
	// HeaderResumable is "true" on a call that is resumable.
	HeaderResumable = "llmrelay-resumable"
)

// mayResume reports whether a request may turn out resumable once the
// hooks ran: it asks to be, or leaves it to a route that makes it so.
func mayResume(req *llmrelayv1.GenerateRequest, res *route.Resolved) bool {
	if res.Route == nil {
		return req.GetResumable()
	}
	return res.Route.Defaults.ResumableFor(req.Resumable)
}

// fingerprint identifies a request, so that a repeated Generate of a
// resumable call can be told from another request under the same id.
func fingerprint(req *llmrelayv1.GenerateRequest) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// makeResumable makes the call resumable (internal/resume): it creates the
// call's log, tells the client the call's id in the response headers and
// returns the context the call runs on from then on, detached from the
// client's stream (its values, deadline and the shutdown's cut-off, not
// the client's cancellation), and end, which Generate defers: the
// stream no longer reads the call once Generate returns.
//
// A call of the same id, key and request kept already is
// resume.ErrAttach: Generate replays it instead (attach). When the
// call cannot be kept (resume.CannotKeep: the store is unreachable, or
// this replica's kept calls fill its bound), it runs as an ordinary call:
// its client still gets its answer, and the headers do not say it is
// resumable.
func (c *call) makeResumable(ctx context.Context, sink Sink) (detached context.Context, end func(), err error) {
	detached, cancel := c.eng.resume.Detach(ctx)
	rc, err := c.eng.resume.Start(ctx, c.requestID, ownerOf(c.id), c.fingerprint, cancel)
	if err != nil {
		cancel(nil)
		if !resume.CannotKeep(err) {
			return ctx, nil, err
		}
		c.eng.log.Warn("resumable call runs as an ordinary call: its log cannot be kept", "request_id", c.requestID, "error", err)
		return ctx, func() {}, nil
	}
	// Headers go out with the first event (or at once with a
	// heartbeat): setting them commits nothing.
	setResumableHeaders(sink, c.requestID)
	c.out.mu.Lock()
	c.out.log = rc
	c.out.mu.Unlock()
	// The client going away while nothing is being sent.
	stopWatch := context.AfterFunc(ctx, c.out.clientGone)
	return detached, func() {
		stopWatch()
		c.out.clientGone() // Generate returns: nobody reads the call here any more
		cancel(nil)
	}, nil
}

// attach serves a Generate that repeats a resumable call still kept (the
// same id, key and request: a client library's retry, say): it streams
// that call from its first event, as Resume would, and runs nothing.
func (s *Engine) attach(ctx context.Context, requestID string, owner *auth.Identity, sink Sink) error {
	s.log.Info("generate repeats a resumable call still kept: streaming it from its first event", "request_id", requestID)
	setResumableHeaders(sink, requestID)
	return replayResult(ctx, s.resume.Replay(ctx, requestID, ownerOf(owner), 0, sendEncoded(sink)))
}

// Attach is admission's attach step: the one owner of whether a Generate
// repeats a resumable call still kept (the same request_id, key and
// request: a client library's retry), which Generate then streams from
// its first event and runs nothing (attach). Such a call costs nothing,
// so the steps that charge a call for what it runs take nothing for it:
// no budget reservation (Budget), no provider slot (ProviderQueue), and
// at its key's stream limit a Resume reader's lease rather than a refusal
// (KeyLimits.Start), as Resume would take. The decision goes into the
// call record (callinfo.Info.SetAttach), made once, by this step or by
// the key's stream limit when it needs it first. Only a request that
// carries a request_id and may be resumable (it asks to be, or its route
// makes its calls resumable by default: mayAttach) is looked up, in one
// read of the store (resume.Registry.Attaches); every other request is
// no attach without a look.
type Attach struct{ Resume *resume.Registry }

// Check implements the step.
func (a Attach) Check(ctx context.Context, req any) error {
	a.Decide(ctx, req)
	return nil
}

// Decide returns whether the call of request req attaches, deciding it
// into the call record unless it was decided already.
func (a Attach) Decide(ctx context.Context, req any) bool {
	info := callinfo.From(ctx)
	g := mayAttach(info, req)
	if g == nil || a.Resume == nil {
		return false
	}
	if attaches, decided := info.Attach(); decided {
		return attaches
	}
	if id, ok := callinfo.CanonicalRequestID(g.GetRequestId()); ok && id != g.RequestId {
		// The id's one form, as Generate fingerprints it (newCall).
		g.RequestId = id
	}
	caller, _ := auth.FromContext(ctx)
	attaches := a.Resume.Attaches(ctx, g.GetRequestId(), ownerOf(caller), fingerprint(g))
	info.SetAttach(attaches)
	return attaches
}

// mayAttach returns req as a GenerateRequest that may attach to a kept
// call, nil for any other request: what makes the attach step free for
// every other call. It names its id and may be resumable: it asks to be,
// or leaves it to its route (info's resolution), which makes it so
// (mayResume, as Generate decides). Before the call's model is resolved
// (the key's stream limit decides first), a request that leaves it to
// its route may be: a call kept under its id and fingerprint was
// resumable, whatever made it so.
func mayAttach(info *callinfo.Info, req any) *llmrelayv1.GenerateRequest {
	g := attachable(req)
	if g == nil {
		return nil
	}
	if res, ok := info.Resolved(); ok && !mayResume(g, res) {
		return nil
	}
	return g
}

// attachable returns req as a GenerateRequest that names its id and does
// not refuse to be resumable, nil for any other request.
func attachable(req any) *llmrelayv1.GenerateRequest {
	g, ok := req.(*llmrelayv1.GenerateRequest)
	if !ok || g.GetRequestId() == "" || (g.Resumable != nil && !*g.Resumable) {
		return nil
	}
	return g
}

// attaching reports whether admission decided that the call of req
// attaches (Attach): only such a call takes nothing of the steps after it.
// The decision stands as made, before the model was resolved or after.
func attaching(ctx context.Context, req any) bool {
	if attachable(req) == nil {
		return false
	}
	attaches, _ := callinfo.From(ctx).Attach()
	return attaches
}

// ownerOf returns what owns the resumable calls of the API key id (nil:
// the server has no keys): the key itself, by its ID, which a rename of
// the key keeps; its name too, for the logs of earlier versions.
func ownerOf(id *auth.Identity) resume.Owner {
	if id == nil {
		return resume.Owner{}
	}
	return resume.Owner{ID: id.ID, Name: id.Name}
}

// setResumableHeaders tells the client, in the response headers, that the
// call is resumable and its id.
func setResumableHeaders(sink Sink, requestID string) {
	sink.SetHeader(HeaderRequestID, requestID, HeaderResumable, "true")
}

// Resume streams to sink the events of a resumable call after the
// client's last one, then the call's live events until it ends
// (resume.Registry.Replay), for an admitted caller: only the key that
// started the call may resume it. It returns the call's own error, or why
// the replay ended, as an *apierr.Error.
func (s *Engine) Resume(ctx context.Context, req *llmrelayv1.ResumeRequest, sink Sink) error {
	id, _ := callinfo.CanonicalRequestID(req.GetRequestId())
	caller, _ := auth.FromContext(ctx)
	err := s.resume.Replay(ctx, id, ownerOf(caller), req.GetAfterSequence(), sendEncoded(sink))
	if err = replayResult(ctx, err); err != nil {
		return apierr.FromError(err)
	}
	return nil
}

// sendEncoded returns a Replay's send for stream: it decodes each event
// the log holds and sends it as it is, sequence included.
func sendEncoded(sink Sink) func([]byte) error {
	return func(data []byte) error {
		ev := &llmrelayv1.GenerateEvent{}
		if err := proto.Unmarshal(data, ev); err != nil {
			return apierr.FromError(err)
		}
		return sink.Send(ev)
	}
}

// replayResult is the status a replay ends its stream with: the call's
// own, or why the replay ended (a client gone: its context's cause; this
// server shutting down: RESUME_INTERRUPTED, for the call runs on).
func replayResult(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, apierr.ErrShuttingDown) {
		return resume.Interrupted()
	}
	return apierr.FromError(cause)
}

// deliver sends ev, numbered, to the client and, for a resumable call, to
// its log; once the client's stream went away, to the log only. e.mu is
// held.
func (e *emitter) deliver(ev *llmrelayv1.GenerateEvent) error {
	if e.log == nil {
		return e.sink.Send(ev)
	}
	data, _ := proto.Marshal(ev)
	e.log.Append(ev.GetSequence(), data)
	if !e.gone {
		if err := e.sink.Send(ev); err != nil {
			e.goneLocked()
		}
	}
	return nil
}

// clientGone says the client's stream went away (or Generate is
// returning): a resumable call goes on without it.
func (e *emitter) clientGone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.goneLocked()
}

func (e *emitter) goneLocked() {
	if e.log != nil && !e.gone {
		e.gone = true
		e.log.Detach()
	}
}

// endLog ends a resumable call's log with the call's outcome (nil: its
// final was sent), numbered after its last event, and returns the error
// the call ends with: err, or what the log made of it (a call cut off by
// the shutdown is lost: resume.Call.End). The heartbeat stops first, so
// that no event follows the end. Only the call's goroutine calls it.
func (e *emitter) endLog(err error) error {
	if e.log == nil {
		return err
	}
	e.stopHeartbeat()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.End(e.seq+1, err)
}
