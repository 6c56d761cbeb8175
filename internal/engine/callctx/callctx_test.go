package callctx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/engine/callctx"
)

var errShutdown = errors.New("shutting down")

type key struct{}

func TestDeadlinePassed(t *testing.T) {
	deadline := time.Now().Add(20 * time.Millisecond)
	ctx, stop := callctx.WithDeadline(context.Background(), deadline)
	defer stop()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	byValue := context.WithValue(ctx, key{}, 1)

	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("no deadline")
	}
	// Ended while the deadline is still ahead (read after Err) is wrong; a
	// loaded machine may have passed the deadline already, which is not.
	if err := ctx.Err(); err != nil && time.Now().Before(deadline) {
		t.Fatalf("Err before the deadline = %v", err)
	}
	<-ctx.Done()
	<-child.Done()
	for name, c := range map[string]context.Context{"call": ctx, "by value": byValue} {
		if err := c.Err(); err != context.DeadlineExceeded {
			t.Errorf("%s: Err = %v, want DeadlineExceeded", name, err)
		}
		if err := context.Cause(c); err != context.DeadlineExceeded {
			t.Errorf("%s: Cause = %v, want DeadlineExceeded", name, err)
		}
	}
	// A cancel context below says Canceled, with the deadline as its cause.
	if err := context.Cause(child); err != context.DeadlineExceeded {
		t.Errorf("child: Cause = %v, want DeadlineExceeded", err)
	}
}

func TestDeadlineAlreadyPassed(t *testing.T) {
	ctx, stop := callctx.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer stop()
	select {
	case <-ctx.Done():
	default:
		t.Fatal("a deadline in the past did not end the context at once")
	}
	if ctx.Err() != context.DeadlineExceeded {
		t.Fatalf("Err = %v", ctx.Err())
	}
}

func TestParentDeadlineFirst(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	want, _ := parent.Deadline()
	ctx, stop := callctx.WithDeadline(parent, time.Now().Add(time.Hour))
	defer stop()
	if got, _ := ctx.Deadline(); !got.Equal(want) {
		t.Fatalf("Deadline = %v, want the parent's %v", got, want)
	}
	<-ctx.Done()
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != context.DeadlineExceeded {
		t.Fatalf("Err = %v, Cause = %v", ctx.Err(), context.Cause(ctx))
	}
}

func TestCancelWithCause(t *testing.T) {
	ctx, stop := callctx.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer stop()
	byValue := context.WithValue(ctx, key{}, 1)
	child, cancelChild := context.WithCancelCause(byValue)
	defer cancelChild(nil)

	cancel := callctx.Cancel(byValue)
	if cancel == nil {
		t.Fatal("Cancel found no call context through a value context")
	}
	cancel(errShutdown)
	// Children are registered with the call context's cancel context, so
	// they end with it, synchronously.
	if child.Err() == nil {
		t.Fatal("the child did not end with the call context")
	}
	for name, c := range map[string]context.Context{"call": ctx, "by value": byValue, "child": child} {
		if c.Err() != context.Canceled {
			t.Errorf("%s: Err = %v, want Canceled", name, c.Err())
		}
		if !errors.Is(context.Cause(c), errShutdown) {
			t.Errorf("%s: Cause = %v, want the cause given", name, context.Cause(c))
		}
	}
}

func TestStop(t *testing.T) {
	// A deadline far ahead: stop comes first however slow the machine.
	ctx, stop := callctx.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	stop()
	if ctx.Err() != context.Canceled || context.Cause(ctx) != context.Canceled {
		t.Fatalf("after stop: Err = %v, Cause = %v", ctx.Err(), context.Cause(ctx))
	}
}

func TestCancelNotAcrossAContextOfItsOwn(t *testing.T) {
	if callctx.Cancel(context.Background()) != nil {
		t.Fatal("Cancel found a call context in Background")
	}
	ctx, stop := callctx.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer stop()
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	if callctx.Cancel(inner) != nil {
		t.Fatal("Cancel reached the call context past a cancel context of its own: cancelling it would end more than the caller's context")
	}
	// Nor past a context detached from it.
	if callctx.Cancel(context.WithoutCancel(ctx)) != nil {
		t.Fatal("Cancel reached the call context from a context without its cancellation")
	}
}
