package retry

import (
	"sync"
)

// Budget is one provider's retry budget, the token bucket of gRFC A6 retry
// throttling: it starts full with MaxTokens; every retryable failure takes
// one token and every successful call gives back TokenRatio, up to
// MaxTokens. While the bucket holds MaxTokens/2 or less, retries are denied,
// so a provider in an outage receives about one attempt per call instead of
// MaxAttempts.
//
// A nil *Budget allows every retry. Budget is safe for concurrent use.
type Budget struct {
	mu        sync.Mutex
	tokens    float64
	maxTokens float64
	ratio     float64
}

// NewBudget returns a full budget. It returns nil (no throttling) when
// maxTokens is not positive.
func NewBudget(maxTokens, tokenRatio float64) *Budget {
	if maxTokens <= 0 {
		return nil
	}
	return &Budget{tokens: maxTokens, maxTokens: maxTokens, ratio: tokenRatio}
}

// Failure records a retryable failure and reports whether a retry may
// follow it: whether the bucket still holds more than half its tokens.
func (b *Budget) Failure() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = max(0, b.tokens-1)
	return b.tokens > b.maxTokens/2
}

// Success records a successful call.
func (b *Budget) Success() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(b.maxTokens, b.tokens+b.ratio)
}

// Tokens returns the tokens in the bucket, for tests and diagnostics.
func (b *Budget) Tokens() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}

// Budgets holds one Budget per provider, created on first use with the same
// settings. It is safe for concurrent use.
type Budgets struct {
	maxTokens, ratio float64

	mu sync.Mutex
	m  map[string]*Budget
}

// NewBudgets returns budgets of maxTokens tokens refilled by tokenRatio per
// success. With maxTokens 0, For returns nil budgets: no throttling.
func NewBudgets(maxTokens, tokenRatio float64) *Budgets {
	return &Budgets{maxTokens: maxTokens, ratio: tokenRatio, m: map[string]*Budget{}}
}

// For returns the provider's budget. A nil *Budgets returns nil.
func (bs *Budgets) For(provider string) *Budget {
	if bs == nil || bs.maxTokens <= 0 {
		return nil
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b, ok := bs.m[provider]
	if !ok {
		b = NewBudget(bs.maxTokens, bs.ratio)
		bs.m[provider] = b
	}
	return b
}
