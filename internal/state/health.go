package state

import (
	"context"
	"time"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// TargetHealth records the health of route targets by outlier detection,
// in the sense of Envoy's: a target whose attempts fail
// OutlierPolicy.Failures times in a row is ejected, out of rotation, for
// an interval that grows with each ejection in a row (BaseEjection ×
// ejections, at most MaxEjection); when it ends the target is back, on
// probation: its next failure ejects it again at once, for longer, and one
// success restores it completely. Failures recorded while a target is
// ejected (attempts that started before, or that went to it because every
// target was ejected) change nothing; a success restores it at once.
//
// It is an optional capability of a Store, found by type assertion: a
// store that implements it shares the targets' health between the
// replicas that use it (the redis store does: a failure recorded in one
// script, reads from a view it refreshes); for a store that does not, the
// server keeps the health in process (memory.Store implements it). Targets are named by key,
// "<provider>/<model>"; the time is the caller's, so that every
// implementation runs on the same clock in tests. Implementations are safe
// for concurrent use. An error means the health could not be read or
// recorded; callers then treat targets as healthy.
//
// statetest.RunTargetHealth is its conformance suite.
type TargetHealth interface {
	// RecordTarget records the outcome of one attempt to the target at now
	// (ok: it succeeded) under the policy p, and returns the target's
	// status after it.
	RecordTarget(ctx context.Context, key string, ok bool, now time.Time, p OutlierPolicy) (TargetStatus, error)
	// TargetStatus returns the status of each target at now, in order.
	TargetStatus(ctx context.Context, keys []string, now time.Time) ([]TargetStatus, error)
}

// TargetStatus is one target's health.
type TargetStatus struct {
	// Ejected says the target is out of rotation now.
	Ejected bool
	// EjectedAt and Until are the latest ejection's start and end; both
	// zero when the target was never ejected since it was last restored.
	EjectedAt, Until time.Time
	// Failures counts the attempts that failed in a row since the last
	// success or ejection.
	Failures int
	// Ejections counts the ejections in a row since the last success.
	Ejections int
	// JustEjected says that the RecordTarget that returned this status
	// ejected the target.
	JustEjected bool
}

// OutlierPolicy says when a target is ejected and for how long.
//
// It is the outlier_detection section of llmrelay's configuration:
// Failures attempts failing in a row (for reasons that are the target's,
// not the request's) eject a target for BaseEjection, the n-th ejection in
// a row n times as long, at most MaxEjection; one success restores it.
type OutlierPolicy struct {
	// Failures is how many attempts must fail in a row to eject a target
	// (at least 1).
	Failures int `yaml:"consecutive_failures"`
	// BaseEjection is the first ejection's length; the n-th in a row lasts
	// n times as long, up to MaxEjection.
	BaseEjection time.Duration `yaml:"base_ejection_time"`
	MaxEjection  time.Duration `yaml:"max_ejection_time"`
}

// Check reports the policy's problems.
func (p OutlierPolicy) Check(ps setting.Problems) {
	if p.Failures < 1 {
		ps.Bad("consecutive_failures", "must be at least 1")
	}
	if p.BaseEjection <= 0 {
		ps.Bad("base_ejection_time", "must be positive")
	} else if p.MaxEjection < p.BaseEjection {
		ps.Between("max_ejection_time", "base_ejection_time", "%s is shorter than base_ejection_time (%s)",
			setting.Duration(p.MaxEjection), setting.Duration(p.BaseEjection))
	}
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

// Next returns a target's status after an attempt that failed at now,
// from its status s before it (Ejected and JustEjected ignored): the one
// transition every TargetHealth makes, atomically.
func (p OutlierPolicy) Next(s TargetStatus, now time.Time) TargetStatus {
	s.JustEjected = false
	switch {
	case now.Before(s.Until):
		// Ejected: an attempt that started before, or a last resort.
	case s.Ejections > 0 || s.Failures+1 >= p.Failures:
		// On probation after an ejection, or the last failure in a row
		// allowed: out of rotation, for longer each time.
		s.Ejections++
		s.Failures = 0
		s.EjectedAt, s.Until = now, now.Add(p.Ejection(s.Ejections))
		s.JustEjected = true
	default:
		s.Failures++
	}
	s.Ejected = now.Before(s.Until)
	return s
}
