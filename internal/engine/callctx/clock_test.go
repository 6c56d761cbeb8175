package callctx

import (
	"context"
	"testing"
	"time"
)

// onClock returns a call context with deadline d that is not on any clock
// yet.
func onClock(d time.Time) *callCtx {
	inner, cancel := context.WithCancelCause(context.Background())
	return &callCtx{Context: inner, cancel: cancel, deadline: d, index: -1}
}

// TestClockSetsItsTimerOnlyForAnEarlierDeadline: a deadline later than the
// one the timer is set for leaves the timer alone; an earlier one sets it
// again; a call that ends leaves the clock.
func TestClockSetsItsTimerOnlyForAnEarlierDeadline(t *testing.T) {
	var k clock
	now := time.Now()
	first, later, earlier := onClock(now.Add(time.Hour)), onClock(now.Add(2*time.Hour)), onClock(now.Add(30*time.Minute))
	k.add(first)
	k.add(later)
	if k.sets != 1 || !k.armed.Equal(first.deadline) {
		t.Fatalf("after a later deadline: %d settings, armed for %v; want 1, %v", k.sets, k.armed, first.deadline)
	}
	k.add(earlier)
	if k.sets != 2 || !k.armed.Equal(earlier.deadline) {
		t.Fatalf("after an earlier deadline: %d settings, armed for %v; want 2, %v", k.sets, k.armed, earlier.deadline)
	}
	k.remove(earlier)
	k.remove(earlier) // a second stop is harmless
	if len(k.heap) != 2 || earlier.index != -1 || k.sets != 2 {
		t.Fatalf("after a call ended: %d on the clock, its index %d, %d settings; want 2, -1, 2", len(k.heap), earlier.index, k.sets)
	}
	k.remove(first)
	k.remove(later)
	k.timer.Stop()
}

// TestClockEndsTheCallsWhoseDeadlinePassed: when the timer fires, every
// call whose deadline passed ends with DeadlineExceeded, the others go on,
// and the timer is set for the next deadline; a call that left the clock
// is not ended by it.
func TestClockEndsTheCallsWhoseDeadlinePassed(t *testing.T) {
	var k clock
	now := time.Now()
	soon, sooner, gone, later := onClock(now.Add(40*time.Millisecond)), onClock(now.Add(20*time.Millisecond)),
		onClock(now.Add(10*time.Millisecond)), onClock(now.Add(time.Hour))
	for _, c := range []*callCtx{soon, later, sooner, gone} {
		k.add(c)
	}
	k.remove(gone)
	for _, c := range []*callCtx{sooner, soon} {
		select {
		case <-c.Done():
		case <-time.After(time.Minute):
			t.Fatalf("a deadline %v ago has not ended its call", time.Since(c.deadline))
		}
		if c.Err() != context.DeadlineExceeded || context.Cause(c) != context.DeadlineExceeded {
			t.Errorf("Err %v, Cause %v; want DeadlineExceeded", c.Err(), context.Cause(c))
		}
	}
	// The timer may have fired once for the first two; fire again now
	// that both are due, as a late timer would.
	k.fire()
	k.mu.Lock()
	left, armed := len(k.heap), k.armed
	k.mu.Unlock()
	if left != 1 || !armed.Equal(later.deadline) {
		t.Errorf("%d left on the clock, armed for %v; want the later call alone, armed for %v", left, armed, later.deadline)
	}
	if later.Err() != nil || gone.Err() != nil {
		t.Errorf("the later call: %v, the call that left: %v; want both going on", later.Err(), gone.Err())
	}
	k.remove(later)
	k.timer.Stop()
}
