package callctx

import (
	"context"
	"testing"
	"time"
)

// TestDeadlinesShareOneTimer: call contexts whose deadlines come after the
// one the shared timer is set for leave it alone, and a call that ends
// takes its deadline off it.
func TestDeadlinesShareOneTimer(t *testing.T) {
	before := deadlines.Len()
	var stops []context.CancelFunc
	_, stop := WithDeadline(context.Background(), time.Now().Add(time.Hour))
	stops = append(stops, stop)
	sets := deadlines.Sets()
	for i := range 10 {
		_, stop := WithDeadline(context.Background(), time.Now().Add(time.Hour+time.Duration(i+1)*time.Minute))
		stops = append(stops, stop)
	}
	// None of the ten sets the timer; a timer set for a call of another
	// test that has ended may fire meanwhile and be set for these, once.
	if got := deadlines.Sets(); got-sets > 1 {
		t.Errorf("ten later deadlines set the timer %d times, want none", got-sets)
	}
	if got := deadlines.Len(); got != before+11 {
		t.Errorf("%d deadlines on the clock, want %d", got, before+11)
	}
	for _, stop := range stops {
		stop()
	}
	if got := deadlines.Len(); got != before {
		t.Errorf("%d deadlines on the clock after the calls ended, want %d", got, before)
	}
}
