package engine

import (
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
// Nothing on the per-event path touches the timer: the adapter and the
// runner only store a timestamp (Activity.Touch) and a flag, and the
// timer, when it fires, reads them and either cancels the attempt with a
// *retry.StallError or sets itself for the time that is left.
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

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// startStallTimer starts the stall timeouts t of an attempt, which cancel
// with t's *retry.StallError when one passes.
func startStallTimer(t retry.StallTimeouts, cancel context.CancelCauseFunc) *stallTimer {
	first, idle := t.FirstEvent, t.Idle
	w := &stallTimer{start: provider.ActivityClock(), first: first, idle: idle, timeouts: t, cancel: cancel}
	w.mu.Lock()
	// The first sign of life does not touch the timer, so until it
	// comes the timer checks at least every idle timeout.
	w.timer = time.AfterFunc(min(first, idle), w.fire)
	w.mu.Unlock()
	return w
}

// fire checks the attempt when the timer goes off. It reads the relaying
// flag before the last sign of life, and the clock last: the runner
// touches the activity before it clears the flag, so a cleared flag comes
// with the touch that ended the relaying.
func (w *stallTimer) fire() {
	relaying := w.relaying.Load()
	last := w.act.Last()
	wait, err := stallCheck(provider.ActivityClock(), w.start, last, relaying, w.first, w.idle)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if err != nil {
		w.stopped = true
		w.cancel(w.timeouts.Stalled(err.Setting))
		return
	}
	w.timer.Reset(wait)
}

// relay marks the start of handing an event to the client.
func (w *stallTimer) relay() { w.relaying.Store(true) }

// relayed marks its end: the provider's time runs again from now.
func (w *stallTimer) relayed() {
	w.act.Touch()
	w.relaying.Store(false)
}

// stop stops the timer for good.
func (w *stallTimer) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
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
