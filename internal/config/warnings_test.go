package config

import (
	"strings"
	"testing"
)

// warnYAML is a config in which every key's pattern, tool pattern and cost
// cap does something: no warnings. Each case of TestWarnings changes one
// line of it.
const warnYAML = `
providers:
  - {name: openai, kind: openai, api_key_env: OPENAI_API_KEY, models: [gpt-4o, gpt-4o-mini]}
  - {name: anthropic, kind: anthropic, api_key_env: ANTHROPIC_API_KEY}
routes:
  - name: smart
    targets: [{model: openai/gpt-4o}]
tools:
  mcp_servers:
    - {name: everything, url: "http://127.0.0.1:3001/mcp", allow: ["*"]}
pricing:
  models:
    openai/gpt-4o: {input: 2.5, output: 10}
teams:
  - name: research
    budgets: [{window: month, max_cost_usd: 100}]
auth:
  keys:
    - name: app
      sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
      scopes: [generate]
      models: ["openai/gpt-4o*", "anthropic/*"]
      tools: ["everything/*"]
      team: research
      budgets: [{window: day, max_cost_usd: 5}]
    - name: router
      sha256: 60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752
      scopes: [generate]
      models: [smart]
      budgets: [{window: day, max_cost_usd: 5}]
`

func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           []string // each warning, as check-config prints it
	}{
		{name: "a clean config"},
		{name: "a key's pattern that is a typo of a provider",
			from: `models: ["openai/gpt-4o*", "anthropic/*"]`, to: `models: ["opnai/*"]`,
			want: []string{`config:22: auth.keys[0].models: no pattern of key "app" matches a configured provider's model or a route: every call of the key is refused MODEL_NOT_ALLOWED; did you mean openai/*?`}},
		{name: "one dead pattern of several",
			from: `models: ["openai/gpt-4o*", "anthropic/*"]`, to: `models: ["openai/gpt-4o*", "antropic/*", "openai/o3"]`,
			want: []string{
				`config:22: auth.keys[0].models[1]: "antropic/*" matches no configured provider's model and no route, so it allows nothing; did you mean anthropic/*?`,
				`config:22: auth.keys[0].models[2]: "openai/o3" matches no configured provider's model and no route, so it allows nothing`,
			}},
		{name: "a route's name that is not configured",
			from: "models: [smart]", to: "models: [smrt]",
			want: []string{
				`config:29: auth.keys[1].models: no pattern of key "router" matches a configured provider's model or a route: every call of the key is refused MODEL_NOT_ALLOWED`,
			}},
		{name: "tools without MCP servers",
			from: `    - {name: everything, url: "http://127.0.0.1:3001/mcp", allow: ["*"]}`, to: "    []",
			want: []string{`config:23: auth.keys[0].tools: no MCP server is configured (tools.mcp_servers): key "app" may offer no server tools`}},
		{name: "a tool pattern of another server",
			from: `tools: ["everything/*"]`, to: `tools: ["everything/*", "evrything/echo", "*/echo"]`,
			want: []string{`config:23: auth.keys[0].tools[1]: "evrything/echo" matches no tool of a configured MCP server (everything), so it allows nothing; did you mean everything/echo?`}},
		{name: "tools on a key that cannot generate",
			from: "scopes: [generate]\n      models: [\"openai", to: "scopes: [embed]\n      models: [\"openai",
			want: []string{`config:23: auth.keys[0].tools: key "app" has no generate scope, and only Generate offers server tools: its tools allow nothing`}},
		{name: "a cost cap on a key of unpriced models",
			from: `models: ["openai/gpt-4o*", "anthropic/*"]`, to: `models: ["openai/gpt-4o-mini", "anthropic/*"]`,
			want: []string{`config:25: auth.keys[0].budgets[0].max_cost_usd: pricing prices none of the models key "app" may use: calls to unpriced models cost nothing, so this cap never stops one (max_tokens would)`}},
		{name: "cost caps without prices",
			from: "pricing:\n  models:\n    openai/gpt-4o: {input: 2.5, output: 10}\n", to: "",
			want: []string{
				`config:13: teams[0].budgets[0].max_cost_usd: pricing prices no model: calls to unpriced models cost nothing, so team "research"'s cap never stops one (max_tokens would)`,
				`config:22: auth.keys[0].budgets[0].max_cost_usd: pricing prices no model: calls to unpriced models cost nothing, so this cap never stops one (max_tokens would)`,
				`config:27: auth.keys[1].budgets[0].max_cost_usd: pricing prices no model: calls to unpriced models cost nothing, so this cap never stops one (max_tokens would)`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := strings.Replace(warnYAML, tc.from, tc.to, 1)
			if tc.from != "" && file == warnYAML {
				t.Fatalf("the config does not hold %q", tc.from)
			}
			cfg, err := Parse([]byte(file))
			if err != nil {
				t.Fatalf("a config with warnings is valid: %v", err)
			}
			var got []string
			for _, w := range cfg.Warnings() {
				got = append(got, w.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestDefaultConfigHasNoWarnings: the embedded default, and the file that
// `llmrelay serve` starts with in the quickstart, warn of nothing.
func TestDefaultConfigHasNoWarnings(t *testing.T) {
	cfg, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) > 0 {
		t.Errorf("the default config warns: %v", w)
	}
}
