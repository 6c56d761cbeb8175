// Package callinfo carries what llmrelay learns about one call while it runs
// (its request id, the caller's key name, the model, the attempts it took)
// from the places that learn it (the interceptor chain, the Generate handler)
// to the log lines and errors that report it.
//
// The outermost link of the chain puts an *Info in the call's context; every
// later link and the handler find it with From. All methods are safe for
// concurrent use and do nothing on a nil *Info, so code that runs without the
// chain (unit tests of the service) needs no special case.
package callinfo

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// Info is one call's record.
type Info struct {
	mu        sync.Mutex
	requestID string
	key       string
	model     string
	attempts  int
	// onAuth runs once the call has passed authentication.
	onAuth func()
	authed bool
}

// MaxFieldLen bounds what Info keeps of client-supplied text (model,
// request id), so an oversized invalid request cannot flood the logs.
const MaxFieldLen = 256

type ctxKey struct{}

// NewContext returns ctx carrying a new, empty Info, and that Info.
func NewContext(ctx context.Context) (context.Context, *Info) {
	info := &Info{}
	return context.WithValue(ctx, ctxKey{}, info), info
}

// From returns the call's Info, or nil when ctx has none.
func From(ctx context.Context) *Info {
	info, _ := ctx.Value(ctxKey{}).(*Info)
	return info
}

// RecordRequest records the request's model and client-chosen request id.
// The client's id replaces one made up before the request arrived (the log
// fields of a stream call are first read before its request is received). A
// request id that is not a UUID is not kept (the request fails validation
// anyway); RequestID then makes one up.
func (i *Info) RecordRequest(model, requestID string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.model = clip(model)
	if _, err := uuid.Parse(requestID); err == nil && len(requestID) == 36 {
		i.requestID = requestID
	}
}

// SetKey records the name of the caller's API key.
func (i *Info) SetKey(name string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.key = name
	i.mu.Unlock()
}

// OnAuthenticated registers f to run once the call has passed
// authentication (see Authenticated), or at once if it already has. The
// logging link writes a unary call's start line then, so that calls refused
// at authentication (which the auth links log in aggregate) have none.
func (i *Info) OnAuthenticated(f func()) {
	if i == nil {
		return
	}
	i.mu.Lock()
	if !i.authed {
		i.onAuth = f
		i.mu.Unlock()
		return
	}
	i.mu.Unlock()
	f()
}

// Authenticated records that the call passed authentication (or needs
// none: the server has no keys) and runs what OnAuthenticated registered.
func (i *Info) Authenticated() {
	if i == nil {
		return
	}
	i.mu.Lock()
	f := i.onAuth
	i.onAuth, i.authed = nil, true
	i.mu.Unlock()
	if f != nil {
		f()
	}
}

// ObserveAttempt records that the call reached attempt n (from 1): the
// call's attempts are the largest n observed. The Generate handler calls it
// as each attempt starts; the interceptor chain also calls it for every
// event the call sends.
func (i *Info) ObserveAttempt(n int) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.attempts = max(i.attempts, n)
	i.mu.Unlock()
}

// RequestID returns the call's request id: the client's, or one made up on
// the first call (a random UUID) and kept from then on. It returns "" on a
// nil Info.
func (i *Info) RequestID() string {
	if i == nil {
		return ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.requestID == "" {
		i.requestID = uuid.NewString()
	}
	return i.requestID
}

// Snapshot is a copy of an Info's fields.
type Snapshot struct {
	RequestID string
	Key       string
	Model     string
	Attempts  int
}

// Snapshot returns the fields recorded so far, making up the request id if
// there is none yet. It returns the zero Snapshot on a nil Info.
func (i *Info) Snapshot() Snapshot {
	if i == nil {
		return Snapshot{}
	}
	id := i.RequestID()
	i.mu.Lock()
	defer i.mu.Unlock()
	return Snapshot{RequestID: id, Key: i.key, Model: i.model, Attempts: i.attempts}
}

func clip(s string) string {
	if len(s) > MaxFieldLen {
		return s[:MaxFieldLen]
	}
	return s
}
