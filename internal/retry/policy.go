package retry

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Limits are the server's retry defaults and ceilings and its stall
// timeouts (first event, stream idle), from its configuration
// (config.Config.RetryLimits: the configuration's defaults are the only
// defaults). A request may ask for less, never for more, and never for less
// than MinStreamTimeout.
type Limits struct {
	// DefaultMaxAttempts applies when a request leaves max_attempts at 0.
	DefaultMaxAttempts int
	// MaxAttemptsLimit caps any request's max_attempts.
	MaxAttemptsLimit int
	// InitialBackoff is the default backoff before the first retry.
	InitialBackoff time.Duration
	// MaxBackoff is the default and the largest cap on the backoff.
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest provider retry hint worth waiting for.
	MaxRetryAfter time.Duration
	// DefaultIdleTimeout is the stream idle timeout of requests that set none.
	DefaultIdleTimeout time.Duration
	// MaxIdleTimeout clamps a request's stream idle timeout.
	MaxIdleTimeout time.Duration
	// DefaultFirstEventTimeout is the first event timeout of requests that
	// set none, for providers that set no default of their own.
	DefaultFirstEventTimeout time.Duration
	// MaxFirstEventTimeout clamps a first event timeout.
	MaxFirstEventTimeout time.Duration
	// MinStreamTimeout is the shortest stream idle or first event timeout
	// a request may ask for; shorter ones are refused (CheckStreamTimeouts).
	MinStreamTimeout time.Duration
	// MaxHedges caps the hedges any call may start (0: the server hedges
	// nothing); MinHedgeAfter is the shortest hedging delay a request may
	// ask for, and the least an adaptive one waits (see Hedging).
	MaxHedges     int
	MinHedgeAfter time.Duration
}

// Midstream says what happens when an attempt fails after it streamed
// output. The values mirror the proto enum llmrelay.v1.Midstream.
type Midstream int32

// Midstream modes.
const (
	// MidstreamRestart (and the zero value) retries: the client is told to
	// discard the partial output and the next attempt streams from its start.
	MidstreamRestart Midstream = 1
	// MidstreamFail ends the call with the error.
	MidstreamFail Midstream = 2
)

// Request is what a request asked for; zero fields take the server's
// defaults.
type Request struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Midstream      Midstream
}

// Policy is the retry policy of one call: the request's wishes, defaulted and
// clamped to the server's Limits.
type Policy struct {
	// MaxAttempts counts the first attempt; 1 means no retries.
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Midstream      Midstream
	// MaxRetryAfter is the longest provider retry hint the call waits for.
	MaxRetryAfter time.Duration
}

// Policy returns the policy for a request: each zero field takes the
// default; MaxAttempts is clamped to [1, MaxAttemptsLimit], MaxBackoff to the
// server's MaxBackoff and InitialBackoff to MaxBackoff.
func (l Limits) Policy(r Request) Policy {
	p := Policy{
		MaxAttempts:    r.MaxAttempts,
		InitialBackoff: r.InitialBackoff,
		MaxBackoff:     r.MaxBackoff,
		Midstream:      r.Midstream,
		MaxRetryAfter:  l.MaxRetryAfter,
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = l.DefaultMaxAttempts
	}
	p.MaxAttempts = max(1, min(p.MaxAttempts, l.MaxAttemptsLimit))
	if p.MaxBackoff <= 0 || p.MaxBackoff > l.MaxBackoff {
		p.MaxBackoff = l.MaxBackoff
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = l.InitialBackoff
	}
	p.InitialBackoff = min(p.InitialBackoff, p.MaxBackoff)
	if p.Midstream != MidstreamFail {
		p.Midstream = MidstreamRestart
	}
	return p
}

// IdleTimeout returns a call's stream idle timeout: the requested one (zero
// means the default), clamped to MaxIdleTimeout.
func (l Limits) IdleTimeout(requested time.Duration) time.Duration {
	if requested <= 0 {
		requested = l.DefaultIdleTimeout
	}
	return min(requested, l.MaxIdleTimeout)
}

// FirstEventTimeout returns an attempt's first event timeout: the
// requested one, else the provider's default (providerDefault, zero for
// none), else DefaultFirstEventTimeout; clamped to MaxFirstEventTimeout.
func (l Limits) FirstEventTimeout(requested, providerDefault time.Duration) time.Duration {
	switch {
	case requested > 0:
	case providerDefault > 0:
		requested = providerDefault
	default:
		requested = l.DefaultFirstEventTimeout
	}
	return min(requested, l.MaxFirstEventTimeout)
}

// CheckStreamTimeouts refuses a request's stream idle or first event
// timeout (zero: unset) below MinStreamTimeout, which no provider could
// meet: a *provider.FieldError naming the request field.
func (l Limits) CheckStreamTimeouts(idle, firstEvent time.Duration) error {
	for _, t := range []struct {
		field string
		d     time.Duration
	}{{"stream_idle_timeout", idle}, {"first_event_timeout", firstEvent}} {
		if t.d > 0 && t.d < l.MinStreamTimeout {
			return &provider.FieldError{Field: t.field, Description: fmt.Sprintf("%v is shorter than the server's floor of %v", t.d, l.MinStreamTimeout)}
		}
	}
	return nil
}

// Rand returns a uniformly random integer in [0, n) for n > 0. Tests inject
// a fixed one; nil means math/rand/v2.
type Rand func(n int64) int64

// Backoff returns the wait before retry n (n ≥ 1, the retry after attempt n):
// with d = min(InitialBackoff·2^(n-1), MaxBackoff), a wait drawn uniformly
// from [d/2, d] ("equal jitter").
func (p Policy) Backoff(n int, rnd Rand) time.Duration {
	if rnd == nil {
		rnd = rand.Int64N
	}
	d := p.InitialBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + time.Duration(rnd(int64(d-half)+1))
}

// StallTimeouts are one attempt's two stall timeouts, and whether each is
// the caller's own choice, stricter than what the server would use: a
// stall under such a timeout is the caller's doing as much as the
// provider's (Classification.CallerCaused).
type StallTimeouts struct {
	FirstEvent, Idle                   time.Duration
	FirstEventCallerSet, IdleCallerSet bool
}

// Stall returns the stall timeouts of an attempt to a provider whose own
// first event timeout is providerFirst (zero: none), for a request that
// asked for idle and firstEvent (zero: unset): the one place that decides
// whether a stall is the caller's doing.
func (l Limits) Stall(idle, firstEvent, providerFirst time.Duration) StallTimeouts {
	t := StallTimeouts{Idle: l.IdleTimeout(idle), FirstEvent: l.FirstEventTimeout(firstEvent, providerFirst)}
	t.IdleCallerSet = t.Idle < l.DefaultIdleTimeout
	t.FirstEventCallerSet = t.FirstEvent < l.FirstEventTimeout(0, providerFirst)
	return t
}

// Stalled returns the StallError of an attempt whose timeout setting
// (SettingFirstEvent or SettingStreamIdle) passed, saying whether the
// caller set it.
func (t StallTimeouts) Stalled(setting string) *StallError {
	if setting == SettingFirstEvent {
		return &StallError{Setting: setting, Timeout: t.FirstEvent, CallerSet: t.FirstEventCallerSet}
	}
	return &StallError{Setting: SettingStreamIdle, Timeout: t.Idle, CallerSet: t.IdleCallerSet}
}
