package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"google.golang.org/grpc"
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
}

// Recv returns the next event. After the final event it returns io.EOF; a
// stream that ends without one returns ErrNoFinal; a failed call returns its
// *Error.
//
// A resumable call (GenerateRequest.resumable) survives a dropped
// connection: when the stream fails with UNAVAILABLE, ABORTED, INTERNAL,
// UNKNOWN or CANCELLED without llmrelay's ErrorInfo (a connection reset, a
// proxy's RST_STREAM), and not because its context ended,
// Recv picks the call up on a new stream, after the last event it
// returned (Resume; or Generate again with the same request_id, which
// llmrelay does not run twice, when no event had come yet), up to 8 times
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
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return nil, ErrNoFinal
		}
		if s.mayReissue(err) {
			s.reissueCall(err)
			continue
		}
		if !s.mayResume(err) {
			return nil, FromError(err)
		}
		if rerr := s.reconnect(err); rerr != nil {
			return nil, rerr
		}
	}
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
	// discard_partial set, discarded is the text the deltas since the
	// previous will_retry (or the start) carried, which the caller must
	// take back off the screen; otherwise it is empty.
	OnWillRetry func(w *llmrelayv1.WillRetry, discarded string)
	// OnPartialObject is called with each partial_object event: a whole
	// snapshot of the object so far, to replace the previous one. Not
	// every change gets one (the server bounds their bytes at 4 × the
	// reply's); the final object comes with the final event.
	OnPartialObject func(v *structpb.Value)
	// OnResume is called when a resumable call's stream dropped (cause)
	// and Collect picks the call up again after the event numbered
	// afterSequence (see Stream.Recv). Nothing is to be taken back: the
	// events go on where they stopped.
	OnResume func(afterSequence uint64, cause error)
	// OnReissue, when set, allows Collect to send a resumable call's
	// request again when the server lost the call (Stream.AllowReissue),
	// and is called just before, with why (an *Error: reason
	// RESUMABLE_CALL_LOST or RESUMABLE_CALL_NOT_FOUND) and the text the
	// deltas showed since the last discard, which the caller must take
	// back: the new call streams its reply from the start. Leave it nil to
	// have a lost call end Collect with its error.
	OnReissue func(cause error, discarded string)
}

// Collect reads r to its end, calling hooks (which may be nil) as events
// arrive, and returns the final event: its message is the answer, whatever
// failed attempts showed before it. A failed call returns its *Error, and a
// stream without a final returns ErrNoFinal. Heartbeat events (a call with
// heartbeat_interval) are skipped. A *Stream is closed on return.
func Collect(r Receiver, hooks *Hooks) (*llmrelayv1.Final, error) {
	if hooks == nil {
		hooks = &Hooks{}
	}
	// shown is the text shown since the last discard.
	var shown strings.Builder
	if s, ok := r.(*Stream); ok {
		defer s.Close()
		if hooks.OnResume != nil {
			s.onResume = hooks.OnResume
		}
		if hooks.OnReissue != nil {
			s.AllowReissue(func(cause error) {
				discarded := shown.String()
				shown.Reset()
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
