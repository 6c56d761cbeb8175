package timeheap

import (
	"math"
	"testing"
	"time"
)

// recorder is a Due that records its calls and asks again as told.
type recorder struct {
	name  string
	again []time.Duration // the waits to ask again with, one per call
	calls chan string
}

func (r *recorder) Due() (time.Duration, bool) {
	r.calls <- r.name
	if len(r.again) == 0 {
		return 0, false
	}
	wait := r.again[0]
	r.again = r.again[1:]
	return wait, true
}

// TestClockSetsItsTimerOnlyForAnEarlierEntry: an entry due later than the
// timer is set for leaves it alone, an earlier one sets it again, and an
// entry removed (twice, harmlessly) leaves the heap.
func TestClockSetsItsTimerOnlyForAnEarlierEntry(t *testing.T) {
	var c Clock
	var first, later, earlier Entry
	r := &recorder{calls: make(chan string, 3)}
	c.Add(&first, r, time.Hour)
	c.Add(&later, r, 2*time.Hour)
	if c.Sets() != 1 {
		t.Fatalf("after a later entry: %d settings, want 1", c.Sets())
	}
	c.Add(&earlier, r, 30*time.Minute)
	if c.Sets() != 2 {
		t.Fatalf("after an earlier entry: %d settings, want 2", c.Sets())
	}
	c.Remove(&earlier)
	c.Remove(&earlier)
	if c.Len() != 2 || earlier.index != 0 || c.Sets() != 2 {
		t.Fatalf("after a removal: %d entries, its index %d, %d settings; want 2, 0, 2", c.Len(), earlier.index, c.Sets())
	}
	c.Remove(&first)
	c.Remove(&later)
	c.timer.Stop()
}

// TestClockRunsWhatIsDueInOrder: entries run in the order they are due,
// one that asks again runs again that much later, a removed one never
// runs, and one due in an hour waits; the timer is then set for it.
func TestClockRunsWhatIsDueInOrder(t *testing.T) {
	var c Clock
	calls := make(chan string, 10)
	var a, b, gone, late Entry
	c.Add(&b, &recorder{name: "b", calls: calls}, 40*time.Millisecond)
	c.Add(&late, &recorder{name: "late", calls: calls}, time.Hour)
	c.Add(&a, &recorder{name: "a", again: []time.Duration{60 * time.Millisecond}, calls: calls}, 20*time.Millisecond)
	c.Add(&gone, &recorder{name: "gone", calls: calls}, 10*time.Millisecond)
	c.Remove(&gone)

	var got []string
	for range 3 {
		select {
		case name := <-calls:
			got = append(got, name)
		case <-time.After(time.Minute):
			t.Fatalf("ran %v, then nothing for a minute", got)
		}
	}
	if want := []string{"a", "b", "a"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("ran %v, want %v", got, want)
	}
	c.mu.Lock()
	left, armed := len(c.heap), c.armed
	c.mu.Unlock()
	if left != 1 || armed != late.at {
		t.Errorf("%d left, the timer set for %d; want the late entry alone, the timer set for it (%d)", left, armed, late.at)
	}
	c.Remove(&late)
	c.timer.Stop()
}

// TestClockWithAnEntryAsFarAsTimeGoes: an entry due after the longest
// wait there is (a deadline as far as time goes) leaves the clock working
// for the others. Its due time wrapped round to the earliest there is,
// and the timer, set for it hundreds of years ahead, was set for no other
// entry: every call context's deadline stopped ending its call.
func TestClockWithAnEntryAsFarAsTimeGoes(t *testing.T) {
	var c Clock
	var far, soon Entry
	r := &recorder{name: "soon", calls: make(chan string, 1)}
	c.Add(&far, &recorder{name: "far", calls: make(chan string, 1)}, time.Duration(math.MaxInt64))
	c.Add(&soon, r, 10*time.Millisecond)
	select {
	case got := <-r.calls:
		if got != "soon" {
			t.Fatalf("%s was due, want soon", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an entry due in 10ms was not due after 5s")
	}
	c.Remove(&far)
	c.timer.Stop()
}
