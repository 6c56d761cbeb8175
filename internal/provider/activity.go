package provider

import (
	"sync/atomic"
	"time"
)

// Activity records when an attempt's provider last showed a sign of life.
// The attempt runner makes one per attempt, hands it to the adapter in
// Request.Activity and reads it from its stall timer; an HTTP adapter
// touches it for every read of the response body that returned bytes, so
// that keep-alive comments, pings, reasoning and usage-only chunks keep an
// attempt alive whether or not they become events.
//
// Touching costs one monotonic clock read and one atomic store: no lock,
// no allocation, no channel. Touch and Last are safe for concurrent use;
// the zero Activity has seen nothing, and a nil *Activity ignores Touch.
type Activity struct {
	last atomic.Int64
}

// epoch is the origin of ActivityClock: readings are durations since it,
// so they come from the monotonic clock.
var epoch = time.Now()

// ActivityClock returns the current time on the scale Activity records:
// monotonic nanoseconds since the process started, never 0.
func ActivityClock() int64 { return int64(time.Since(epoch)) + 1 }

// Touch records a sign of life now.
func (a *Activity) Touch() {
	if a != nil {
		a.last.Store(ActivityClock())
	}
}

// Last returns when the provider last showed a sign of life, on
// ActivityClock's scale; 0 when it has shown none yet.
func (a *Activity) Last() int64 {
	if a == nil {
		return 0
	}
	return a.last.Load()
}
