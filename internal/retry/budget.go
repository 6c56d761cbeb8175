package retry

import (
	"context"
	"sync"

	"github.com/llmrelay/llmrelay/internal/state"
)

// Throttle is one provider's retry budget as an attempt plan uses it. It
// counts two things, and nothing else: the provider's attempts in flight
// (Begin) and its retries in flight (Retry). It keeps no history, so it
// cannot wedge: once the retries in flight end, retries are allowed again.
//
// The interface is small on purpose, so that a budget shared between
// replicas implements it: a state store's state.RetryBudget (the redis
// store's counts every replica's attempts and retries in flight, Begin
// without a round trip, Retry in one) has exactly this method set. *Budget
// is the in-process implementation.
//
// Implementations are safe for concurrent use. The funcs they return are
// idempotent and never block for long.
type Throttle interface {
	// Begin records one attempt in flight at the provider, from when it
	// starts until end is called, when it ends.
	Begin(ctx context.Context) (end func())
	// Retry asks for a retry of a failed attempt. When the budget allows
	// it, ok is true and the retry is in flight until release is called:
	// when its attempt starts (it then counts as an attempt in flight),
	// or when the call ends during the wait. When the budget denies it, ok
	// is false and release is nil. A shared store that cannot answer
	// decides by its own failure mode.
	Retry(ctx context.Context) (release func(), ok bool)
}

// A shared store's budget is a Throttle, and a Throttle is what a store's
// budget must be: the two interfaces stay one method set.
var (
	_ Throttle          = state.RetryBudget(nil)
	_ state.RetryBudget = Throttle(nil)
)

// BudgetConfig is a retry budget's shape, Envoy's retry budget: retries in
// flight to a provider may not exceed Percent of its attempts in flight,
// and MinRetryConcurrency retries are always allowed at once. Its Limit is
// the one formula of the budget, kept in internal/state so that a budget
// shared through a state store applies it too.
type BudgetConfig = state.BudgetLimit

// Budget is one provider's retry budget in this process: a Throttle that
// allows a retry while fewer than Limit(attempts in flight) retries are in
// flight.
//
// A retry is in flight from the decision to retry until its attempt
// starts: while it waits its backoff. (Envoy holds it a little longer,
// until the upstream answers the retry; llmrelay counts that time as the
// attempt's, so that a loaded machine's slow connection setup does not
// pass for an outage.) So retries against a provider that fails at once
// (an outage: every attempt an instant 503 or a refused connection) spend
// their time waiting, pile up against few attempts in flight and are held
// to the minimum, while the retries of a provider that serves them (a
// dropped stream whose retry streams a reply) soon count as attempts in
// flight, and raise the limit for the others.
//
// A nil *Budget allows every retry. Budget is safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	cfg     BudgetConfig
	active  int
	retries int
}

// NewBudget returns an empty budget.
func NewBudget(cfg BudgetConfig) *Budget { return &Budget{cfg: cfg} }

// Begin implements Throttle.
func (b *Budget) Begin(context.Context) (end func()) {
	if b == nil {
		return func() {}
	}
	b.mu.Lock()
	b.active++
	b.mu.Unlock()
	return b.once(&b.active)
}

// Retry implements Throttle.
func (b *Budget) Retry(context.Context) (release func(), ok bool) {
	if b == nil {
		return func() {}, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.retries >= b.cfg.Limit(b.active) {
		return nil, false
	}
	b.retries++
	return b.once(&b.retries), true
}

// once returns a func that decrements *n, the first time only.
func (b *Budget) once(n *int) func() {
	var done bool
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if !done {
			done = true
			*n--
		}
	}
}

// InFlight returns the attempts and the retries in flight, for tests and
// diagnostics.
func (b *Budget) InFlight() (attempts, retries int) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.active, b.retries
}

// Budgets holds one Budget per provider, created on first use with the same
// config. It is safe for concurrent use.
type Budgets struct {
	cfg BudgetConfig

	mu sync.Mutex
	m  map[string]*Budget
}

// Inherit makes bs, the budgets of a new configuration, go on counting the
// attempts and retries in flight of prev, the budgets it replaces: bs
// takes over prev's per-provider budgets, with bs's config, so that the
// calls still in flight on the previous configuration keep counting. A nil
// bs or prev inherits nothing.
func (bs *Budgets) Inherit(prev *Budgets) {
	if bs == nil || prev == nil {
		return
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for name, b := range prev.m {
		b.mu.Lock()
		b.cfg = bs.cfg
		b.mu.Unlock()
		bs.m[name] = b
	}
}

// NewBudgets returns per-provider budgets of cfg.
func NewBudgets(cfg BudgetConfig) *Budgets {
	return &Budgets{cfg: cfg, m: map[string]*Budget{}}
}

// Throttle returns the provider's budget as a Throttle: a PlanConfig's
// Budget. A nil *Budgets returns nil: no budget.
func (bs *Budgets) Throttle(provider string) Throttle {
	if bs == nil {
		return nil
	}
	return bs.For(provider)
}

// For returns the provider's budget. A nil *Budgets returns nil: no
// budget.
func (bs *Budgets) For(provider string) *Budget {
	if bs == nil {
		return nil
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b, ok := bs.m[provider]
	if !ok {
		b = NewBudget(bs.cfg)
		bs.m[provider] = b
	}
	return b
}
