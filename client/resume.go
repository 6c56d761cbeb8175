package client

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// The response headers of a resumable call.
const (
	// HeaderRequestID carries the call's request id, the one Resume takes.
	HeaderRequestID = "llmrelay-request-id"
	// HeaderResumable is "true" when the call is resumable.
	HeaderResumable = "llmrelay-resumable"
)

// ErrorInfo reasons a resumable call's stream is picked up again after:
// the call runs on.
const (
	// ReasonResumeInterrupted: the server serving a Resume is shutting down.
	ReasonResumeInterrupted = "RESUME_INTERRUPTED"
	// ReasonStateStoreUnavailable: the shared store cannot be read for now.
	ReasonStateStoreUnavailable = "STATE_STORE_UNAVAILABLE"
)

// ErrorInfo reasons after which a resumable call's request may be sent
// again (see Stream.AllowReissue): the call is gone.
const (
	// ReasonResumableCallLost (ABORTED): the server running the call
	// stopped before it finished (it crashed, or its shutdown cut the call
	// off); nothing more will come.
	ReasonResumableCallLost = "RESUMABLE_CALL_LOST"
	// ReasonResumableCallNotFound (NOT_FOUND): the server has no such call
	// (any more). After a dropped stream this means that the call was lost
	// with a server that kept it in its own memory, or that the client
	// came back after the grace period.
	ReasonResumableCallNotFound = "RESUMABLE_CALL_NOT_FOUND"
)

// ErrEventsMissing is returned when a stream skips sequence numbers, which
// llmrelay never does.
var ErrEventsMissing = errors.New("llmrelay: events are missing from the stream")

// Bounds on picking a call up again (see Stream.Recv).
const (
	// maxReissues bounds how often one Stream sends its request again.
	maxReissues      = 3
	maxResumeTries   = 8
	resumeBackoffMin = 100 * time.Millisecond
	resumeBackoffMax = 2 * time.Second
)

// resumeBackoff is the wait before reconnection number try+1 in a row
// (the first one is at once); tests shorten it.
var resumeBackoff = func(try int) time.Duration { return min(resumeBackoffMin<<(try-1), resumeBackoffMax) }

// RequestID returns the call's request id: the one the request set (or
// Generate gave a resumable request), else the one the server sent: in
// the headers of a resumable call, once its first event arrived, and in
// the trailer of any call, once the stream ended after its final event
// (Collect, or Recv's io.EOF); "" until then. A failed call's *Error
// names it too.
func (s *Stream) RequestID() string { return s.requestID }

// LastSequence returns the sequence of the last event the stream returned,
// 0 before the first: the afterSequence that Client.Resume takes to pick
// the call up after it, once this stream was given up (its context
// cancelled).
func (s *Stream) LastSequence() uint64 { return s.last }

// Resumable reports whether the call is known to be resumable: the request
// asked for it, or the server's headers said so.
func (s *Stream) Resumable() bool { return s.resumable && s.requestID != "" }

// Resumes returns how many times the stream picked its call up again.
func (s *Stream) Resumes() int { return s.resumes }

// Reissues returns how many times the stream sent its request again
// after the server lost the call (see AllowReissue).
func (s *Stream) Reissues() int { return s.reissues }

// AllowReissue lets the stream send its request again, the same
// request_id and all, when the server lost a resumable call (see Recv):
// the call's events then start over from sequence 1, and discard is
// called first, with why the call was lost: the caller must take back
// everything the stream returned so far, as for a will_retry with
// discard_partial. Without it (the default) a lost call ends the stream
// with its error. Collect calls it for Hooks.OnReissue. A re-issued call
// asks the provider again: the caller pays for it twice.
func (s *Stream) AllowReissue(discard func(cause error)) { s.reissue = discard }

// open starts the stream: Generate, or Resume after the last event. Before
// any event it sends the request again, with its request_id, which the
// server does not run twice; but a call whose id only the server's headers
// gave (a route made it resumable) is resumed from its first event, since
// the request without that id would start another call.
func (s *Stream) open() error {
	var err error
	s.resuming = s.req == nil || s.received || s.req.GetRequestId() == "" && s.Resumable()
	if !s.resuming {
		s.recv, err = s.stub.Generate(s.ctx, s.req, s.opts...)
	} else {
		s.recv, err = s.stub.Resume(s.ctx, &llmrelayv1.ResumeRequest{RequestId: s.requestID, AfterSequence: s.last}, s.opts...)
	}
	return err
}

// mayReissue reports whether err, which ended the stream, says that the
// resumable call is gone and the caller allowed its request to be sent
// again: RESUMABLE_CALL_LOST, or RESUMABLE_CALL_NOT_FOUND in answer to
// the stream's own Resume after a drop.
func (s *Stream) mayReissue(err error) bool {
	if s.reissue == nil || s.req == nil || !s.Resumable() || s.final || s.ctx.Err() != nil || s.reissues >= maxReissues || s.closed != nil && s.closed() {
		return false
	}
	e := FromError(err)
	if e.Domain != Domain {
		return false
	}
	return e.Reason == ReasonResumableCallLost || e.Reason == ReasonResumableCallNotFound && s.resuming && s.resumes > 0
}

// reissueCall sends the request again, after the caller was told to
// discard what it was shown: the call starts over.
func (s *Stream) reissueCall(cause error) {
	s.reissue(FromError(cause))
	s.reissues++
	s.last, s.received, s.tries = 0, false, 0
	// What the headers said of the lost call (an id the server chose, for
	// a call a route made resumable) is learnt again.
	s.headersRead, s.resumable, s.requestID = false, s.req.GetResumable(), s.req.GetRequestId()
	if err := s.open(); err != nil {
		s.recv = failed{err}
	}
}

// readHeaders learns from the response headers, once, whether the call is
// resumable and its id (a route may have made it so, the server may have
// chosen the id, or its store may have left it an ordinary call).
func (s *Stream) readHeaders() {
	if s.headersRead {
		return
	}
	s.headersRead = true
	cs, ok := s.recv.(grpc.ClientStream)
	if !ok {
		return
	}
	md, err := cs.Header() // they came with the event: this does not wait
	if err != nil {
		return
	}
	if v := md.Get(HeaderResumable); len(v) > 0 {
		s.resumable = v[0] == "true"
		if ids := md.Get(HeaderRequestID); len(ids) > 0 && s.requestID == "" {
			s.requestID = ids[0]
		}
	} else if s.req != nil {
		// A server that did not make the call resumable (its store was
		// unreachable, or it predates resumable calls).
		s.resumable = false
	}
}

// failedHeaders learns from the response headers of a stream that failed
// before its first event, when it had some: a call with a heartbeat gets
// them at once, and they may say that it is resumable and give its id.
func (s *Stream) failedHeaders() {
	if s.headersRead {
		return
	}
	if cs, ok := s.recv.(grpc.ClientStream); ok {
		// After a failure Header does not wait; nil when none came.
		if md, _ := cs.Header(); len(md.Get(HeaderResumable)) > 0 {
			s.readHeaders()
		}
	}
}

// mayResume reports whether err, which ended the stream, is a dropped
// stream of a resumable call that may be picked up again.
func (s *Stream) mayResume(err error) bool {
	if !s.Resumable() || s.final || s.ctx.Err() != nil || s.tries >= maxResumeTries || s.closed != nil && s.closed() {
		return false
	}
	if e := FromError(err); e.Domain == Domain {
		// llmrelay's own answer: the call's outcome, or why it cannot be
		// resumed; but a server serving a Resume that shuts down, or
		// cannot read the shared store for a moment, leaves the call
		// running.
		return e.Reason == ReasonResumeInterrupted || e.Reason == ReasonStateStoreUnavailable
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted, codes.Internal, codes.Unknown, codes.Canceled:
		return true
	}
	return false
}

// reconnect waits a backoff and opens the stream again, after the last
// event received.
func (s *Stream) reconnect(cause error) error {
	if s.tries > 0 {
		t := time.NewTimer(resumeBackoff(s.tries))
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return s.errorOf(status.FromContextError(context.Cause(s.ctx)).Err())
		}
	}
	s.tries++
	s.resumes++
	if s.onResume != nil {
		s.onResume(s.last, cause)
	}
	if err := s.open(); err != nil {
		s.recv = failed{err}
	}
	return nil
}

// failed is a stream that could not be opened: its error comes at Recv.
type failed struct{ err error }

func (f failed) Recv() (*llmrelayv1.GenerateEvent, error) { return nil, f.err }
