package route

import (
	"context"
	"sync"
	"time"
)

// Health records the health of route targets by outlier detection, in the
// sense of Envoy's: a target whose attempts fail OutlierPolicy.Failures
// times in a row is ejected, out of rotation, for an interval that grows
// with each ejection in a row (BaseEjection × ejections, at most
// MaxEjection); when it ends the target is back, on probation: its next
// failure ejects it again at once, for longer, and one success restores
// it completely. Failures recorded while a target is ejected (attempts
// that started before, or that went to it because every target was
// ejected) change nothing; a success restores it at once.
//
// Targets are named by key, "<provider>/<model>". Implementations are safe
// for concurrent use; every replica of a server must see the same targets'
// health through a shared one (state kept in Redis would be; Memory is
// one process's). An error means the health could not be read or
// recorded (a shared store unreachable); callers then treat targets as
// healthy.
//
// The conformance suite in internal/route/healthtest runs against every
// implementation.
type Health interface {
	// Record records the outcome of one attempt to the target (ok: it
	// succeeded) and returns the target's status after it.
	Record(ctx context.Context, key string, ok bool) (Status, error)
	// Status returns the status of each target, in order.
	Status(ctx context.Context, keys []string) ([]Status, error)
}

// Status is one target's health.
type Status struct {
	// Ejected says the target is out of rotation now.
	Ejected bool
	// Ejected is true from EjectedAt until Until, the latest ejection's
	// start and end; both zero when the target was never ejected since it
	// was last restored.
	EjectedAt, Until time.Time
	// Failures counts the attempts that failed in a row since the last
	// success or ejection.
	Failures int
	// Ejections counts the ejections in a row since the last success.
	Ejections int
	// JustEjected says that the Record that returned this status ejected
	// the target.
	JustEjected bool
}

// OutlierPolicy says when a target is ejected and for how long.
type OutlierPolicy struct {
	// Failures is how many attempts must fail in a row to eject a target.
	Failures int
	// BaseEjection is the first ejection's length; the n-th in a row lasts
	// n times as long, up to MaxEjection.
	BaseEjection time.Duration
	MaxEjection  time.Duration
}

// DefaultOutlierPolicy is Envoy's outlier detection default: 5 failures in
// a row eject a target for 30s, growing up to 5m.
var DefaultOutlierPolicy = OutlierPolicy{Failures: 5, BaseEjection: 30 * time.Second, MaxEjection: 5 * time.Minute}

// Ejection returns the length of the n-th ejection in a row (n ≥ 1).
func (p OutlierPolicy) Ejection(n int) time.Duration {
	d := p.BaseEjection
	for i := 1; i < n && d < p.MaxEjection; i++ {
		d += p.BaseEjection
	}
	return min(d, p.MaxEjection)
}

// Memory is the in-process Health: one server's view, lost on restart. It
// is safe for concurrent use.
type Memory struct {
	policy OutlierPolicy
	now    func() time.Time

	mu      sync.Mutex
	targets map[string]*Status
}

var _ Health = (*Memory)(nil)

// NewMemory returns an empty Memory for the policy, reading the time from
// now (nil: time.Now); tests pass a clock they move.
func NewMemory(p OutlierPolicy, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{policy: p, now: now, targets: map[string]*Status{}}
}

// Record implements Health.
func (m *Memory) Record(_ context.Context, key string, ok bool) (Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ok {
		// Restored: a healthy target needs no entry.
		delete(m.targets, key)
		return Status{}, nil
	}
	now := m.now()
	s, found := m.targets[key]
	if !found {
		s = &Status{}
		m.targets[key] = s
	}
	out := *s
	switch {
	case now.Before(s.Until):
		// Ejected: an attempt that started before, or a last resort.
	case s.Ejections > 0 || s.Failures+1 >= m.policy.Failures:
		// On probation after an ejection, or the last failure in a row
		// allowed: out of rotation, for longer each time.
		s.Ejections++
		s.Failures = 0
		s.EjectedAt, s.Until = now, now.Add(m.policy.Ejection(s.Ejections))
		out = *s
		out.JustEjected = true
	default:
		s.Failures++
		out = *s
	}
	out.Ejected = now.Before(out.Until)
	return out, nil
}

// Status implements Health.
func (m *Memory) Status(_ context.Context, keys []string) ([]Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := make([]Status, len(keys))
	for i, k := range keys {
		if s, ok := m.targets[k]; ok {
			out[i] = *s
			out[i].Ejected = now.Before(s.Until)
		}
	}
	return out, nil
}
