// Package usage owns llmrelay's accounting of what a call consumed: the
// kinds of tokens it counts (Kinds, one line per kind), the operator's
// price table (Prices) and the cost a call's tokens come to at those
// prices. The metrics, the per-call log line and the trace spans all read
// a call's tokens through Kinds, so a kind added there shows up in each of
// them.
package usage

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// Kind is one kind of token a call's usage counts.
type Kind struct {
	// Name names the kind in metrics (the `type` label), in the log line
	// (<name>_tokens) and in the price table.
	Name string
	// PartOf names the kind this one is a part of ("" for none): cached
	// input tokens are part of the input tokens. A part priced on its own
	// is taken out of its whole's count before the whole is priced; a part
	// without a price is paid at its whole's price.
	PartOf string
	// SpanAttribute is the OpenTelemetry GenAI semantic-convention span
	// attribute that carries the count.
	SpanAttribute string
	// Tokens reads the kind's count from a provider.Usage; Add adds to
	// it (usage records read back from a store).
	Tokens func(provider.Usage) int64
	Add    func(*provider.Usage, int64)
}

// Kinds are the kinds of tokens llmrelay accounts for, wholes before their
// parts. A kind the providers start reporting is one line here (and its
// field in provider.Usage): metrics, log line, spans, prices and cost
// follow.
var Kinds = []Kind{
	{Name: "input", SpanAttribute: "gen_ai.usage.input_tokens",
		Tokens: func(u provider.Usage) int64 { return u.InputTokens }, Add: func(u *provider.Usage, n int64) { u.InputTokens += n }},
	{Name: "output", SpanAttribute: "gen_ai.usage.output_tokens",
		Tokens: func(u provider.Usage) int64 { return u.OutputTokens }, Add: func(u *provider.Usage, n int64) { u.OutputTokens += n }},
	{Name: "reasoning", PartOf: Output, SpanAttribute: "gen_ai.usage.reasoning.output_tokens",
		Tokens: func(u provider.Usage) int64 { return u.ReasoningTokens }, Add: func(u *provider.Usage, n int64) { u.ReasoningTokens += n }},
	{Name: "cached_input", PartOf: Input, SpanAttribute: "gen_ai.usage.cache_read.input_tokens",
		Tokens: func(u provider.Usage) int64 { return u.CachedInputTokens }, Add: func(u *provider.Usage, n int64) { u.CachedInputTokens += n }},
	{Name: "cache_creation_input", PartOf: Input, SpanAttribute: "gen_ai.usage.cache_creation.input_tokens",
		Tokens: func(u provider.Usage) int64 { return u.CacheCreationInputTokens }, Add: func(u *provider.Usage, n int64) { u.CacheCreationInputTokens += n }},
}

// Kind names of the wholes, which every price list may set.
const (
	Input  = "input"
	Output = "output"
)

// KindNames returns the names of Kinds, in order.
func KindNames() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return names
}

// Count is the count of one kind of token.
type Count struct {
	Kind   string
	Tokens int64
}

// Counts returns u's non-zero counts, in the order of Kinds.
func Counts(u provider.Usage) []Count {
	var out []Count
	for _, k := range Kinds {
		if n := k.Tokens(u); n > 0 {
			out = append(out, Count{Kind: k.Name, Tokens: n})
		}
	}
	return out
}

// Price is a model's price list: the price of a million tokens of each
// kind, by kind name, in the price table's currency.
type Price map[string]float64

// Prices is the price table: a Price per model, by "<provider>/<model>".
// The zero value prices nothing. It is immutable once built and safe for
// concurrent use.
type Prices struct {
	byModel map[string]map[string]Price // by provider, then model
}

// NewPrices builds the price table. Every price list must name only known
// kinds (Kinds), with prices that are not negative, and price input and
// output.
func NewPrices(models map[string]Price) (*Prices, error) {
	p := &Prices{byModel: make(map[string]map[string]Price)}
	for _, model := range slices.Sorted(maps.Keys(models)) {
		prov, name, ok := strings.Cut(model, "/")
		if !ok || prov == "" || name == "" {
			return nil, fmt.Errorf("%q is not <provider>/<model>", model)
		}
		if err := Check(models[model]); err != nil {
			return nil, fmt.Errorf("%s: %w", model, err)
		}
		if p.byModel[prov] == nil {
			p.byModel[prov] = make(map[string]Price)
		}
		p.byModel[prov][name] = models[model]
	}
	return p, nil
}

// MaxPrice is the most a price may be (a million dollars a million
// tokens, hundreds of times any model's): costs stay far from what the
// budgets' counters hold, and an absurd price is a typo, not a price.
const MaxPrice = 1_000_000

// Check says what is wrong with one model's price list, or returns nil.
func Check(pr Price) error {
	for _, name := range slices.Sorted(maps.Keys(pr)) {
		if !slices.ContainsFunc(Kinds, func(k Kind) bool { return k.Name == name }) {
			return fmt.Errorf("unknown kind of token %q; known: %s", name, strings.Join(KindNames(), ", "))
		}
		if pr[name] < 0 {
			return fmt.Errorf("%s: the price must not be negative", name)
		}
		if pr[name] > MaxPrice {
			return fmt.Errorf("%s: %g is over the most a million tokens may cost, %d", name, pr[name], MaxPrice)
		}
	}
	for _, need := range []string{Input, Output} {
		if _, ok := pr[need]; !ok {
			return fmt.Errorf("%s: required (the price of a million %s tokens)", need, need)
		}
	}
	return nil
}

// Len returns how many models the table prices.
func (p *Prices) Len() int {
	if p == nil {
		return 0
	}
	n := 0
	for _, models := range p.byModel {
		n += len(models)
	}
	return n
}

// Cost returns what u comes to for model at the named provider, and false
// when the table has no price for it. Each kind is paid at its own price;
// a part with a price of its own is taken out of its whole first, so no
// token is paid twice. It does not allocate.
func (p *Prices) Cost(providerName, model string, u provider.Usage) (float64, bool) {
	if p == nil {
		return 0, false
	}
	pr, ok := p.byModel[providerName][model]
	if !ok {
		return 0, false
	}
	var cost float64
	for _, k := range Kinds {
		price, priced := pr[k.Name]
		if !priced {
			continue // a part without a price stays in its whole
		}
		n := k.Tokens(u)
		for _, part := range Kinds {
			if _, own := pr[part.Name]; own && part.PartOf == k.Name {
				n -= part.Tokens(u)
			}
		}
		cost += float64(max(n, 0)) * price
	}
	return cost / 1e6, true
}
