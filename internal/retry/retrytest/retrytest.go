// Package retrytest helps tests drive the retry plan's waits.
package retrytest

import (
	"testing"
	"time"
)

// Wait is one wait a ManualTimer was asked for: a hedging delay or a wait
// between attempts. The test ends it with Fire.
type Wait struct {
	D    time.Duration
	fire chan time.Time
}

// Fire ends the wait now.
func (w Wait) Fire() { w.fire <- time.Now() }

// ManualTimer is a retry.Timer that hands every wait it is asked for to
// the test, which ends it when it chooses: the test, not the machine's
// speed, decides when a hedge starts or a retry follows.
type ManualTimer struct{ asked chan Wait }

// NewManualTimer returns a ManualTimer that holds up to 16 waits nobody
// took yet.
func NewManualTimer() *ManualTimer { return &ManualTimer{asked: make(chan Wait, 16)} }

// After implements retry.Timer.
func (m *ManualTimer) After(d time.Duration) <-chan time.Time {
	w := Wait{D: d, fire: make(chan time.Time, 1)}
	m.asked <- w
	return w.fire
}

// Next returns the next wait asked for, failing t when none comes (the
// deadline only guards against hangs).
func (m *ManualTimer) Next(t testing.TB) Wait {
	t.Helper()
	select {
	case w := <-m.asked:
		return w
	case <-time.After(30 * time.Second):
		t.Fatal("retrytest: no wait was asked for within 30s")
		return Wait{}
	}
}

// None fails t if a wait was asked for and not taken.
func (m *ManualTimer) None(t testing.TB) {
	t.Helper()
	select {
	case w := <-m.asked:
		t.Errorf("retrytest: a wait of %v was asked for, want none", w.D)
	default:
	}
}

// Instant is a retry.Timer whose every wait ends at once: tests and
// examples see the plan's decisions without waiting them.
type Instant struct{}

// After implements retry.Timer.
func (Instant) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}
