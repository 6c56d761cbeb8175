package statetest

import (
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Clock is a settable clock, for the target health suite and for tests
// that drive target health through a server.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock set to a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// NewTargetHealth returns a fresh, empty TargetHealth for one test.
type NewTargetHealth func(t *testing.T) state.TargetHealth

// Policy is the policy the target health suite runs with: 3 failures eject
// for 10s, growing to at most 25s.
var Policy = state.OutlierPolicy{Failures: 3, BaseEjection: 10 * time.Second, MaxEjection: 25 * time.Second}

// RunTargetHealth runs the conformance suite of state.TargetHealth against
// the implementations newHealth makes, on a clock it moves.
func RunTargetHealth(t *testing.T, newHealth NewTargetHealth) {
	const a, b = "p/a", "p/b"
	setup := func(t *testing.T) (*healthHarness, *Clock) {
		c := NewClock()
		return &healthHarness{h: newHealth(t), c: c}, c
	}
	record := func(t *testing.T, h *healthHarness, key string, ok bool) state.TargetStatus {
		t.Helper()
		st, err := h.h.RecordTarget(t.Context(), key, ok, h.c.Now(), Policy)
		if err != nil {
			t.Fatalf("RecordTarget(%s, %v): %v", key, ok, err)
		}
		return st
	}
	status := func(t *testing.T, h *healthHarness, key string) state.TargetStatus {
		t.Helper()
		st, err := h.h.TargetStatus(t.Context(), []string{key}, h.c.Now())
		if err != nil || len(st) != 1 {
			t.Fatalf("TargetStatus(%s) = %v, %v", key, st, err)
		}
		return st[0]
	}
	failTimes := func(t *testing.T, h *healthHarness, key string, n int) state.TargetStatus {
		t.Helper()
		var st state.TargetStatus
		for range n {
			st = record(t, h, key, false)
		}
		return st
	}

	t.Run("failures below the threshold do not eject", func(t *testing.T) {
		h, _ := setup(t)
		if st := failTimes(t, h, a, 2); st.Ejected || st.JustEjected || st.Failures != 2 {
			t.Fatalf("after 2 failures: %+v, want 2 failures, not ejected", st)
		}
	})
	t.Run("the threshold ejects for the base time", func(t *testing.T) {
		h, c := setup(t)
		failTimes(t, h, a, 2)
		st := record(t, h, a, false)
		if !st.Ejected || !st.JustEjected || st.Ejections != 1 || st.Failures != 0 ||
			!st.EjectedAt.Equal(c.Now()) || !st.Until.Equal(c.Now().Add(10*time.Second)) {
			t.Fatalf("after 3 failures: %+v, want ejected now for 10s", st)
		}
		if st := status(t, h, a); !st.Ejected || st.JustEjected {
			t.Fatalf("Status: %+v, want ejected", st)
		}
		if st := status(t, h, b); st != (state.TargetStatus{}) {
			t.Fatalf("another target: %+v, want healthy", st)
		}
	})
	t.Run("failures during an ejection change nothing", func(t *testing.T) {
		h, c := setup(t)
		first := failTimes(t, h, a, 3)
		c.Advance(5 * time.Second)
		st := failTimes(t, h, a, 5)
		if !st.Ejected || st.JustEjected || !st.Until.Equal(first.Until) || st.Ejections != 1 {
			t.Fatalf("failures while ejected: %+v, want the first ejection unchanged (%v)", st, first.Until)
		}
	})
	t.Run("the ejection ends by the clock", func(t *testing.T) {
		h, c := setup(t)
		failTimes(t, h, a, 3)
		c.Advance(10*time.Second - time.Nanosecond)
		if !status(t, h, a).Ejected {
			t.Fatal("not ejected before its end")
		}
		c.Advance(time.Nanosecond)
		if st := status(t, h, a); st.Ejected || st.Ejections != 1 {
			t.Fatalf("at its end: %+v, want back, on probation", st)
		}
	})
	t.Run("a failure on probation ejects again, for longer, up to the max", func(t *testing.T) {
		h, c := setup(t)
		failTimes(t, h, a, 3)
		for i, want := range []time.Duration{20 * time.Second, 25 * time.Second, 25 * time.Second} {
			c.Advance(time.Hour)
			st := record(t, h, a, false)
			if !st.JustEjected || st.Ejections != i+2 || st.Until.Sub(st.EjectedAt) != want {
				t.Fatalf("failure %d on probation: %+v, want ejection %d for %v", i+1, st, i+2, want)
			}
		}
	})
	t.Run("one success restores a target", func(t *testing.T) {
		h, c := setup(t)
		failTimes(t, h, a, 3)
		c.Advance(time.Minute)
		if st := record(t, h, a, true); st != (state.TargetStatus{}) {
			t.Fatalf("after a success: %+v, want healthy", st)
		}
		if st := failTimes(t, h, a, 2); st.Ejected {
			t.Fatalf("restored, then 2 failures: %+v, want the threshold to count again", st)
		}
		if st := record(t, h, a, false); !st.JustEjected || st.Until.Sub(st.EjectedAt) != 10*time.Second {
			t.Fatalf("3rd failure after being restored: %+v, want the base ejection again", st)
		}
	})
	t.Run("a success during an ejection restores at once", func(t *testing.T) {
		h, _ := setup(t)
		failTimes(t, h, a, 3)
		record(t, h, a, true)
		if st := status(t, h, a); st != (state.TargetStatus{}) {
			t.Fatalf("%+v, want healthy", st)
		}
	})
	t.Run("a success resets the failures in a row", func(t *testing.T) {
		h, _ := setup(t)
		failTimes(t, h, a, 2)
		record(t, h, a, true)
		if st := failTimes(t, h, a, 2); st.Ejected {
			t.Fatalf("%+v: failures before a success counted", st)
		}
	})
	t.Run("Status keeps the order of its keys", func(t *testing.T) {
		h, _ := setup(t)
		failTimes(t, h, b, 3)
		st, err := h.h.TargetStatus(t.Context(), []string{a, b, "p/never-seen"}, h.c.Now())
		if err != nil || len(st) != 3 || st[0].Ejected || !st[1].Ejected || st[2] != (state.TargetStatus{}) {
			t.Fatalf("Status = %+v, %v; want a healthy, b ejected, the unknown one healthy", st, err)
		}
	})
	t.Run("concurrent failures eject once", func(t *testing.T) {
		h, _ := setup(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ejections := 0
		for range 16 {
			wg.Go(func() {
				st, err := h.h.RecordTarget(t.Context(), a, false, h.c.Now(), Policy)
				if err != nil {
					t.Error(err)
				}
				if st.JustEjected {
					mu.Lock()
					ejections++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if ejections != 1 {
			t.Fatalf("%d records said they ejected the target, want exactly 1", ejections)
		}
	})
}

// healthHarness is a TargetHealth under test and the clock its calls read.
type healthHarness struct {
	h state.TargetHealth
	c *Clock
}
