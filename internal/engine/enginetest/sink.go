package enginetest

import (
	"sync"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
)

// Recorder is an engine.Sink that keeps what a call sends: its events in
// order and its response headers. It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	events  []*llmrelayv1.GenerateEvent
	headers map[string]string
	sent    bool // headers sent
	// Fail, when set, is returned by Send from the event it is set on: a
	// client gone.
	fail error
}

// Send implements engine.Sink.
func (r *Recorder) Send(ev *llmrelayv1.GenerateEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.events = append(r.events, ev)
	r.sent = true
	return nil
}

// SetHeader implements engine.Sink.
func (r *Recorder) SetHeader(kv ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.headers == nil {
		r.headers = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		r.headers[kv[i]] = kv[i+1]
	}
}

// SendHeader implements engine.Sink.
func (r *Recorder) SendHeader() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = true
	return r.fail
}

// Gone makes every later Send and SendHeader fail with err, as a stream
// whose client went away.
func (r *Recorder) Gone(err error) {
	r.mu.Lock()
	r.fail = err
	r.mu.Unlock()
}

// Events returns the events sent so far.
func (r *Recorder) Events() []*llmrelayv1.GenerateEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*llmrelayv1.GenerateEvent(nil), r.events...)
}

// Header returns a response header set so far.
func (r *Recorder) Header(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers[key]
}
