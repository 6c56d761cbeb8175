package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
	"github.com/llmrelay/llmrelay/internal/leaktest"
	"github.com/llmrelay/llmrelay/internal/state"
)

// rechecks is a fake auth.Rechecker: each key's answer, by its secret
// (Identity.ID, as the real ones go), nil when not listed; every Recheck
// is counted, by the name it was asked with.
type rechecks struct {
	mu      sync.Mutex
	answers map[string]error
	asked   []string
	// passed receives a value after every Recheck, without blocking.
	passed chan struct{}
}

func (r *rechecks) Recheck(_ context.Context, id *auth.Identity) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, id.Name)
	if r.passed != nil {
		select {
		case r.passed <- struct{}{}:
		default:
		}
	}
	return r.answers[id.ID]
}

// testKey returns the identity of the key named name whose secret is
// secret.
func testKey(t testing.TB, name, secret string) *auth.Identity {
	t.Helper()
	id, err := auth.NewIdentity(auth.KeyConfig{Name: name, SHA256: auth.HashKey(secret), Scopes: []string{"generate"}, Models: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testKeys returns the identities of the keys named names, each its own
// name as its secret.
func testKeys(t testing.TB, names ...string) map[string]*auth.Identity {
	ids := make(map[string]*auth.Identity, len(names))
	for _, name := range names {
		ids[name] = testKey(t, name, name)
	}
	return ids
}

// Keys implements auth.Keys, so that Watch finds it.
func (r *rechecks) Lookup(context.Context, string) (*auth.Identity, error) {
	return nil, auth.ErrUnknownKey
}

// TestKeyCallsEndOnlyTheKeysCalls: Check ends the calls of a revoked key
// and of an expired one, each with the UNAUTHENTICATED error of its
// reason, with a cause that reads as a cancellation; the calls of a key
// that works and of a key that could not be read run on; ended or not,
// calls leave the registry as they end.
func TestKeyCallsEndOnlyTheKeysCalls(t *testing.T) {
	k := NewKeyCalls()
	ids := testKeys(t, "leaked", "temp", "fine", "unread")
	open := func(key string) (context.Context, func()) {
		// Half the calls on a call context (callctx), half on a plain
		// one, for which add makes its own.
		var ctx context.Context = t.Context()
		var stop context.CancelFunc = func() {}
		if k.Open(ids[key].ID)%2 == 0 {
			ctx, stop = callctx.WithDeadline(ctx, time.Now().Add(time.Hour))
		}
		ctx, c := k.add(ctx, ids[key])
		return ctx, func() { k.remove(c); stop() }
	}
	leaked1, end1 := open("leaked")
	leaked2, end2 := open("leaked")
	expired, end3 := open("temp")
	fine, end4 := open("fine")
	unread, end5 := open("unread")
	if got := k.Keys(); len(got) != 4 || k.Open(ids["leaked"].ID) != 2 {
		t.Fatalf("keys %v, %d calls of leaked; want 4 keys, 2 calls", got, k.Open(ids["leaked"].ID))
	}

	r := &rechecks{answers: map[string]error{
		ids["leaked"].ID: auth.ErrRevokedKey, ids["temp"].ID: auth.ErrExpiredKey, ids["unread"].ID: &state.UnavailableError{},
	}}
	if n := k.Check(t.Context(), r, slog.New(slog.DiscardHandler)); n != 3 {
		t.Fatalf("Check ended %d calls, want 3", n)
	}
	slices.Sort(r.asked)
	if !slices.Equal(r.asked, []string{"fine", "leaked", "temp", "unread"}) {
		t.Fatalf("Check read %v, want each key once", r.asked)
	}
	for _, c := range []struct {
		name   string
		ctx    context.Context
		reason string
	}{{"leaked 1", leaked1, ReasonAPIKeyRevoked}, {"leaked 2", leaked2, ReasonAPIKeyRevoked}, {"temp", expired, ReasonAPIKeyExpired}} {
		cause := context.Cause(c.ctx)
		var ae *apierr.Error
		if c.ctx.Err() == nil || !errors.As(cause, &ae) || ae.Kind != apierr.Unauthenticated || ae.Reason != c.reason ||
			!errors.Is(cause, context.Canceled) {
			t.Errorf("%s: ended with %v (err %v), want UNAUTHENTICATED %s, a cancellation", c.name, cause, c.ctx.Err(), c.reason)
		}
		var ke *KeyEndedError
		if !errors.As(cause, &ke) {
			t.Errorf("%s: cause %v is no *KeyEndedError", c.name, cause)
		}
	}
	if ae1, ae2 := context.Cause(leaked1), context.Cause(leaked2); ae1 == ae2 {
		t.Error("two calls ended with one *apierr.Error: the engine adds each call's metadata to it")
	}
	for name, ctx := range map[string]context.Context{"fine": fine, "unread": unread} {
		if ctx.Err() != nil {
			t.Errorf("the call of %s ended: %v", name, context.Cause(ctx))
		}
	}

	for _, end := range []func(){end2, end1, end4, end3, end5} {
		end()
	}
	if got := k.Keys(); len(got) != 0 {
		t.Fatalf("after every call ended, keys %v are left", got)
	}
}

// TestKeyCallsWatchStops: Watch checks the open calls' keys every
// interval, on the keys its func returns then, and returns once its
// context ends, leaving no goroutine.
func TestKeyCallsWatchStops(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	k := NewKeyCalls()
	leaked := testKey(t, "leaked", "leaked")
	ctx, c := k.add(t.Context(), leaked)
	defer k.remove(c)
	r := &rechecks{answers: map[string]error{leaked.ID: auth.ErrRevokedKey}, passed: make(chan struct{}, 1)}
	watch, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.Watch(watch, time.Millisecond, func() auth.Keys { return r }, nil)
	}()
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not end the revoked key's call")
	}
	if reason := context.Cause(ctx).(*apierr.Error).Reason; reason != ReasonAPIKeyRevoked {
		t.Fatalf("reason %s", reason)
	}
	stop()
	<-done
	leaktest.VerifyNone(t, ignore)
}

// TestKeyCallsRemoveInAnyOrder: a key's calls are a list; taking out its
// first, middle and last leaves the others in place.
func TestKeyCallsRemoveInAnyOrder(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {1, 2, 0}} {
		k := NewKeyCalls()
		ci := testKey(t, "ci", "ci")
		calls := make([]*keyCall, 3)
		for i := range calls {
			_, calls[i] = k.add(t.Context(), ci)
		}
		for n, i := range order {
			k.remove(calls[i])
			if got := k.Open(ci.ID); got != 2-n {
				t.Fatalf("order %v: after %d removed, %d open", order, n+1, got)
			}
		}
		if len(k.byKey) != 0 {
			t.Fatalf("order %v: %v left", order, k.byKey)
		}
	}
}

// TestKeyCallsCheckLogsAnUnreadableStoreOnce: with the store down, every
// key of the open calls fails to be read, every pass; a pass logs that in
// one warn line (how many keys, one of them, the error), not a line per
// key, which would be thousands of lines a second on a busy replica.
func TestKeyCallsCheckLogsAnUnreadableStoreOnce(t *testing.T) {
	k := NewKeyCalls()
	answers := map[string]error{}
	for _, id := range testKeys(t, "a", "b", "c", "d") {
		_, c := k.add(t.Context(), id)
		t.Cleanup(func() { k.remove(c) })
		answers[id.ID] = &state.UnavailableError{}
	}
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if n := k.Check(t.Context(), &rechecks{answers: answers}, log); n != 0 {
		t.Fatalf("Check ended %d calls of keys it could not read", n)
	}
	lines := strings.Count(logs.String(), "\n")
	if lines != 1 || !strings.Contains(logs.String(), "keys=4") {
		t.Fatalf("one pass over 4 unreadable keys logged %d lines, want one that counts them:\n%s", lines, logs.String())
	}
}

// TestKeyCallsFollowTheKeyNotItsName: calls are kept by their key's
// secret. A key renamed while its calls run is one key, read once a
// pass, and its calls under either name run on while it works; a new
// secret under a key's name is another key, and the old secret's calls
// end (unknown) while the new one's run on. Each call ends under the
// name it was authenticated as.
func TestKeyCallsFollowTheKeyNotItsName(t *testing.T) {
	k := NewKeyCalls()
	app, renamed := testKey(t, "app", "app-secret"), testKey(t, "app2", "app-secret")
	oldRot, newRot := testKey(t, "rot", "old-secret"), testKey(t, "rot", "new-secret")
	ctxs, calls := map[string]context.Context{}, map[string]*keyCall{}
	for name, id := range map[string]*auth.Identity{"app": app, "app2": renamed, "old rot": oldRot, "new rot": newRot} {
		ctxs[name], calls[name] = k.add(t.Context(), id)
		t.Cleanup(func() { k.remove(calls[name]) })
	}
	wantEnded := func(call, key string) {
		t.Helper()
		var ae *apierr.Error
		if !errors.As(context.Cause(ctxs[call]), &ae) || ae.Reason != ReasonAPIKeyUnknown || ae.Metadata["key"] != key {
			t.Fatalf("the %s call ended with %v, want API_KEY_UNKNOWN of key %s", call, context.Cause(ctxs[call]), key)
		}
		k.remove(calls[call]) // as the call does as it ends
	}
	wantRunning := func(calls ...string) {
		t.Helper()
		for _, call := range calls {
			if err := context.Cause(ctxs[call]); err != nil {
				t.Fatalf("the %s call ended: %v", call, err)
			}
		}
	}

	r := &rechecks{answers: map[string]error{oldRot.ID: auth.ErrUnknownKey}}
	if n := k.Check(t.Context(), r, slog.New(slog.DiscardHandler)); n != 1 {
		t.Fatalf("Check ended %d calls, want the old secret's one", n)
	}
	if len(r.asked) != 3 {
		t.Fatalf("Check read %v, want one read of each of the 3 secrets", r.asked)
	}
	wantEnded("old rot", "rot")
	wantRunning("app", "app2", "new rot")

	r.answers[app.ID] = auth.ErrUnknownKey
	if n := k.Check(t.Context(), r, slog.New(slog.DiscardHandler)); n != 2 {
		t.Fatalf("Check ended %d calls once the renamed key went, want its 2", n)
	}
	wantEnded("app", "app")
	wantEnded("app2", "app2")
	wantRunning("new rot")
}
