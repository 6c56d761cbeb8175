package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/timeheap"
)

// stallAttempt starts an attempt's stall timer on clock, with an attempt
// context that the timer cancels.
func stallAttempt(t *testing.T, clock *timeheap.Clock, first, idle time.Duration) (context.Context, *stallTimer) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	return ctx, startStallTimer(clock, retry.StallTimeouts{FirstEvent: first, Idle: idle}, cancel)
}

// stalledOn waits (up to a wide margin) for ctx's stall and returns the
// timeout it stalled on.
func stalledOn(t *testing.T, ctx context.Context) string {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the attempt did not stall")
	}
	var se *retry.StallError
	if !errors.As(context.Cause(ctx), &se) {
		t.Fatalf("cancelled with %v, want a *retry.StallError", context.Cause(ctx))
	}
	return se.Setting
}

func TestStallClockCancelsASilentAttempt(t *testing.T) {
	var clock timeheap.Clock
	ctx, _ := stallAttempt(t, &clock, 20*time.Millisecond, time.Hour)
	if got := stalledOn(t, ctx); got != retry.SettingFirstEvent {
		t.Errorf("stalled on %s, want %s", got, retry.SettingFirstEvent)
	}
}

// A stopped attempt is never cancelled: the clock checks in the order the
// checks are due, so once a later attempt stalled, the stopped one's time
// has passed.
func TestStallClockLeavesAStoppedAttemptAlone(t *testing.T) {
	var clock timeheap.Clock
	stoppedCtx, stopped := stallAttempt(t, &clock, 10*time.Millisecond, time.Hour)
	stopped.stop()
	laterCtx, _ := stallAttempt(t, &clock, 40*time.Millisecond, time.Hour)
	stalledOn(t, laterCtx)
	if err := context.Cause(stoppedCtx); err != nil {
		t.Errorf("the stopped attempt was cancelled: %v", err)
	}
}

// While the runner relays an event, the provider is not silent: a check
// that finds the attempt relaying past its idle timeout comes back later,
// and the idle timeout counts from the end of the relaying.
func TestStallClockChecksAgainAfterRelaying(t *testing.T) {
	var clock timeheap.Clock
	ctx, w := stallAttempt(t, &clock, time.Hour, 20*time.Millisecond)
	w.act.Touch()
	w.relay()
	// The first check (an idle timeout after the start) sets the clock
	// again, for the next.
	deadline := time.Now().Add(30 * time.Second)
	for clock.Sets() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the first check did not come")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("cancelled while relaying: %v", err)
	}
	w.relayed()
	if got := stalledOn(t, ctx); got != retry.SettingStreamIdle {
		t.Errorf("stalled on %s, want %s", got, retry.SettingStreamIdle)
	}
}

// Attempts whose checks come after the one the timer is set for leave the
// timer alone; only an earlier check sets it again.
func TestStallClockSetsItsTimerOnlyForAnEarlierCheck(t *testing.T) {
	var clock timeheap.Clock
	var timers []*stallTimer
	for range 10 {
		_, w := stallAttempt(t, &clock, time.Hour, time.Hour)
		timers = append(timers, w)
	}
	if got := clock.Sets(); got != 1 {
		t.Errorf("the timer was set %d times for 10 attempts started one after another, want 1", got)
	}
	for _, w := range timers {
		w.stop()
	}
	ctx, _ := stallAttempt(t, &clock, 10*time.Millisecond, time.Hour)
	if got := clock.Sets(); got != 2 {
		t.Errorf("the timer was set %d times, want 2 (the earlier check sets it)", got)
	}
	stalledOn(t, ctx)
}
