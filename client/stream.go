package client

import (
	"context"
	"errors"
	"io"
	"iter"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
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
}

// Recv returns the next event. After the final event it returns io.EOF; a
// stream that ends without one returns ErrNoFinal; a failed call returns its
// *Error.
func (s *Stream) Recv() (*llmrelayv1.GenerateEvent, error) {
	ev, err := s.recv.Recv()
	switch {
	case errors.Is(err, io.EOF) && s.final:
		return nil, io.EOF
	case errors.Is(err, io.EOF):
		return nil, ErrNoFinal
	case err != nil:
		return nil, FromError(err)
	}
	if ev.GetFinal() != nil {
		s.final = true
	}
	return ev, nil
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
	// OnPartialObject is called with each partial_object event.
	OnPartialObject func(v *structpb.Value)
}

// Collect reads r to its end, calling hooks (which may be nil) as events
// arrive, and returns the final event: its message is the answer, whatever
// failed attempts showed before it. A failed call returns its *Error, and a
// stream without a final returns ErrNoFinal. Heartbeat events (a call with
// heartbeat_interval) are skipped. A *Stream is closed on return.
func Collect(r Receiver, hooks *Hooks) (*llmrelayv1.Final, error) {
	if s, ok := r.(*Stream); ok {
		defer s.Close()
	}
	if hooks == nil {
		hooks = &Hooks{}
	}
	// shown is the text shown since the last discard.
	var shown strings.Builder
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
