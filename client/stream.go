package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// ErrNoFinal is returned when a Generate stream ends cleanly without its
// final event. llmrelay never does that; a proxy that cuts streams might.
var ErrNoFinal = errors.New("llmrelay: the stream ended without a final event")

// Receiver is a source of Generate events: a *Stream, or the stream the
// generated stub returns.
type Receiver interface {
	Recv() (*llmrelayv1.GenerateEvent, error)
}

// Stream is one Generate call in progress. It is not safe for concurrent use.
type Stream struct {
	recv   Receiver
	cancel context.CancelFunc
	final  bool

	// What resuming the call needs (resume.go).
	stub      llmrelayv1.LLMServiceClient
	ctx       context.Context
	req       *llmrelayv1.GenerateRequest // nil for a Stream of Client.Resume
	opts      []grpc.CallOption
	requestID string
	// resumable: the call survives its stream (asked for, or said so by
	// the response headers).
	resumable bool
	// headersRead: the response headers were looked at.
	headersRead bool
	// last is the sequence of the last event received; received says
	// there was one.
	last     uint64
	received bool
	// tries counts the reconnections since the last event received;
	// resumes all of them.
	tries, resumes int
	onResume       func(afterSequence uint64, cause error)
	// resuming: the stream in recv is a Resume.
	resuming bool
	// reissue, when set, allows the request to be sent again after the
	// server lost the call (AllowReissue); reissues counts how often.
	reissue  func(cause error)
	reissues int
	// closed reports whether the Client's connection was closed, after
	// which the call is not picked up again; nil: never.
	closed func() bool
}

// Recv returns the next event. After the final event it returns io.EOF; a
// stream that ends without one returns ErrNoFinal; a failed call returns its
// *Error.
//
// A resumable call (GenerateRequest.resumable) survives a dropped
// connection: when the stream fails with UNAVAILABLE, ABORTED, INTERNAL,
// UNKNOWN or CANCELLED without llmrelay's ErrorInfo (a connection reset, a
// proxy's RST_STREAM), and not because its context ended or its Client
// was closed, Recv picks the call up on a new stream, after the last event it
// returned (Resume; or Generate again with the same request_id, which
// llmrelay does not run twice, when no event had come yet; or, for a call
// whose id only the response headers gave, which a heartbeat sends at
// once, Resume from its first event), up to 8 times
// in a row with a backoff from 100ms to 2s, and goes on as if nothing
// happened: no event is missed or repeated. It does the same after
// RESUME_INTERRUPTED (the server serving a Resume shuts down) and
// STATE_STORE_UNAVAILABLE, which leave the call running. Other errors of
// llmrelay's own (the call's failure; NOT_FOUND when the call can no
// longer be resumed) end the stream as usual.
//
// A resumable call the server lost (ABORTED, RESUMABLE_CALL_LOST: the
// server running it crashed or shut down before it finished; or NOT_FOUND
// in answer to the stream's own Resume after a drop) ends the stream too,
// unless the caller allowed its request to be sent again (AllowReissue;
// Collect with Hooks.OnReissue): then, up to 3 times, Recv tells the
// caller to discard what it was shown, sends the same request again (the
// server accepts its request_id and replaces the lost call), and returns
// the new call's events, from sequence 1.
func (s *Stream) Recv() (*llmrelayv1.GenerateEvent, error) {
	for {
		ev, err := s.recv.Recv()
		switch {
		case err == nil:
			s.readHeaders()
			if s.Resumable() && s.received {
				// What a resumed stream must continue: the next number.
				if ev.GetSequence() <= s.last {
					continue // already returned (llmrelay never sends it twice)
				}
				if ev.GetSequence() != s.last+1 {
					return nil, fmt.Errorf("%w: got event %d after %d", ErrEventsMissing, ev.GetSequence(), s.last)
				}
			}
			s.last, s.received, s.tries = ev.GetSequence(), true, 0
			if ev.GetFinal() != nil {
				s.final = true
			}
			return ev, nil
		case errors.Is(err, io.EOF) && s.final:
			s.readTrailer()
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, ErrNoFinal
		}
		s.failedHeaders()
		if s.mayReissue(err) {
			s.reissueCall(err)
			continue
		}
		if !s.mayResume(err) {
			return nil, s.errorOf(err)
		}
		if rerr := s.reconnect(err); rerr != nil {
			return nil, rerr
		}
	}
}

// readTrailer learns the call's request id from the trailer of a stream
// that ended after its final event, when neither the request nor the
// headers gave it: llmrelay names every call's there, and a call that is
// not resumable nowhere else.
func (s *Stream) readTrailer() {
	if s.requestID == "" {
		s.requestID = s.trailerRequestID()
	}
}

// trailerRequestID returns the llmrelay-request-id of the stream's
// trailer, "" when it has none.
func (s *Stream) trailerRequestID() string {
	if cs, ok := s.recv.(interface{ Trailer() metadata.MD }); ok {
		if ids := cs.Trailer().Get(HeaderRequestID); len(ids) > 0 {
			return ids[0]
		}
	}
	return ""
}

// errorOf returns err, which ended the call, as an *Error that names the
// call's request id: the ErrorInfo's, else the llmrelay-request-id
// trailer's (a status without llmrelay's ErrorInfo: a proxy's, the
// transport's), else the one the request set.
func (s *Stream) errorOf(err error) *Error {
	e := FromError(err)
	if e.RequestID == "" {
		e.RequestID = s.trailerRequestID()
	}
	if e.RequestID == "" {
		e.RequestID = s.requestID
	}
	return e
}

// Events returns the stream's events, to range over once. The sequence ends
// after the final event, or with one (nil, err) pair when the call fails
// (err as from Recv). Leaving the loop early, or reaching its end, closes
// the stream.
//
//	for ev, err := range stream.Events() {
//		if err != nil { ... }
//		switch e := ev.Event.(type) { ... }
//	}
func (s *Stream) Events() iter.Seq2[*llmrelayv1.GenerateEvent, error] {
	return func(yield func(*llmrelayv1.GenerateEvent, error) bool) {
		defer s.Close()
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Close ends the call, if it is still running, and releases it. It is safe
// to call more than once.
func (s *Stream) Close() {
	if s.cancel != nil {
		s.cancel()
	}
}

// Hooks show a stream while Collect reads it. Every field is optional.
type Hooks struct {
	// OnDelta is called with each delta, in order, as it arrives.
	OnDelta func(d *llmrelayv1.Delta)
	// OnWillRetry is called with each will_retry event. When the event has
	// discard_partial set, discarded is the text the deltas of its turn
	// carried since the turn's previous will_retry (or the turn's start),
	// which the caller must take back off the screen; otherwise it is
	// empty. With server tools, a will_retry concerns its own turn only:
	// the text of earlier turns and the tool results stay.
	OnWillRetry func(w *llmrelayv1.WillRetry, discarded string)
	// OnPartialObject is called with each partial_object event: a whole
	// snapshot of the object so far, to replace the previous one. Not
	// every change gets one (the server bounds their bytes at 4 × the
	// reply's); the final object comes with the final event.
	OnPartialObject func(v *structpb.Value)
	// OnTurn is called when a call with server tools moves on to its next
	// model turn (the first event of turn n, n > 1, is about to be
	// handled): the turn before, its text and its tool results, is over
	// and is never discarded. A call without server tools has one turn
	// and never calls it.
	OnTurn func(turn uint32)
	// OnToolProgress is called with each tool_progress event: a server
	// tool the model called (tool_call_id) is running and reported
	// progress.
	OnToolProgress func(p *llmrelayv1.ToolProgress)
	// OnToolResult is called with each tool_result event: a server tool
	// returned (or failed: is_error), and this is what the model is sent.
	// Never discarded: a later will_retry concerns a later turn.
	OnToolResult func(r *llmrelayv1.ToolResult)
	// OnResume is called when a resumable call's stream dropped (cause)
	// and Collect picks the call up again after the event numbered
	// afterSequence (see Stream.Recv). Nothing is to be taken back: the
	// events go on where they stopped.
	OnResume func(afterSequence uint64, cause error)
	// OnReissue, when set, allows Collect to send a resumable call's
	// request again when the server lost the call (Stream.AllowReissue),
	// and is called just before, with why (an *Error: reason
	// RESUMABLE_CALL_LOST or RESUMABLE_CALL_NOT_FOUND) and the text the
	// deltas showed since the last discard (with server tools, the earlier
	// turns' text too), which the caller must take back: the new call
	// streams its reply from the start. Leave it nil to have a lost call
	// end Collect with its error.
	OnReissue func(cause error, discarded string)
}

// Collect reads r to its end, calling hooks (which may be nil) as events
// arrive, and returns the final event: its message is the answer, whatever
// failed attempts showed before it. A failed call returns its *Error, and a
// stream without a final returns ErrNoFinal. Heartbeat events (a call with
// heartbeat_interval) are skipped. A *Stream is closed on return.
//
// With server tools (GenerateRequest.server_tools) the call runs in turns
// (GenerateEvent.turn): Collect keeps what each turn showed apart, so that
// a will_retry discards only its own turn's text, and reports the tool
// events (OnToolProgress, OnToolResult) and each new turn (OnTurn). The
// final's message is the last turn's; its transcript holds every turn,
// with the tool results, and its turns counts them.
func Collect(r Receiver, hooks *Hooks) (*llmrelayv1.Final, error) {
	if hooks == nil {
		hooks = &Hooks{}
	}
	// shown is the text the current turn showed since its last discard;
	// earlier the text of the turns before it (a lost call issued again
	// takes back both); turn is the current turn, 0 before the first.
	var shown, earlier strings.Builder
	var turn uint32
	if s, ok := r.(*Stream); ok {
		defer s.Close()
		if hooks.OnResume != nil {
			s.onResume = hooks.OnResume
		}
		if hooks.OnReissue != nil {
			s.AllowReissue(func(cause error) {
				discarded := earlier.String() + shown.String()
				earlier.Reset()
				shown.Reset()
				turn = 0
				hooks.OnReissue(cause, discarded)
			})
		}
	}
	for {
		ev, err := r.Recv()
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, ErrNoFinal):
			return nil, ErrNoFinal
		case err != nil:
			return nil, FromError(err)
		}
		// A heartbeat's turn is 0 (it belongs to none), and so is every
		// event of a server older than server tools.
		if n := ev.GetTurn(); n > turn {
			if turn > 0 {
				earlier.WriteString(shown.String())
				shown.Reset()
				if hooks.OnTurn != nil {
					hooks.OnTurn(n)
				}
			}
			turn = n
		}
		switch e := ev.GetEvent().(type) {
		case *llmrelayv1.GenerateEvent_Delta:
			shown.WriteString(e.Delta.GetText())
			if hooks.OnDelta != nil {
				hooks.OnDelta(e.Delta)
			}
		case *llmrelayv1.GenerateEvent_WillRetry:
			discarded := ""
			if e.WillRetry.GetDiscardPartial() {
				discarded = shown.String()
				shown.Reset()
			}
			if hooks.OnWillRetry != nil {
				hooks.OnWillRetry(e.WillRetry, discarded)
			}
		case *llmrelayv1.GenerateEvent_PartialObject:
			if hooks.OnPartialObject != nil {
				hooks.OnPartialObject(e.PartialObject)
			}
		case *llmrelayv1.GenerateEvent_ToolProgress:
			if hooks.OnToolProgress != nil {
				hooks.OnToolProgress(e.ToolProgress)
			}
		case *llmrelayv1.GenerateEvent_ToolResult:
			if hooks.OnToolResult != nil {
				hooks.OnToolResult(e.ToolResult)
			}
		case *llmrelayv1.GenerateEvent_Final:
			drain(r)
			return e.Final, nil
		}
	}
}

// drain reads what follows the final event (nothing, by the contract) so
// that the call completes.
func drain(r Receiver) {
	for {
		if _, err := r.Recv(); err != nil {
			return
		}
	}
}
