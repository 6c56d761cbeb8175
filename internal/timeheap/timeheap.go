// Package timeheap runs many waiters' due times on one runtime timer.
//
// Why not a timer each: adding a runtime timer that is the earliest of its
// processor's wakes the thread waiting in the network poller (an eventfd
// write, and the thread going back to sleep), and a call's own timer often
// is the earliest, on a processor with no other. A Clock keeps its
// entries in a heap, earliest first, and sets its one timer again only for
// an entry due earlier than the one it is set for: entries added after it
// with the same wait never touch it. When it fires for entries that have
// left since, it is set for the next one, if any.
//
// The engine's stall checks and the call contexts' deadlines
// (internal/engine/callctx) each run on one.
package timeheap

import (
	"container/heap"
	"math"
	"sync"
	"time"
)

// Due is what an entry is for: the Clock calls Due when the entry's time
// has come, under the clock's lock, so Due must not add to or remove from
// the same clock. again puts the entry back on the clock wait later;
// otherwise it is off the clock.
type Due interface {
	Due() (wait time.Duration, again bool)
}

// Entry is one waiter's place on a Clock. Its zero value is off every
// clock; an Entry is on one clock at a time.
type Entry struct {
	at    int64 // when it is due, on the clock's scale (now)
	index int   // its place in the heap plus one; 0 when it is off
	due   Due
}

// Clock is a heap of entries on one runtime timer. Its zero value is
// ready to use.
type Clock struct {
	mu    sync.Mutex
	heap  entries
	timer *time.Timer // made at the first Add, then Reset
	armed int64       // when the timer fires, on now's scale; 0: not set
	sets  int         // the timer's settings, for tests
}

// epoch is where now counts from.
var epoch = time.Now()

// now is the clocks' time: monotonic nanoseconds since epoch, never 0.
func now() int64 { return int64(time.Since(epoch)) + 1 }

// dueAt is when an entry due after wait is due, on now's scale. A wait
// past the scale's end (a deadline as far as time goes, which
// time.Until gives as nearly math.MaxInt64) is due at its end: wrapped
// round, it would be the earliest entry, and the timer, set for it,
// would not be set again for any other.
func dueAt(wait time.Duration) int64 {
	n := now()
	if int64(wait) > math.MaxInt64-n {
		return math.MaxInt64
	}
	return n + int64(wait)
}

// Add puts e on the clock, due after wait, for due. e must be off every
// clock.
func (c *Clock) Add(e *Entry, due Due, wait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.at, e.due = dueAt(wait), due
	heap.Push(&c.heap, e)
	c.setLocked(e.at)
}

// Remove takes e off the clock; an entry that is off already stays so.
// Once it returns, e's Due is not called again.
func (c *Clock) Remove(e *Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.index > 0 {
		heap.Remove(&c.heap, e.index-1)
	}
	e.due = nil
}

// Len returns the number of entries on the clock.
func (c *Clock) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.heap)
}

// Sets returns how many times the clock has set its timer.
func (c *Clock) Sets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sets
}

// setLocked sets the timer for at, unless it is set for earlier already.
func (c *Clock) setLocked(at int64) {
	if c.armed != 0 && c.armed <= at {
		return
	}
	c.armed = at
	c.sets++
	d := time.Duration(at - now())
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.fire)
		return
	}
	c.timer.Reset(d)
}

// fire runs the entries that are due and sets the timer for the next.
func (c *Clock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = 0
	for len(c.heap) > 0 {
		e := c.heap[0]
		if e.at > now() {
			c.setLocked(e.at)
			return
		}
		wait, again := e.due.Due()
		if !again {
			heap.Pop(&c.heap)
			e.due = nil
			continue
		}
		e.at = dueAt(wait)
		heap.Fix(&c.heap, 0)
	}
}

// entries is a clock's heap, the earliest first (container/heap).
type entries []*Entry

func (h entries) Len() int           { return len(h) }
func (h entries) Less(i, j int) bool { return h[i].at < h[j].at }
func (h entries) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i+1, j+1
}

func (h *entries) Push(x any) {
	e := x.(*Entry)
	*h = append(*h, e)
	e.index = len(*h)
}

func (h *entries) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	e.index = 0
	*h = old[:n-1]
	return e
}
