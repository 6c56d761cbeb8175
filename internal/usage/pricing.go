package usage

import (
	"maps"
	"slices"
	"strings"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/setting"
)

// Pricing is the pricing section of llmrelay's configuration, the price
// table: what a million tokens of each kind cost, per model. Calls to a
// model without a price have no cost.
type Pricing struct {
	// Currency names the prices' currency in the docs and the config dump;
	// metrics carry numbers only.
	Currency string `yaml:"currency"`
	// Models maps "<provider>/<model>" to its prices per million tokens,
	// by kind of token: input and output, and optionally the kinds that
	// are part of them (cached_input, ...: see Kinds).
	Models map[string]Price `yaml:"models"`
}

// DefaultPricing returns the pricing section's defaults: no prices, in
// USD.
func DefaultPricing() Pricing { return Pricing{Currency: "USD"} }

// Prices returns the price table, nil when it prices no model. The
// section is checked, so it cannot fail.
func (p Pricing) Prices() *Prices {
	if len(p.Models) == 0 {
		return nil
	}
	prices, err := NewPrices(p.Models)
	if err != nil {
		return nil // Check refuses such a table
	}
	return prices
}

// Check reports the price table's problems: models not of the form
// <provider>/<model>, or of a provider that is not configured (or does
// not list the model), and price lists that Check refuses.
func (p Pricing) Check(ps setting.Problems, providers []provider.Config) {
	for _, model := range slices.Sorted(maps.Keys(p.Models)) {
		path := "models." + model
		name, m, ok := strings.Cut(model, "/")
		if !ok || name == "" || m == "" {
			ps.Bad(path, "%q is not <provider>/<model>", model)
			continue
		}
		i := slices.IndexFunc(providers, func(pc provider.Config) bool { return pc.Name == name })
		switch {
		case i < 0:
			ps.Bad(path, "no provider is named %q", name)
			continue
		case len(providers[i].Models) > 0 && !slices.Contains(providers[i].Models, m):
			ps.Bad(path, "provider %q does not list model %q", name, m)
			continue
		}
		if err := Check(p.Models[model]); err != nil {
			ps.Bad(path, "%v", err)
		}
	}
}
