// Package callctx is a call's deadline context that can also be cancelled
// with a cause: one cancel context where the call's deadline (the
// deadline link, engine.Deadlines) and the server's drain, which cuts off
// calls with apierr.ErrShuttingDown when the shutdown grace period ends,
// would otherwise nest two. Each nested cancel context keeps, for as long
// as the call runs, the context itself, its done channel and a children
// map in its parent: about 350 bytes per open call in a heap profile of
// 5,000 held streams.
//
// It behaves as context.WithDeadline's context does for the call and what
// derives from it by value (Deadline, Done, Err is DeadlineExceeded once
// the deadline passed, context.Cause is DeadlineExceeded then, or the
// cause it was cancelled with). One difference: a cancel context made
// below it sees context.Canceled as its Err when the deadline passes (its
// Cause is still DeadlineExceeded), which is why llmrelay reads why a
// call ended with context.Cause.
//
// The deadlines of all call contexts share one runtime timer
// (internal/timeheap), as the engine's stall checks do: a call that ends
// before its deadline sets no timer of its own. That includes a deadline
// on a call's start only (WithStartDeadline: the HTTP doors' bound on a
// streamed reply's start).
package callctx

import (
	"context"
	"math"
	"time"

	"github.com/llmrelay/llmrelay/internal/timeheap"
)

// callCtx is the call's context. Its Context is the cancel context
// (context.WithCancelCause) that its descendants register with, so that
// they are cancelled with it without a goroutine of their own.
type callCtx struct {
	context.Context
	cancel   context.CancelCauseFunc
	deadline time.Time
	// entry is its place on deadlines while its deadline is ahead.
	entry timeheap.Entry
}

// deadlines runs every call context's deadline on one timer.
var deadlines timeheap.Clock

type key struct{}

// WithDeadline returns parent with deadline d, and the cancel that ends it
// (its cause context.Canceled) and stops its timer; the context returned
// can also be cancelled with a cause (Cancel).
func WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	c := &callCtx{}
	c.start(parent, d, d, c)
	return c, c.stop
}

// WithStartDeadline returns parent with a deadline on the call's start
// only: at start the context ends with DeadlineExceeded unless started
// reports true by then, and once started it has no end of its own. Its
// Deadline is parent's, or else the furthest there is, so that a deadline
// step takes it for a client's deadline beyond any maximum
// (engine.Deadlines brings it in to deadlines.max). cancel, Cancel and
// the shared timer are WithDeadline's. started is called on the clock's
// goroutine, under its lock: it must be quick and safe for concurrent use
// (an atomic.Bool's Load).
func WithStartDeadline(parent context.Context, start time.Time, started func() bool) (context.Context, context.CancelFunc) {
	c := &startCtx{started: started}
	c.callCtx.start(parent, time.Now().Add(time.Duration(math.MaxInt64)), start, c)
	return &c.callCtx, c.stop
}

// start makes c parent's call context with the given deadline, due at
// due (with due's Due), unless parent ends first.
func (c *callCtx) start(parent context.Context, deadline, at time.Time, due timeheap.Due) {
	c.Context, c.cancel = context.WithCancelCause(parent)
	c.deadline = deadline
	cur, ok := parent.Deadline()
	if ok && cur.Before(deadline) {
		c.deadline = cur
	}
	switch wait := time.Until(at); {
	case ok && !cur.After(at):
		// The parent ends first, with DeadlineExceeded: its end is the
		// call's.
	case wait <= 0:
		due.Due()
	default:
		deadlines.Add(&c.entry, due, wait)
	}
}

// Cancel returns the cancel-with-cause of the call context that ctx is,
// or derives from by value only: nil when there is none, or when a
// context of its own (a cancel or deadline context) lies in between, since
// cancelling the call context would then also cancel more than ctx.
func Cancel(ctx context.Context) context.CancelCauseFunc {
	c, _ := ctx.Value(key{}).(*callCtx)
	if c == nil || ctx.Done() != c.Done() {
		return nil
	}
	return c.cancel
}

func (c *callCtx) expire() { c.cancel(context.DeadlineExceeded) }

// Due ends the call with DeadlineExceeded, its deadline having come
// (timeheap.Due).
func (c *callCtx) Due() (time.Duration, bool) {
	c.expire()
	return 0, false
}

// startCtx is a call context whose deadline bounds its start only
// (WithStartDeadline).
type startCtx struct {
	callCtx
	started func() bool
}

// Due ends the call with DeadlineExceeded unless it has started
// (timeheap.Due).
func (c *startCtx) Due() (time.Duration, bool) {
	if !c.started() {
		c.expire()
	}
	return 0, false
}

func (c *callCtx) stop() {
	deadlines.Remove(&c.entry)
	c.cancel(nil)
}

// Deadline returns the call's deadline.
func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Err is context.DeadlineExceeded once the deadline passed (the cancel
// context underneath says context.Canceled, with DeadlineExceeded as its
// cause).
func (c *callCtx) Err() error {
	err := c.Context.Err()
	if err == context.Canceled && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// Value answers key with the call context itself.
func (c *callCtx) Value(k any) any {
	if _, ok := k.(key); ok {
		return c
	}
	return c.Context.Value(k)
}

func (c *callCtx) String() string { return "callctx.WithDeadline(" + c.deadline.String() + ")" }
