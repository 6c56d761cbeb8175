package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/retry"
)

func TestStallCheck(t *testing.T) {
	const first, idle = 10 * time.Second, 2 * time.Second
	at := func(d time.Duration) int64 { return int64(time.Hour + d) } // on the activity clock's scale
	start := at(0)
	tests := []struct {
		name     string
		now      time.Duration
		last     time.Duration // -1: no sign of life yet
		relaying bool
		wait     time.Duration
		timeout  string // "" when not stalled
	}{
		{"nothing yet, within first_event_timeout: check again within an idle timeout", 3 * time.Second, -1, false, idle, ""},
		{"nothing yet, the last stretch of first_event_timeout", 9 * time.Second, -1, false, time.Second, ""},
		{"nothing within first_event_timeout", 10 * time.Second, -1, false, 0, "first_event_timeout"},
		{"a sign of life, then silence shorter than the idle timeout", 9 * time.Second, 8 * time.Second, false, time.Second, ""},
		{"silence as long as the idle timeout", 12 * time.Second, 10 * time.Second, false, 0, "stream_idle_timeout"},
		{"streaming past first_event_timeout is fine", 30 * time.Second, 29 * time.Second, false, time.Second, ""},
		{"relaying to the client is not the provider's silence", time.Minute, time.Second, true, idle, ""},
		{"relaying before the first sign of life", time.Minute, -1, true, idle, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var last int64
			if tc.last >= 0 {
				last = at(tc.last)
			}
			wait, err := stallCheck(at(tc.now), start, last, tc.relaying, first, idle)
			var se *retry.StallError
			switch {
			case tc.timeout == "" && (err != nil || wait != tc.wait):
				t.Errorf("got wait %v, %v; want %v and no stall", wait, err, tc.wait)
			case tc.timeout != "" && (!errors.As(err, &se) || se.Setting != tc.timeout || !errors.Is(err, retry.ErrStalled)):
				t.Errorf("got %v, want a stall on %s that is retry.ErrStalled", err, tc.timeout)
			}
		})
	}
}
