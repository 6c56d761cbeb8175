package engine

import (
	"time"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
)

// heartbeatOf returns the call's heartbeat interval: the request's, or
// the server's default; 0 for none. A requested interval below the
// server's minimum is an INVALID_ARGUMENT *apierr.Error.
func (s *Engine) heartbeatOf(req *llmrelayv1.GenerateRequest) (time.Duration, error) {
	if req.GetHeartbeatInterval() == nil {
		return s.heartbeat.Interval, nil
	}
	d := req.GetHeartbeatInterval().AsDuration()
	if d < s.heartbeat.MinInterval {
		return 0, apierr.InvalidField(apierr.ReasonInvalidRequest, "heartbeat_interval",
			"must be at least "+s.heartbeat.MinInterval.String()+" (the server's heartbeat.min_interval)")
	}
	return d, nil
}

// startHeartbeat sends the response headers now and, until stopHeartbeat,
// a heartbeat event whenever the call has sent nothing for every, from a
// goroutine of its own that takes turns with send on the stream. Headers
// commit the call: a client library no longer retries it by itself.
func (e *emitter) startHeartbeat(every time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.sink.SendHeader(); err != nil {
		if e.log == nil {
			return &sendError{err}
		}
		e.goneLocked() // a resumable call goes on without its client
	}
	e.last = time.Now()
	e.stop, e.stopped = make(chan struct{}), make(chan struct{})
	go e.beat(every, e.stop, e.stopped)
	return nil
}

// beat sends the heartbeats until stop is closed, then closes stopped.
func (e *emitter) beat(every time.Duration, stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		e.mu.Lock()
		quiet := time.Since(e.last)
		if quiet >= every {
			e.seq++
			err := e.deliver(&llmrelayv1.GenerateEvent{Sequence: e.seq, Event: &llmrelayv1.GenerateEvent_Heartbeat{Heartbeat: &llmrelayv1.Heartbeat{}}})
			e.last, quiet = time.Now(), 0
			if err != nil {
				// The client is gone; the call notices on its own. (A
				// resumable call's heartbeats go on, into its log.)
				e.mu.Unlock()
				return
			}
		}
		e.mu.Unlock()
		t.Reset(every - quiet)
	}
}

// stopHeartbeat stops the heartbeat, if any, and returns once it can send
// nothing more: before the final event, and before the call ends.
func (e *emitter) stopHeartbeat() {
	if e.stop == nil {
		return
	}
	close(e.stop)
	<-e.stopped
	e.stop = nil
}
