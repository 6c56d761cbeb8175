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

// TestStartDeadline: a start deadline ends a call that has not started by
// then with DeadlineExceeded, leaves one that has alone, reports a
// deadline beyond any maximum, and is on the shared clock until either
// happens or the call ends.
func TestStartDeadline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		started bool
	}{
		{"not started", false},
		{"started", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deadlines.Len()
			due := time.Now().Add(300 * time.Millisecond)
			ctx, stop := WithStartDeadline(context.Background(), due, func() bool { return tc.started })
			defer stop()
			if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < 100*365*24*time.Hour {
				t.Errorf("Deadline = %v, %v; want the furthest there is", dl, ok)
			}
			if Cancel(ctx) == nil {
				t.Error("Cancel finds no call context")
			}
			// Until it is due (a loaded machine may get there before this
			// looks), it is on the clock.
			if got := deadlines.Len(); got != before+1 && time.Now().Before(due) {
				t.Errorf("%d entries on the clock, want %d", got, before+1)
			}
			// Its time comes: it leaves the clock either way.
			for deadlines.Len() > before {
				time.Sleep(time.Millisecond)
			}
			switch err := ctx.Err(); {
			case tc.started && err != nil:
				t.Errorf("a started call ended at its start deadline: %v", err)
			case !tc.started && err != context.DeadlineExceeded:
				t.Errorf("Err = %v, want DeadlineExceeded", err)
			}
		})
	}
	// A call that ends first takes its start deadline off the clock.
	before := deadlines.Len()
	_, stop := WithStartDeadline(context.Background(), time.Now().Add(time.Hour), func() bool { return false })
	stop()
	if got := deadlines.Len(); got != before {
		t.Errorf("%d entries on the clock after the call ended, want %d", got, before)
	}
}
