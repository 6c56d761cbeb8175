package usage

import (
	"math"
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/provider"
)

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
	// 1M input tokens of which 400k were cache reads and 100k cache
	// writes; 200k output tokens of which 50k were reasoning.
	u := provider.Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, CacheCreationInputTokens: 100_000,
		OutputTokens: 200_000, ReasoningTokens: 50_000}
	tests := []struct {
		name  string
		price Price
		want  float64
	}{
		{"parts with their own price are taken out of their whole",
			Price{Input: 2, Output: 8, "cached_input": 0.5, "cache_creation_input": 2.5},
			0.5*2 + 0.4*0.5 + 0.1*2.5 + 0.2*8},
		{"parts without a price are paid as their whole", Price{Input: 2, Output: 8}, 1*2 + 0.2*8},
		{"reasoning priced apart", Price{Input: 0, Output: 8, "reasoning": 10}, 0.15*8 + 0.05*10},
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
		{"unknown kind", Price{Input: 1, Output: 2, "thinking": 3}, `unknown kind of token "thinking"; known: input, output, reasoning, cached_input, cache_creation_input`},
		{"negative", Price{Input: -1, Output: 2}, "input: the price must not be negative"},
		{"absurd", Price{Input: 1, Output: 1e300}, "output: 1e+300 is over the most a million tokens may cost, 1000000"},
		{"the most", Price{Input: 1, Output: MaxPrice}, ""},
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
	got := Counts(provider.Usage{InputTokens: 7, CachedInputTokens: 3})
	want := []Count{{Kind: Input, Tokens: 7}, {Kind: "cached_input", Tokens: 3}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Counts = %v, want %v", got, want)
	}
}

// TestKindsAddWhatTheyRead: each kind's Add adds to the field its Tokens
// reads, and to no other, so a usage written as counts by kind and read
// back is the same usage.
func TestKindsAddWhatTheyRead(t *testing.T) {
	for i, k := range Kinds {
		var u provider.Usage
		k.Add(&u, int64(10+i))
		k.Add(&u, 1)
		for j, other := range Kinds {
			want := int64(0)
			if j == i {
				want = int64(11 + i)
			}
			if got := other.Tokens(u); got != want {
				t.Errorf("%s.Add: %s reads %d, want %d", k.Name, other.Name, got, want)
			}
		}
	}
}
