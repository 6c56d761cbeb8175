// Package memory is the in-process state.Store: llmrelay's default, with
// zero setup, whose limits hold for this process only. The redis store
// also uses it for its local limits while Redis is unreachable (fail_open).
package memory

import (
	"context"
	"sync"
	"time"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Store is the in-memory state.Store. It is safe for concurrent use. Its
// leases never expire: a process holds them until it releases them or
// exits, and nothing outlives the process.
type Store struct {
	now    func() time.Time
	scopes sync.Map // name → *scope

	// targets are route targets' health (state.TargetHealth), by key;
	// only targets that failed since their last success have an entry.
	targetsMu sync.RWMutex
	targets   map[string]state.TargetStatus

	// logs are the event logs of resumable calls (eventlog.go).
	logs eventLogs

	// keys are the stored API keys (keys.go); spend the budgets'
	// counters and the usage records (spend.go).
	keys  keyTable
	spend spendBook
}

var (
	_ state.Store        = (*Store)(nil)
	_ state.TargetHealth = (*Store)(nil)
)

// scope is one key's rate and leases, or one lease set.
type scope struct {
	mu   sync.Mutex
	tat  time.Time // GCRA: the theoretical arrival time of the next call
	held int       // leases held
}

// Option adjusts a Store.
type Option func(*Store)

// WithClock sets the clock rates are measured with; tests pass a settable
// one. The default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now, targets: map[string]state.TargetStatus{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// The name spaces of the scopes: keys' rates and streams, and lease sets.
const (
	keyScope = "key:"
	setScope = "set:"
)

func (s *Store) scope(name string) *scope {
	if sc, ok := s.scopes.Load(name); ok {
		return sc.(*scope)
	}
	sc, _ := s.scopes.LoadOrStore(name, &scope{})
	return sc.(*scope)
}

// Admit implements state.Admitter, with a GCRA (a token bucket that keeps
// one timestamp) for the rate and a counter for the leases.
func (s *Store) Admit(ctx context.Context, key string, q state.Quota) (state.Admission, error) {
	if err := ctx.Err(); err != nil {
		return state.Admission{}, err
	}
	if q.Rate <= 0 && q.MaxConcurrent <= 0 {
		return state.Admission{Allowed: true}, nil
	}
	sc := s.scope(keyScope + key)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if q.MaxConcurrent > 0 && sc.held >= q.MaxConcurrent {
		return state.Admission{Refused: state.LimitConcurrency, Open: sc.held}, nil
	}
	if q.Rate > 0 {
		if wait := sc.take(s.now(), q); wait > 0 {
			return state.Admission{Refused: state.LimitRate, RetryAfter: wait}, nil
		}
	}
	adm := state.Admission{Allowed: true}
	if q.MaxConcurrent > 0 {
		sc.held++
		adm.Lease = &lease{sc: sc}
	}
	return adm, nil
}

// take takes one rate token at now and returns 0, or returns how long
// until one is due and takes nothing. sc.mu is held.
func (sc *scope) take(now time.Time, q state.Quota) time.Duration {
	interval := q.Interval()
	tat := sc.tat
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	allowAt := next.Add(-time.Duration(q.EffectiveBurst()) * interval)
	if allowAt.After(now) {
		return allowAt.Sub(now)
	}
	sc.tat = next
	return 0
}

// Acquire implements state.Leases.
func (s *Store) Acquire(ctx context.Context, set string, limit int) (state.Lease, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	sc := s.scope(setScope + set)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if limit > 0 && sc.held >= limit {
		return nil, false, nil
	}
	sc.held++
	return &lease{sc: sc}, true, nil
}

// Count implements state.Leases.
func (s *Store) Count(ctx context.Context, set string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	sc := s.scope(setScope + set)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.held, nil
}

// Close implements state.Store; there is nothing to release.
func (s *Store) Close() error { return nil }

// lease is one held slot of a scope.
type lease struct {
	sc   *scope
	once sync.Once
}

// Release implements state.Lease.
func (l *lease) Release() {
	l.once.Do(func() {
		l.sc.mu.Lock()
		l.sc.held--
		l.sc.mu.Unlock()
	})
}

// RecordTarget implements state.TargetHealth.
func (s *Store) RecordTarget(ctx context.Context, key string, ok bool, now time.Time, p state.OutlierPolicy) (state.TargetStatus, error) {
	if err := ctx.Err(); err != nil {
		return state.TargetStatus{}, err
	}
	s.targetsMu.Lock()
	defer s.targetsMu.Unlock()
	if ok {
		// Restored: a healthy target needs no entry.
		delete(s.targets, key)
		return state.TargetStatus{}, nil
	}
	st := p.Next(s.targets[key], now)
	s.targets[key] = st
	return st, nil
}

// TargetStatus implements state.TargetHealth.
func (s *Store) TargetStatus(ctx context.Context, keys []string, now time.Time) ([]state.TargetStatus, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.targetsMu.RLock()
	defer s.targetsMu.RUnlock()
	out := make([]state.TargetStatus, len(keys))
	for i, k := range keys {
		st := s.targets[k]
		st.Ejected, st.JustEjected = now.Before(st.Until), false
		out[i] = st
	}
	return out, nil
}
