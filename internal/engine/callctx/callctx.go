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
// The deadlines of all call contexts share one runtime timer (clock), as
// the engine's stall checks do: a call that starts and ends before it
// sets no timer of its own.
package callctx

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// callCtx is the call's context. Its Context is the cancel context
// (context.WithCancelCause) that its descendants register with, so that
// they are cancelled with it without a goroutine of their own.
type callCtx struct {
	context.Context
	cancel   context.CancelCauseFunc
	deadline time.Time
	// index is the context's place in deadlines' heap, -1 when it is not
	// in it (guarded by deadlines.mu).
	index int
}

type key struct{}

// WithDeadline returns parent with deadline d, and the cancel that ends it
// (its cause context.Canceled) and stops its timer; the context returned
// can also be cancelled with a cause (Cancel).
func WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithCancelCause(parent)
	c := &callCtx{Context: inner, cancel: cancel, deadline: d, index: -1}
	cur, ok := parent.Deadline()
	switch wait := time.Until(d); {
	case ok && !cur.After(d):
		// The parent ends first, with DeadlineExceeded: its end is the
		// call's.
		c.deadline = cur
	case wait <= 0:
		c.expire()
	default:
		deadlines.add(c)
	}
	return c, c.stop
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

func (c *callCtx) stop() {
	deadlines.remove(c)
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

// deadlines is every waiting call context's deadline.
var deadlines clock

// clock keeps call contexts' deadlines in a heap, earliest first, on one
// runtime timer set for the earliest.
//
// Why not a timer per call: adding a runtime timer that is the earliest of
// its processor's wakes the thread waiting in the network poller (an
// eventfd write, and the thread going back to sleep), and a call's
// deadline timer often is, on a processor with no other timer. Here a
// call's deadline is an entry in a heap, and the timer is set again only
// for a deadline earlier than the one it is set for: calls that start
// after it, with the same default deadline, never touch it. When it fires
// for calls that have ended, it is set for the next deadline, if any.
type clock struct {
	mu    sync.Mutex
	heap  deadlineHeap
	timer *time.Timer // made at the first deadline, then Reset
	armed time.Time   // when the timer fires; zero: not set
	// sets counts the timer's settings (tests).
	sets int
}

// add puts c's deadline on the clock.
func (k *clock) add(c *callCtx) {
	k.mu.Lock()
	defer k.mu.Unlock()
	heap.Push(&k.heap, c)
	k.setLocked(c.deadline)
}

// remove takes c off the clock, if it is on it.
func (k *clock) remove(c *callCtx) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c.index >= 0 {
		heap.Remove(&k.heap, c.index)
	}
}

// setLocked sets the timer for at, unless it is set for earlier already.
func (k *clock) setLocked(at time.Time) {
	if !k.armed.IsZero() && !at.Before(k.armed) {
		return
	}
	k.armed = at
	k.sets++
	if k.timer == nil {
		k.timer = time.AfterFunc(time.Until(at), k.fire)
		return
	}
	k.timer.Reset(time.Until(at))
}

// fire ends the calls whose deadline has passed, with DeadlineExceeded,
// and sets the timer for the next deadline.
func (k *clock) fire() {
	k.mu.Lock()
	k.armed = time.Time{}
	var due []*callCtx
	now := time.Now()
	for len(k.heap) > 0 {
		if c := k.heap[0]; c.deadline.After(now) {
			k.setLocked(c.deadline)
			break
		}
		due = append(due, heap.Pop(&k.heap).(*callCtx))
	}
	k.mu.Unlock()
	// Outside the lock: a cancel runs the contexts' AfterFuncs and
	// cancels their children. A call whose stop ran meanwhile is already
	// cancelled, and the cancel does nothing.
	for _, c := range due {
		c.expire()
	}
}

// deadlineHeap is the call contexts on the clock, the earliest deadline
// first (container/heap).
type deadlineHeap []*callCtx

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *deadlineHeap) Push(x any) {
	c := x.(*callCtx)
	c.index = len(*h)
	*h = append(*h, c)
}

func (h *deadlineHeap) Pop() any {
	old := *h
	n := len(old)
	c := old[n-1]
	old[n-1] = nil
	c.index = -1
	*h = old[:n-1]
	return c
}
