package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
)

// KeyCheckInterval is how often a process reads again the keys its open
// calls run on (KeyCalls.Watch): a call of a key revoked, expired, or
// gone from the config (removed, or its secret replaced), while it runs
// ends within this interval and one read of the key store, on every
// replica.
const KeyCheckInterval = time.Second

// keyCheckTimeout bounds one pass of KeyCalls.Check (its reads of the
// store).
const keyCheckTimeout = 5 * time.Second

// KeyCalls is the Generate calls open in this process, by their API key
// itself, its secret (auth.Identity.ID), not its name, so that the calls
// of a key that stopped working while they run (revoked, expired, or no
// longer accepted: see auth.Rechecker) end, with UNAUTHENTICATED and the
// reason a new call of the key is refused with, rather than run on,
// spending on it: admission refuses a key's new calls, KeyCalls ends its
// open ones. A key renamed keeps its calls; a new secret under a key's
// name does not keep the old secret's. A call takes a place as it starts
// to run (Generate) and gives it back as it ends: one small object and no
// goroutine of its own, nothing per event. One Watch per process reads
// the keys of the open calls again, every interval. It outlives reloads
// (the server's); it is safe for concurrent use.
type KeyCalls struct {
	mu sync.Mutex
	// byKey holds the first of each key's calls, by Identity.ID; each
	// links to the next.
	byKey map[string]*keyCall
}

// keyCall is one open call's place in its KeyCalls.
type keyCall struct {
	// id is the identity the call was authenticated as: its ID is the
	// key in byKey, its name the one the call is ended under.
	id         *auth.Identity
	cancel     context.CancelCauseFunc
	prev, next *keyCall
	// own: cancel is of a context add made for the call, which remove
	// ends; else of the call's own context (callctx), which its owner
	// ends.
	own bool
}

// NewKeyCalls returns an empty KeyCalls.
func NewKeyCalls() *KeyCalls { return &KeyCalls{byKey: make(map[string]*keyCall)} }

// add registers a call authenticated as id running on ctx, and returns
// the context the call runs on from then on: ctx itself when it is a call
// context (callctx.Cancel finds it), else one of its own. remove gives
// the place back. A nil KeyCalls registers nothing.
func (k *KeyCalls) add(ctx context.Context, id *auth.Identity) (context.Context, *keyCall) {
	if k == nil {
		return ctx, nil
	}
	c := &keyCall{id: id, cancel: callctx.Cancel(ctx)}
	if c.cancel == nil {
		ctx, c.cancel = context.WithCancelCause(ctx)
		c.own = true
	}
	k.mu.Lock()
	if first := k.byKey[id.ID]; first != nil {
		c.next, first.prev = first, c
	}
	k.byKey[id.ID] = c
	k.mu.Unlock()
	return ctx, c
}

// remove takes c, of a call that ended, out of k.
func (k *KeyCalls) remove(c *keyCall) {
	if c == nil {
		return
	}
	k.mu.Lock()
	switch {
	case c.prev != nil:
		c.prev.next = c.next
	case k.byKey[c.id.ID] == c:
		if c.next == nil {
			delete(k.byKey, c.id.ID)
		} else {
			k.byKey[c.id.ID] = c.next
		}
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next = nil, nil
	k.mu.Unlock()
	if c.own {
		c.cancel(nil)
	}
}

// Keys returns the keys that calls are open on: for each, the identity
// of one of its calls (a key renamed while its calls run has calls under
// either name).
func (k *KeyCalls) Keys() []*auth.Identity {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]*auth.Identity, 0, len(k.byKey))
	for _, c := range k.byKey {
		keys = append(keys, c.id)
	}
	return keys
}

// Open returns how many calls of the key of Identity.ID keyID are open.
func (k *KeyCalls) Open(keyID string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for c := k.byKey[keyID]; c != nil; c = c.next {
		n++
	}
	return n
}

// End ends the calls of the key of Identity.ID keyID that are open, each
// with its own *apierr.Error made of why (an error wrapping
// auth.ErrRevokedKey, auth.ErrExpiredKey or auth.ErrUnknownKey) and of the
// name the call was authenticated under: the error a new call of the key
// is refused with (see KeyEndedError). It returns how many it ended.
func (k *KeyCalls) End(keyID string, why error) int {
	type ending struct {
		name   string
		cancel context.CancelCauseFunc
	}
	k.mu.Lock()
	var ends []ending
	for c := k.byKey[keyID]; c != nil; c = c.next {
		ends = append(ends, ending{c.id.Name, c.cancel})
	}
	k.mu.Unlock()
	for _, e := range ends {
		// One error per call: the engine adds the call's own metadata to
		// the error it ends with.
		e.cancel(keyEnded(e.name, why))
	}
	return len(ends)
}

// Check reads again, with keys, each key that calls are open on (by its
// secret: auth.Rechecker), and ends the calls of those that no longer
// work (End). The keys that cannot be read are logged, in one line per
// pass whatever their number (a store that is down fails them all, every
// pass), and their calls run on, to be checked again next time. It
// returns how many calls it ended.
func (k *KeyCalls) Check(ctx context.Context, keys auth.Rechecker, log *slog.Logger) int {
	ended, unread := 0, 0
	var first string
	var firstErr error
	for _, id := range k.Keys() {
		err := keys.Recheck(ctx, id)
		switch {
		case err == nil:
		case errors.Is(err, auth.ErrRevokedKey), errors.Is(err, auth.ErrExpiredKey), errors.Is(err, auth.ErrUnknownKey):
			n := k.End(id.ID, err)
			ended += n
			log.Info("ended the open calls of an API key that no longer works", "key", id.Name, "calls", n, "reason", keyReason(err))
		default:
			if unread++; unread == 1 {
				first, firstErr = id.Name, err
			}
		}
	}
	if unread > 0 {
		log.Warn("the keys of open calls could not be read again; their calls run on until they can",
			"keys", unread, "key", first, "error", firstErr)
	}
	return ended
}

// Watch checks the keys of the open calls (Check) every interval, with
// the keys keys returns then (the current runtime's; nil or not an
// auth.Rechecker: the server has no keys, none to check), until ctx ends.
func (k *KeyCalls) Watch(ctx context.Context, interval time.Duration, keys func() auth.Keys, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r, ok := keys().(auth.Rechecker)
		if !ok {
			continue
		}
		pass, cancel := context.WithTimeout(ctx, keyCheckTimeout)
		k.Check(pass, r, log)
		cancel()
	}
}

// KeyEndedError is the cause a call of a key that stopped working while
// it ran is ended with, beneath its *apierr.Error: Err is
// auth.ErrRevokedKey, auth.ErrExpiredKey or auth.ErrUnknownKey. It
// matches context.Canceled too: the call was cut off, as by its client,
// not failed by its provider (no provider error, no harm to the target's
// health, no retry).
type KeyEndedError struct {
	Key string
	Err error
}

func (e *KeyEndedError) Error() string {
	return "API key " + e.Key + ": " + e.Err.Error() + " while the call ran"
}

// Unwrap returns Err and context.Canceled.
func (e *KeyEndedError) Unwrap() []error { return []error{e.Err, context.Canceled} }

// keyEnded returns the error a call of key ends with once the key stopped
// working with why: UNAUTHENTICATED with the reason a new call of the key
// is refused with (keyRefusal).
func keyEnded(key string, why error) *apierr.Error {
	reason, msg := keyRefusal(why)
	return &apierr.Error{Kind: apierr.Unauthenticated, Reason: reason, Message: msg + " while the call ran",
		Metadata: map[string]string{"key": key}, Cause: &KeyEndedError{Key: key, Err: why}}
}

// keyReason returns the ErrorInfo reason of a key that does not work
// with err.
func keyReason(err error) string {
	reason, _ := keyRefusal(err)
	return reason
}

// keyRefusal returns the ErrorInfo reason and the message of a key that
// does not work with err (revoked, expired or unknown): the one mapping of
// both a new call refused (Authenticator) and an open one ended
// (KeyCalls).
func keyRefusal(err error) (reason, msg string) {
	switch {
	case errors.Is(err, auth.ErrRevokedKey):
		return ReasonAPIKeyRevoked, "the API key was revoked"
	case errors.Is(err, auth.ErrExpiredKey):
		return ReasonAPIKeyExpired, "the API key expired"
	}
	return ReasonAPIKeyUnknown, "unknown API key"
}
