package retry_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

const ms = time.Millisecond

func TestLimitsPolicy(t *testing.T) {
	l := config.Default().RetryLimits()
	tests := []struct {
		name string
		req  retry.Request
		want retry.Policy
	}{
		{"unset takes the defaults", retry.Request{},
			retry.Policy{MaxAttempts: 3, InitialBackoff: 500 * ms, MaxBackoff: 8 * time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}},
		{"1 disables retries", retry.Request{MaxAttempts: 1},
			retry.Policy{MaxAttempts: 1, InitialBackoff: 500 * ms, MaxBackoff: 8 * time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}},
		{"max_attempts clamped to the limit", retry.Request{MaxAttempts: 50},
			retry.Policy{MaxAttempts: 10, InitialBackoff: 500 * ms, MaxBackoff: 8 * time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}},
		{"shorter backoffs are kept", retry.Request{MaxAttempts: 5, InitialBackoff: ms, MaxBackoff: 4 * ms, Midstream: retry.MidstreamFail},
			retry.Policy{MaxAttempts: 5, InitialBackoff: ms, MaxBackoff: 4 * ms, Midstream: retry.MidstreamFail, MaxRetryAfter: time.Minute}},
		{"max_backoff clamped to the server's", retry.Request{MaxBackoff: time.Minute},
			retry.Policy{MaxAttempts: 3, InitialBackoff: 500 * ms, MaxBackoff: 8 * time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}},
		{"initial_backoff clamped to max_backoff", retry.Request{InitialBackoff: 30 * time.Second, MaxBackoff: 2 * time.Second},
			retry.Policy{MaxAttempts: 3, InitialBackoff: 2 * time.Second, MaxBackoff: 2 * time.Second, Midstream: retry.MidstreamRestart, MaxRetryAfter: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.Policy(tt.req); got != tt.want {
				t.Errorf("Policy(%+v) = %+v, want %+v", tt.req, got, tt.want)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	p := config.Default().RetryLimits().Policy(retry.Request{})
	tests := []struct {
		n        int
		min, max time.Duration
	}{
		{1, 250 * ms, 500 * ms},
		{2, 500 * ms, time.Second},
		{3, time.Second, 2 * time.Second},
		{4, 2 * time.Second, 4 * time.Second},
		{5, 4 * time.Second, 8 * time.Second},
		{6, 4 * time.Second, 8 * time.Second},
		{100, 4 * time.Second, 8 * time.Second}, // no overflow
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		t.Run(tt.min.String(), func(t *testing.T) {
			if got := p.Backoff(tt.n, func(int64) int64 { return 0 }); got != tt.min {
				t.Errorf("Backoff(%d) with the lowest draw = %v, want %v", tt.n, got, tt.min)
			}
			if got := p.Backoff(tt.n, func(n int64) int64 { return n - 1 }); got != tt.max {
				t.Errorf("Backoff(%d) with the highest draw = %v, want %v", tt.n, got, tt.max)
			}
			lo, hi := tt.max, tt.min
			for range 10000 {
				got := p.Backoff(tt.n, rnd.Int64N)
				if got < tt.min || got > tt.max {
					t.Fatalf("Backoff(%d) = %v, outside [%v, %v]", tt.n, got, tt.min, tt.max)
				}
				lo, hi = min(lo, got), max(hi, got)
			}
			// Equal jitter spreads the waits over the whole upper half.
			if spread := tt.max - tt.min; hi-lo < spread*9/10 {
				t.Errorf("Backoff(%d) draws span [%v, %v], want most of [%v, %v]", tt.n, lo, hi, tt.min, tt.max)
			}
		})
	}
}

func TestBackoffDefaultRandomness(t *testing.T) {
	p := retry.Policy{InitialBackoff: 100 * ms, MaxBackoff: time.Second}
	for range 1000 {
		if got := p.Backoff(2, nil); got < 100*ms || got > 200*ms {
			t.Fatalf("Backoff(2) = %v, outside [100ms, 200ms]", got)
		}
	}
}

func TestLimitsIdleTimeout(t *testing.T) {
	l := config.Default().RetryLimits()
	tests := []struct {
		name      string
		requested time.Duration
		want      time.Duration
	}{
		{"unset takes the default", 0, 30 * time.Second},
		{"shorter is kept", 300 * ms, 300 * ms},
		{"longer is clamped", time.Hour, 300 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.IdleTimeout(tt.requested); got != tt.want {
				t.Errorf("IdleTimeout(%v) = %v, want %v", tt.requested, got, tt.want)
			}
		})
	}
}

func TestLimitsFirstEventTimeout(t *testing.T) {
	l := config.Default().RetryLimits()
	tests := []struct {
		name                       string
		requested, providerDefault time.Duration
		want                       time.Duration
	}{
		{"unset takes the server default", 0, 0, 120 * time.Second},
		{"unset takes the provider's default", 0, 300 * time.Second, 300 * time.Second},
		{"the request's wins", time.Second, 300 * time.Second, time.Second},
		{"longer is clamped", time.Hour, 0, 600 * time.Second},
		{"a provider default longer than the max is clamped", 0, time.Hour, 600 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.FirstEventTimeout(tt.requested, tt.providerDefault); got != tt.want {
				t.Errorf("FirstEventTimeout(%v, %v) = %v, want %v", tt.requested, tt.providerDefault, got, tt.want)
			}
		})
	}
}

func TestLimitsCheckStreamTimeouts(t *testing.T) {
	l := config.Default().RetryLimits()
	tests := []struct {
		name        string
		idle, first time.Duration
		field       string
	}{
		{"unset", 0, 0, ""},
		{"at the floor", 100 * ms, 100 * ms, ""},
		{"half a second", 500 * ms, 500 * ms, ""},
		{"an idle timeout of 1ns", time.Nanosecond, 0, "stream_idle_timeout"},
		{"a first event timeout under the floor", 0, 99 * ms, "first_event_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.CheckStreamTimeouts(tt.idle, tt.first)
			var fe *provider.FieldError
			if tt.field == "" && err != nil || tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) {
				t.Errorf("CheckStreamTimeouts(%v, %v) = %v, want a field error on %q", tt.idle, tt.first, err, tt.field)
			}
		})
	}
}
