package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/timeheap"
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
// engine's clock (internal/timeheap), when the attempt's check is due,
// reads them and either cancels the attempt with a *retry.StallError or
// sets the next check for the time that is left.
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

	// The attempt's place on the engine's clock, whose one timer runs every
	// attempt's checks (internal/timeheap: a timer per attempt woke a
	// thread for each, docs/performance.md, "Timers without wake-ups").
	clock *timeheap.Clock
	entry timeheap.Entry
}

// testStallStarted, set by tests, is handed each attempt's stall as its
// timer starts: a func that stalls the attempt at once, as its idle
// timeout passing would.
var testStallStarted func(stall func())

// startStallTimer starts the stall timeouts t of an attempt on clock,
// which cancels the attempt with t's *retry.StallError when one passes.
func startStallTimer(clock *timeheap.Clock, t retry.StallTimeouts, cancel context.CancelCauseFunc) *stallTimer {
	first, idle := t.FirstEvent, t.Idle
	w := &stallTimer{start: provider.ActivityClock(), first: first, idle: idle, timeouts: t, cancel: cancel, clock: clock}
	// The first sign of life does not move the check, so until it comes
	// the check is at least every idle timeout.
	clock.Add(&w.entry, w, min(first, idle))
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
func (w *stallTimer) stop() { w.clock.Remove(&w.entry) }

// Due is w's check, its time having come (timeheap.Due): when w stalled,
// it cancels its attempt (under the clock's lock, so a stall never cancels
// an attempt whose stop has returned); else it asks to be checked again
// when its time can next run out. It reads the relaying flag before the
// last sign of life, and the clock last: the runner touches the activity
// before it clears the flag, so a cleared flag comes with the touch that
// ended the relaying.
func (w *stallTimer) Due() (time.Duration, bool) {
	relaying := w.relaying.Load()
	last := w.act.Last()
	wait, err := stallCheck(provider.ActivityClock(), w.start, last, relaying, w.first, w.idle)
	if err != nil {
		w.cancel(w.timeouts.Stalled(err.Setting))
		return 0, false
	}
	return wait, true
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
