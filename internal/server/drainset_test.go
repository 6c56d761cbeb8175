package server

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
)

// TestDrainSetCutsOffTheCallsRunning: the end of the grace period cancels
// every call still running with apierr.ErrShuttingDown, and a call that
// starts after it at once; a call that ended before it is cancelled as
// ended (context.Canceled) and leaves the set, so the set holds only the
// calls running.
func TestDrainSetCutsOffTheCallsRunning(t *testing.T) {
	until, end := context.WithCancel(t.Context())
	d := newDrainSet(until)
	const n = 200
	ctxs := make([]context.Context, n)
	stops := make([]func(), n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ctxs[i], stops[i] = d.context(t.Context()) })
	}
	wg.Wait()
	for i := range n / 2 {
		stops[i]()
	}
	d.mu.Lock()
	running := len(d.calls)
	d.mu.Unlock()
	if running != n/2 {
		t.Fatalf("the set holds %d calls, want the %d still running", running, n/2)
	}
	end()
	for i, ctx := range ctxs {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("call %d runs on after the grace period", i)
		}
		want := error(context.Canceled)
		if i >= n/2 {
			want = apierr.ErrShuttingDown
		}
		if cause := context.Cause(ctx); !errors.Is(cause, want) {
			t.Fatalf("call %d ended with %v, want %v", i, cause, want)
		}
	}
	late, stop := d.context(t.Context())
	defer stop()
	select {
	case <-late.Done():
	default:
		t.Fatal("a call that started after the grace period ran on")
	}
	if cause := context.Cause(late); !errors.Is(cause, apierr.ErrShuttingDown) {
		t.Errorf("a late call ended with %v, want ErrShuttingDown", cause)
	}
	for _, stop := range stops[n/2:] {
		stop()
	}
}

// TestDrainSetUsesTheCallsDeadlineContext: a call whose context is its
// deadline's (callctx) gets no context of its own from the set (one cancel
// context, its done channel and its parent's children map less for as
// long as it runs): the grace period's end cancels the deadline context
// itself with apierr.ErrShuttingDown, and the call's end leaves it to the
// deadline link to end.
func TestDrainSetUsesTheCallsDeadlineContext(t *testing.T) {
	until, end := context.WithCancel(t.Context())
	d := newDrainSet(until)
	call, release := callctx.WithDeadline(t.Context(), time.Now().Add(time.Hour))
	defer release()
	ctx, stop := d.context(call)
	if ctx != call {
		t.Fatal("the set made a context of its own for a call with a deadline context")
	}
	end()
	<-call.Done()
	if cause := context.Cause(call); !errors.Is(cause, apierr.ErrShuttingDown) {
		t.Fatalf("the call ended with %v, want ErrShuttingDown", cause)
	}
	stop()

	// A call that ends first: its stop leaves the set and leaves the
	// context alone.
	d = newDrainSet(t.Context())
	call, release = callctx.WithDeadline(t.Context(), time.Now().Add(time.Hour))
	defer release()
	_, stop = d.context(call)
	stop()
	if call.Err() != nil {
		t.Fatalf("the drain's stop ended the deadline link's context: %v", call.Err())
	}
	if len(d.calls) != 0 {
		t.Fatal("a call that ended stayed in the set")
	}
}
