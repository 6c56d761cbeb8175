package usage

import (
	"math"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// withCachedKind adds a kind that is part of the input, as the providers'
// cache reads are, for the duration of the test: the package's own Kinds
// may not have one yet.
func withCachedKind(t *testing.T) {
	saved := Kinds
	t.Cleanup(func() { Kinds = saved })
	Kinds = append(Kinds[:len(Kinds):len(Kinds)], Kind{
		Name: "cached_input", PartOf: Input,
		// The test stores the cached count in OutputTokens' high digits.
		Tokens: func(u provider.Usage) int64 { return u.OutputTokens / 1_000_000 },
	})
}

func TestCost(t *testing.T) {
	prices, err := NewPrices(map[string]Price{
		"openai/gpt":  {Input: 2.5, Output: 10},
		"mock/echo":   {Input: 0, Output: 0},
		"openai/mini": {Input: 0.15, Output: 0.6},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		provider string
		model    string
		usage    provider.Usage
		want     float64
		priced   bool
	}{
		{"input and output at their prices", "openai", "gpt", provider.Usage{InputTokens: 1_000_000, OutputTokens: 500_000}, 2.5 + 5, true},
		{"a few tokens", "openai", "mini", provider.Usage{InputTokens: 1000, OutputTokens: 100}, 0.00015 + 0.00006, true},
		{"free model", "mock", "echo", provider.Usage{InputTokens: 10, OutputTokens: 10}, 0, true},
		{"model without a price", "openai", "other", provider.Usage{InputTokens: 10}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := prices.Cost(tt.provider, tt.model, tt.usage)
			if ok != tt.priced || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Cost = %v, %v; want %v, %v", got, ok, tt.want, tt.priced)
			}
		})
	}
	t.Run("nil table prices nothing", func(t *testing.T) {
		var p *Prices
		if _, ok := p.Cost("openai", "gpt", provider.Usage{InputTokens: 1}); ok || p.Len() != 0 {
			t.Error("a nil table priced a model")
		}
	})
}

func TestCostOfParts(t *testing.T) {
	withCachedKind(t)
	// 1M input tokens of which 400k were cache reads; the cached count
	// rides in OutputTokens' millions (see withCachedKind).
	u := provider.Usage{InputTokens: 1_000_000, OutputTokens: 400_000 * 1_000_000}
	tests := []struct {
		name  string
		price Price
		want  float64
	}{
		{"a part with its own price is taken out of its whole", Price{Input: 2, Output: 0, "cached_input": 0.5}, 0.6*2 + 0.4*0.5},
		{"a part without a price is paid as its whole", Price{Input: 2, Output: 0}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPrices(map[string]Price{"p/m": tt.price})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := p.Cost("p", "m", u)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Cost = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		price Price
		want  string // "" for valid
	}{
		{"input and output", Price{Input: 1, Output: 2}, ""},
		{"unknown kind", Price{Input: 1, Output: 2, "thinking": 3}, `unknown kind of token "thinking"; known: input, output`},
		{"negative", Price{Input: -1, Output: 2}, "input: the price must not be negative"},
		{"output missing", Price{Input: 1}, "output: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.price)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	got := Counts(provider.Usage{InputTokens: 7})
	if len(got) != 1 || got[0] != (Count{Kind: Input, Tokens: 7}) {
		t.Errorf("Counts = %v, want only input 7", got)
	}
}
