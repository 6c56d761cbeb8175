package retry

import (
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Config is the retry section of llmrelay's configuration: the server's
// retry defaults and limits; requests may ask for less, never for more.
type Config struct {
	// DefaultMaxAttempts applies when a request does not set max_attempts.
	DefaultMaxAttempts int `yaml:"default_max_attempts"`
	// MaxAttemptsLimit caps any request's max_attempts.
	MaxAttemptsLimit int `yaml:"max_attempts_limit"`
	// InitialBackoff is the default wait before the first retry.
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	// MaxBackoff is the default cap on the backoff.
	MaxBackoff time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter is the longest provider retry hint llmrelay waits for; a
	// longer hint fails the call at once with RetryInfo carrying the hint.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
	// Budget bounds the retries in flight per provider.
	Budget BudgetSettings `yaml:"budget"`
	// Hedging bounds what requests (and routes' defaults) may ask of
	// hedged attempts; see docs/retries.md.
	Hedging HedgingSettings `yaml:"hedging"`
}

// BudgetSettings are Envoy's retry budget, per provider: the retries in
// flight to a provider (from the decision to retry until its attempt
// starts) may not exceed BudgetPercent of its attempts in flight, and
// MinRetryConcurrency retries may always be in flight. It counts what is
// in flight, never history, so it recovers as soon as retries end.
// Retries of failures a caller caused (a stall under its own stricter idle
// or first event timeout) and structured-output re-asks do not count. See
// docs/retries.md.
type BudgetSettings struct {
	// Enabled turns the budget on (the default); off, the call's own
	// max_attempts is the only bound on retries.
	Enabled bool `yaml:"enabled"`
	// BudgetPercent is the retries in flight allowed per 100 attempts in
	// flight to the same provider.
	BudgetPercent float64 `yaml:"budget_percent"`
	// MinRetryConcurrency is how many retries may be in flight to a
	// provider whatever its attempts in flight.
	MinRetryConcurrency int `yaml:"min_retry_concurrency"`
}

// HedgingSettings bound hedged attempts (GenerateRequest.hedging): a
// request may ask for fewer hedges, never for more, and no shorter delay
// than the floor.
type HedgingSettings struct {
	// MaxHedges caps the hedges of any call (0 to MaxHedges); 0 turns
	// hedging off on this server: calls that ask for it run without hedges.
	MaxHedges int `yaml:"max_hedges"`
	// MinHedgeAfter is the shortest hedge_after a request may ask for
	// (shorter is INVALID_ARGUMENT) and the least an adaptive delay waits.
	MinHedgeAfter time.Duration `yaml:"min_hedge_after"`
}

// StallSettings are the stall timeouts of the deadlines section: the
// defaults and bounds of an attempt's stream idle and first event
// timeouts (Limits.Stall).
type StallSettings struct {
	// StreamIdle is the default stream_idle_timeout: how long a streaming
	// attempt may show no sign of life.
	StreamIdle time.Duration `yaml:"stream_idle"`
	// MaxStreamIdle clamps a request's stream_idle_timeout.
	MaxStreamIdle time.Duration `yaml:"max_stream_idle"`
	// FirstEvent is the default first_event_timeout (how long an attempt
	// may wait for the provider's first byte) of providers that set no
	// first_event_timeout of their own.
	FirstEvent time.Duration `yaml:"first_event"`
	// MaxFirstEvent clamps first_event_timeout.
	MaxFirstEvent time.Duration `yaml:"max_first_event"`
	// MinStreamTimeout is the floor of a request's stream_idle_timeout and
	// first_event_timeout: shorter ones are refused with INVALID_ARGUMENT.
	MinStreamTimeout time.Duration `yaml:"min_stream_timeout"`
}

// DefaultConfig returns the retry section's defaults.
func DefaultConfig() Config {
	return Config{
		DefaultMaxAttempts: 3,
		MaxAttemptsLimit:   10,
		InitialBackoff:     500 * time.Millisecond,
		MaxBackoff:         8 * time.Second,
		MaxRetryAfter:      60 * time.Second,
		Budget:             BudgetSettings{Enabled: true, BudgetPercent: 20, MinRetryConcurrency: 3},
		Hedging:            HedgingSettings{MaxHedges: MaxHedges, MinHedgeAfter: 50 * time.Millisecond},
	}
}

// DefaultStall returns the stall timeouts' defaults.
func DefaultStall() StallSettings {
	return StallSettings{
		StreamIdle:       30 * time.Second,
		MaxStreamIdle:    300 * time.Second,
		FirstEvent:       120 * time.Second,
		MaxFirstEvent:    600 * time.Second,
		MinStreamTimeout: 100 * time.Millisecond,
	}
}

// maxAttemptsBound is the most max_attempts_limit may be, as the
// contract's RetryPolicy.max_attempts is bounded.
const maxAttemptsBound = 10

// Check reports the section's problems.
func (c Config) Check(p setting.Problems) {
	if c.MaxAttemptsLimit < 1 || c.MaxAttemptsLimit > maxAttemptsBound {
		p.Bad("max_attempts_limit", "%d is not within 1..%d", c.MaxAttemptsLimit, maxAttemptsBound)
	}
	if c.DefaultMaxAttempts < 1 || c.DefaultMaxAttempts > c.MaxAttemptsLimit {
		p.Between("default_max_attempts", "max_attempts_limit", "%d is not within 1..max_attempts_limit (%d)", c.DefaultMaxAttempts, c.MaxAttemptsLimit)
	}
	if c.InitialBackoff <= 0 {
		p.Bad("initial_backoff", "must be positive")
	} else if c.MaxBackoff < c.InitialBackoff {
		p.Between("max_backoff", "initial_backoff", "%s is shorter than initial_backoff (%s)", setting.Duration(c.MaxBackoff), setting.Duration(c.InitialBackoff))
	}
	if c.MaxRetryAfter <= 0 {
		p.Bad("max_retry_after", "must be positive")
	}
	if b := c.Budget; b.BudgetPercent < 0 || b.BudgetPercent > 1000 {
		p.Bad("budget.budget_percent", "%v is not within 0..1000 (retries in flight per 100 attempts in flight)", b.BudgetPercent)
	}
	if c.Budget.MinRetryConcurrency < 0 {
		p.Bad("budget.min_retry_concurrency", "must not be negative")
	}
	if h := c.Hedging; h.MaxHedges < 0 || h.MaxHedges > MaxHedges {
		p.Bad("hedging.max_hedges", "%d is not within 0..%d (0 turns hedging off)", h.MaxHedges, MaxHedges)
	}
	if h := c.Hedging; h.MinHedgeAfter <= 0 || h.MinHedgeAfter > time.Minute {
		p.Bad("hedging.min_hedge_after", "%s is not within 1ms..1m", setting.Duration(h.MinHedgeAfter))
	}
	if b := c.Budget; b.Enabled && b.BudgetPercent == 0 && b.MinRetryConcurrency == 0 {
		p.Between("budget.min_retry_concurrency", "budget.budget_percent",
			"0 with budget_percent 0 would deny every retry; set max_attempts to 1 for that, or enabled: false for no budget")
	}
}

// Check reports the stall timeouts' problems.
func (s StallSettings) Check(p setting.Problems) {
	if s.MinStreamTimeout <= 0 {
		p.Bad("min_stream_timeout", "must be positive")
	}
	if s.StreamIdle < s.MinStreamTimeout || s.StreamIdle <= 0 {
		p.Between("stream_idle", "min_stream_timeout", "%s is shorter than min_stream_timeout (%s)", setting.Duration(s.StreamIdle), setting.Duration(s.MinStreamTimeout))
	} else if s.MaxStreamIdle < s.StreamIdle {
		p.Between("max_stream_idle", "stream_idle", "%s is shorter than stream_idle (%s)", setting.Duration(s.MaxStreamIdle), setting.Duration(s.StreamIdle))
	}
	if s.FirstEvent < s.MinStreamTimeout || s.FirstEvent <= 0 {
		p.Between("first_event", "min_stream_timeout", "%s is shorter than min_stream_timeout (%s)", setting.Duration(s.FirstEvent), setting.Duration(s.MinStreamTimeout))
	} else if s.MaxFirstEvent < s.FirstEvent {
		p.Between("max_first_event", "first_event", "%s is shorter than first_event (%s)", setting.Duration(s.MaxFirstEvent), setting.Duration(s.FirstEvent))
	}
}

// Limits returns the plan's limits of the retry section and the stall
// timeouts.
func (c Config) Limits(s StallSettings) Limits {
	return Limits{
		DefaultMaxAttempts:       c.DefaultMaxAttempts,
		MaxAttemptsLimit:         c.MaxAttemptsLimit,
		InitialBackoff:           c.InitialBackoff,
		MaxBackoff:               c.MaxBackoff,
		MaxRetryAfter:            c.MaxRetryAfter,
		DefaultIdleTimeout:       s.StreamIdle,
		MaxIdleTimeout:           s.MaxStreamIdle,
		DefaultFirstEventTimeout: s.FirstEvent,
		MaxFirstEventTimeout:     s.MaxFirstEvent,
		MinStreamTimeout:         s.MinStreamTimeout,
		MaxHedges:                c.Hedging.MaxHedges,
		MinHedgeAfter:            c.Hedging.MinHedgeAfter,
	}
}

// BudgetConfig returns the retry budget's formula; ok is false when the
// budget is off.
func (c Config) BudgetConfig() (b BudgetConfig, ok bool) {
	return BudgetConfig{Percent: c.Budget.BudgetPercent, MinRetryConcurrency: c.Budget.MinRetryConcurrency}, c.Budget.Enabled
}
