package route_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/route"
)

func TestCheck(t *testing.T) {
	ptr := func(n int) *int { return &n }
	fptr := func(f float64) *float64 { return &f }
	valid := func() route.Config {
		return route.Config{Name: "smart", Targets: []route.TargetConfig{{Model: "openai/gpt-4.1"}, {Model: "mock/echo"}}}
	}
	tests := []struct {
		name   string
		mutate func(*route.Config)
		want   string // "path: message start"; "" for none
	}{
		{"valid", func(*route.Config) {}, ""},
		{"no name", func(c *route.Config) { c.Name = "" }, "routes[0].name: required"},
		{"a slash in the name", func(c *route.Config) { c.Name = "team/smart" }, `routes[0].name: "team/smart" cannot be called`},
		{"upper case", func(c *route.Config) { c.Name = "Smart" }, `routes[0].name: "Smart" cannot be called`},
		{"unknown balance", func(c *route.Config) { c.Balance = "random" }, `routes[0].balance: "random" is not ordered or weighted`},
		{"no targets", func(c *route.Config) { c.Targets = nil }, "routes[0].targets: is empty"},
		{"a target without a provider", func(c *route.Config) { c.Targets[1].Model = "gpt-4.1" }, `routes[0].targets[1].model: "gpt-4.1" is not <provider>/<model>`},
		{"an unknown provider", func(c *route.Config) { c.Targets[0].Model = "azure/gpt-4.1" }, `routes[0].targets[0].model: "azure/gpt-4.1" names the provider "azure", which is not configured; providers: mock, openai`},
		{"a target twice", func(c *route.Config) { c.Targets[1].Model = "openai/gpt-4.1" }, `routes[0].targets[1].model: "openai/gpt-4.1" is listed twice (also targets[0])`},
		{"a weight on an ordered route", func(c *route.Config) { c.Targets[0].Weight = 2 }, "routes[0].targets[0].weight: only a route with balance: weighted uses weights"},
		{"a negative weight", func(c *route.Config) { c.Balance = "weighted"; c.Targets[0].Weight = -1 }, "routes[0].targets[0].weight: must not be negative"},
		{"max_attempts 11", func(c *route.Config) { c.Defaults.Retry.MaxAttempts = 11 }, "routes[0].defaults.retry.max_attempts: 11 is not within 1..10"},
		{"midstream", func(c *route.Config) { c.Defaults.Retry.Midstream = "resume" }, `routes[0].defaults.retry.midstream: "resume" is not restart or fail`},
		{"max_output_tokens 0", func(c *route.Config) { c.Defaults.Generation.MaxOutputTokens = ptr(0) }, "routes[0].defaults.generation.max_output_tokens: 0 is not within 1..1000000"},
		{"temperature 3", func(c *route.Config) { c.Defaults.Generation.Temperature = fptr(3) }, "routes[0].defaults.generation.temperature: 3 is not within 0..2"},
		{"an empty stop", func(c *route.Config) { c.Defaults.Generation.Stop = []string{""} }, "routes[0].defaults.generation.stop[0]: must be 1 to 256 bytes"},
		{"a message role", func(c *route.Config) { c.Defaults.Messages = []route.Message{{Role: "tool", Content: "x"}} }, `routes[0].defaults.messages[0].role: "tool" is not system, user or assistant`},
		{"an empty message", func(c *route.Config) { c.Defaults.Messages = []route.Message{{Role: "user"}} }, "routes[0].defaults.messages[0].content: required"},
		{"a response format without a schema", func(c *route.Config) { c.Defaults.ResponseFormat = &route.ResponseFormat{Name: "ticket"} }, "routes[0].defaults.response_format.json_schema: required"},
		{"a schema name with a dot", func(c *route.Config) {
			c.Defaults.ResponseFormat = &route.ResponseFormat{JSONSchema: map[string]any{"type": "object"}, Name: "a.b"}
		}, `routes[0].defaults.response_format.name: "a.b" must be up to 64 letters`},
		{"on_invalid", func(c *route.Config) {
			c.Defaults.ResponseFormat = &route.ResponseFormat{JSONSchema: map[string]any{"type": "object"}, OnInvalid: "ignore"}
		}, `routes[0].defaults.response_format.on_invalid: "ignore" is not fail or return_text`},
		{"a partial object interval over a minute", func(c *route.Config) {
			c.Defaults.ResponseFormat = &route.ResponseFormat{JSONSchema: map[string]any{"type": "object"}, PartialObjectInterval: 2 * time.Minute}
		}, "routes[0].defaults.response_format.partial_object_interval: 2m0s is not within 0..1m"},
		{"a negative timeout", func(c *route.Config) { c.Timeout = -1 }, "routes[0].timeout: must not be negative"},
		{"hedging", func(c *route.Config) {
			c.Defaults.Hedging = &route.HedgingDefaults{HedgeAfter: time.Second, MaxHedges: 2, Target: "next"}
		}, ""},
		{"adaptive hedging without a delay", func(c *route.Config) { c.Defaults.Hedging = &route.HedgingDefaults{Adaptive: true} }, ""},
		{"hedging without a delay", func(c *route.Config) { c.Defaults.Hedging = &route.HedgingDefaults{MaxHedges: 1} },
			"routes[0].defaults.hedging.hedge_after: required unless adaptive is true"},
		{"three hedges", func(c *route.Config) {
			c.Defaults.Hedging = &route.HedgingDefaults{HedgeAfter: time.Second, MaxHedges: 3}
		},
			"routes[0].defaults.hedging.max_hedges: 3 is not 1 or 2"},
		{"a hedge target", func(c *route.Config) {
			c.Defaults.Hedging = &route.HedgingDefaults{HedgeAfter: time.Second, Target: "other"}
		},
			`routes[0].defaults.hedging.target: "other" is not same or next`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(&c)
			ps := route.Check([]route.Config{c}, []string{"mock", "openai"})
			switch {
			case tt.want == "" && len(ps) > 0:
				t.Fatalf("problems %v, want none", ps)
			case tt.want == "":
			case len(ps) != 1 || !strings.HasPrefix(ps[0].Path+": "+ps[0].Message, tt.want):
				t.Fatalf("problems %v, want exactly %q", ps, tt.want)
			}
		})
	}
	t.Run("a name twice", func(t *testing.T) {
		ps := route.Check([]route.Config{valid(), valid()}, []string{"mock", "openai"})
		if len(ps) != 1 || ps[0].Path != "routes[1].name" || ps[0].Message != `"smart" is listed twice (also routes[0])` {
			t.Fatalf("problems %v", ps)
		}
	})
}
