package engine

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// stallTimer is one attempt's two stall timeouts, which the attempt runner
// owns: first_event_timeout bounds the wait for the provider's first sign
// of life (the response headers included), stream_idle_timeout the
// silence between signs of life once it streams. Signs of life are
// whatever the adapter reports on the attempt's Activity (for an HTTP
// provider, every read of the body that returned bytes: keep-alive
// comments, pings, reasoning, usage-only chunks), and every event the
// runner receives. The time the runner spends handing an event to the
// client (relaying) is not the provider's and never counts as silence.
//
// Nothing on the per-event path touches a timer: the adapter and the
// runner only store a timestamp (Activity.Touch) and a flag, and the
// engine's stallClock, when the attempt's check is due, reads them and
// either cancels the attempt with a *retry.StallError or sets the next
// check for the time that is left.
type stallTimer struct {
	act      provider.Activity
	relaying atomic.Bool
	start    int64 // provider.ActivityClock() when the attempt started
	first    time.Duration
	idle     time.Duration
	// timeouts says whose each timeout is (retry.Limits.Stall), for the
	// StallError a stall cancels with.
	timeouts retry.StallTimeouts
	cancel   context.CancelCauseFunc

	// Guarded by clock.mu: the next check, on ActivityClock's scale, and
	// the timer's place in the clock's heap (-1: not in it, stopped).
	clock *stallClock
	next  int64
	index int
}

// startStallTimer starts the stall timeouts t of an attempt on clock,
// which cancels the attempt with t's *retry.StallError when one passes.
func startStallTimer(clock *stallClock, t retry.StallTimeouts, cancel context.CancelCauseFunc) *stallTimer {
	first, idle := t.FirstEvent, t.Idle
	now := provider.ActivityClock()
	w := &stallTimer{start: now, first: first, idle: idle, timeouts: t, cancel: cancel, clock: clock, index: -1}
	// The first sign of life does not move the check, so until it comes
	// the check is at least every idle timeout.
	clock.add(w, now+int64(min(first, idle)))
	return w
}

// relay marks the start of handing an event to the client.
func (w *stallTimer) relay() { w.relaying.Store(true) }

// relayed marks its end: the provider's time runs again from now.
func (w *stallTimer) relayed() {
	w.act.Touch()
	w.relaying.Store(false)
}

// stop stops the timer for good: once it returns, the timer cancels
// nothing.
func (w *stallTimer) stop() { w.clock.remove(w) }

// check is w's check at now, its check being due: true when w stalled,
// and then it cancels its attempt; else w.next is its next check. It reads
// the relaying flag before the last sign of life, and the clock last (now
// is read after both): the runner touches the activity before it clears
// the flag, so a cleared flag comes with the touch that ended the
// relaying.
func (w *stallTimer) check(relaying bool, last, now int64) bool {
	wait, err := stallCheck(now, w.start, last, relaying, w.first, w.idle)
	if err != nil {
		w.cancel(w.timeouts.Stalled(err.Setting))
		return true
	}
	w.next = now + int64(wait)
	return false
}

// stallClock runs the stall checks of every attempt of an engine on one
// runtime timer, set for the earliest check that is due.
//
// Why not a timer per attempt: adding a timer that is the earliest of its
// processor's wakes a thread waiting in the network poller (a write to an
// eventfd, and the thread's going back to sleep), and an attempt's timer
// usually is the earliest, so at concurrency 1 every attempt paid that
// twice over (docs/performance.md, "Timers without wake-ups"). Here an
// attempt's check is an entry in a heap, and the timer is set again only
// for a check earlier than the one it is set for: attempts that start
// after it, with the same timeouts, never touch it. A timer set for an
// attempt that has ended since fires for nothing and is set for the next
// check, if any.
type stallClock struct {
	mu    sync.Mutex
	heap  stallHeap
	timer *time.Timer // made at the first check, then Reset
	armed int64       // when the timer fires, on ActivityClock's scale; 0: not set
	// sets counts the timer's settings (tests).
	sets int
}

// add puts w's first check at next.
func (c *stallClock) add(w *stallTimer, next int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.next = next
	heap.Push(&c.heap, w)
	c.setLocked(next)
}

// remove takes w off the clock.
func (c *stallClock) remove(w *stallTimer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.index >= 0 {
		heap.Remove(&c.heap, w.index)
	}
}

// setLocked sets the timer for at, unless it is set for earlier already.
func (c *stallClock) setLocked(at int64) {
	if c.armed != 0 && c.armed <= at {
		return
	}
	c.armed = at
	c.sets++
	d := time.Duration(at - provider.ActivityClock())
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.fire)
		return
	}
	c.timer.Reset(d)
}

// fire runs the checks that are due and sets the timer for the next one.
// A check cancels its attempt under the clock's lock, so that a stall
// never cancels an attempt whose stop has returned.
func (c *stallClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = 0
	for len(c.heap) > 0 {
		w := c.heap[0]
		relaying := w.relaying.Load()
		last := w.act.Last()
		now := provider.ActivityClock()
		if w.next > now {
			c.setLocked(w.next)
			return
		}
		if w.check(relaying, last, now) {
			heap.Pop(&c.heap)
			continue
		}
		heap.Fix(&c.heap, 0)
	}
}

// stallHeap is the attempts' checks, the earliest first
// (container/heap).
type stallHeap []*stallTimer

func (h stallHeap) Len() int           { return len(h) }
func (h stallHeap) Less(i, j int) bool { return h[i].next < h[j].next }
func (h stallHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *stallHeap) Push(x any) {
	w := x.(*stallTimer)
	w.index = len(*h)
	*h = append(*h, w)
}

func (h *stallHeap) Pop() any {
	old := *h
	n := len(old)
	w := old[n-1]
	old[n-1] = nil
	w.index = -1
	*h = old[:n-1]
	return w
}

// stallCheck decides, at now, about an attempt that started at start and
// whose provider last showed a sign of life at last (0: never; all on
// provider.ActivityClock's scale): a *retry.StallError when the first event
// timeout passed without a sign of life or the idle timeout passed since
// the last one, else how long until the next check. While the runner is
// relaying an event, nothing is the provider's fault: the check comes back
// a whole idle timeout later. Before the first sign of life, the next check
// is at most an idle timeout away, since that sign does not reset the
// timer.
func stallCheck(now, start, last int64, relaying bool, first, idle time.Duration) (time.Duration, *retry.StallError) {
	switch {
	case relaying:
		return idle, nil
	case last == 0:
		if waited := time.Duration(now - start); waited < first {
			return min(first-waited, idle), nil
		}
		return 0, &retry.StallError{Setting: retry.SettingFirstEvent, Timeout: first}
	}
	if silent := time.Duration(now - last); silent < idle {
		return idle - silent, nil
	}
	return 0, &retry.StallError{Setting: retry.SettingStreamIdle, Timeout: idle}
}
