package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// issueRoutes is the routes section as the issue writes it, with two
// providers to route to.
const issueRoutes = `
providers:
  - {name: openai, kind: openai}
  - {name: anthropic, kind: anthropic}
  - {name: openai-eu, kind: openai}
  - {name: openai-us, kind: openai}
routes:
  - name: smart
    targets:                       # tried in this order for fallback
      - model: openai/gpt-4.1
      - model: anthropic/claude-sonnet-4-5
    defaults:                      # applied when the request leaves them unset
      retry: {max_attempts: 2}
      generation: {max_output_tokens: 1024}
      system: "You are the support assistant of Example Corp."
      response_format: {json_schema: {type: object, properties: {title: {type: string}}, required: [title]}, name: ticket}
    timeout: 45s
  - name: fast
    balance: weighted              # one name, several deployments
    targets:
      - {model: openai-eu/gpt-4.1-mini, weight: 3}
      - {model: openai-us/gpt-4.1-mini, weight: 1}
`

func TestRoutesInTheIssuesShape(t *testing.T) {
	cfg, err := Parse([]byte(issueRoutes))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Routes) != 2 {
		t.Fatalf("routes %+v", cfg.Routes)
	}
	smart, fast := cfg.Routes[0], cfg.Routes[1]
	d := smart.Defaults
	if smart.Name != "smart" || len(smart.Targets) != 2 || smart.Targets[1].Model != "anthropic/claude-sonnet-4-5" ||
		d.Retry.MaxAttempts != 2 || *d.Generation.MaxOutputTokens != 1024 || !strings.HasPrefix(d.System, "You are") ||
		d.ResponseFormat.Name != "ticket" || d.ResponseFormat.JSONSchema["type"] != "object" || smart.Timeout != 45*time.Second {
		t.Errorf("smart = %+v", smart)
	}
	if fast.Balance != "weighted" || fast.Targets[0].Weight != 3 || fast.Targets[1].Weight != 1 {
		t.Errorf("fast = %+v", fast)
	}
	// The effective config prints and reads back.
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(out); err != nil {
		t.Fatalf("the printed config does not read back: %v\n%s", err, out)
	}
}

func TestRouteProblemsNameTheSettingAndLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"an unknown provider", `
routes:
  - name: smart
    targets:
      - model: mock/echo
      - model: openai/gpt-4.1
`, `config:6: routes[0].targets[1].model: "openai/gpt-4.1" names the provider "openai", which is not configured; providers: mock`},
		{"a default schema that does not compile", `
routes:
  - name: smart
    targets: [{model: mock/echo}]
    defaults:
      response_format:
        json_schema: {type: objekt}
`, `config:7: routes[0].defaults.response_format.json_schema: `},
		{"a default schema no reply could be checked against", `
routes:
  - name: smart
    targets: [{model: mock/echo}]
    defaults:
      response_format:
        json_schema: {$ref: "#/$defs/a", $defs: {a: {anyOf: [{$ref: "#/$defs/b"}, {$ref: "#/$defs/b"}]}, b: {anyOf: [{$ref: "#/$defs/c"}, {$ref: "#/$defs/c"}]}, c: {anyOf: [{$ref: "#/$defs/d"}, {$ref: "#/$defs/d"}]}, d: {type: string}}}
structured_output: {validation_budget: 10}
`, `config:7: routes[0].defaults.response_format.json_schema: invalid JSON Schema at '/$defs/`},
		{"a misspelt field", `
routes:
  - name: smart
    target: [{model: mock/echo}]
`, `config:4: routes[0].target: unknown field; did you mean targets?`},
		{"a route's hedging delay below the server's floor", `
retry:
  hedging: {min_hedge_after: 100ms}
routes:
  - name: smart
    targets: [{model: mock/echo}]
    defaults:
      hedging: {hedge_after: 50ms}
`, `config:8: routes[0].defaults.hedging.hedge_after: 50ms is shorter than retry.hedging.min_hedge_after (100ms)`},
		{"a server allowing three hedges", `
retry:
  hedging: {max_hedges: 3}
`, `config:3: retry.hedging.max_hedges: 3 is not within 0..2 (0 turns hedging off)`},
		{"outlier detection", `
outlier_detection: {base_ejection_time: 1m, max_ejection_time: 30s}
`, `config:2: outlier_detection.max_ejection_time: 30s is shorter than base_ejection_time (1m)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			var ps Problems
			if !errors.As(err, &ps) || len(ps) != 1 || !strings.HasPrefix(ps[0].Error(), tt.want) {
				t.Fatalf("error %v, want one problem starting %q", err, tt.want)
			}
		})
	}
}
