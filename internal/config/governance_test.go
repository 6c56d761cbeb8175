package config

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/spend"
)

// governanceYAML gives a key a team and budgets in the shape, and
// the team budgets of its own.
const governanceYAML = `
auth:
  keys:
    - name: ci
      sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
      scopes: [generate]
      models: ["*"]
      team: research
      budgets:
        - {window: day, max_cost_usd: 5}
        - {window: month, max_tokens: 2000000}
teams:
  - name: research
    budgets:
      - {window: total, max_cost_usd: 100}
governance:
  default_output_tokens: 1024
`

func TestGovernanceSections(t *testing.T) {
	cfg, err := Parse([]byte(governanceYAML))
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Auth.Keys[0]
	want := []spend.Budget{{Window: spend.Day, MaxCostUSD: 5}, {Window: spend.Month, MaxTokens: 2_000_000}}
	if k.Team != "research" || len(k.Budgets) != 2 || k.Budgets[0] != want[0] || k.Budgets[1] != want[1] {
		t.Fatalf("key decoded as %+v", k)
	}
	if len(cfg.Teams) != 1 || cfg.Teams[0].Budgets[0] != (spend.Budget{Window: spend.Total, MaxCostUSD: 100}) {
		t.Fatalf("teams decoded as %+v", cfg.Teams)
	}
	if cfg.Governance.DefaultOutputTokens != 1024 || cfg.Governance.UsageRetentionDays != 400 {
		t.Fatalf("governance %+v, want the file's output tokens and the default retention", cfg.Governance)
	}
	for name, tc := range map[string]struct{ from, to, want string }{
		"a key's team that is not configured": {"team: research", "team: ops",
			`config:8: auth.keys[0].team: "ops" is not one of the teams`},
		"a key's budget without a cap": {"- {window: day, max_cost_usd: 5}", "- {window: day}",
			"config:4: auth.keys[0].budgets[0].max_cost_usd: or max_tokens is required"},
		"a team's budget of an unknown window": {"- {window: total, max_cost_usd: 100}", "- {window: week, max_cost_usd: 100}",
			`config:15: teams[0].budgets[0].window: is "week"; the windows are day, month and total`},
		"a team's name": {"- name: research", "- name: re search",
			`teams[0].name: "re search" must be 1 to 64 letters`},
		"cost budgets in another currency": {"governance:", "pricing: {currency: EUR}\ngovernance:",
			`pricing.currency: is "EUR", but budgets cap max_cost_usd`},
		"no default output": {"default_output_tokens: 1024", "default_output_tokens: 0",
			"config:17: governance.default_output_tokens: must be between 1 and 1000000"},
	} {
		_, err := Parse([]byte(strings.Replace(governanceYAML, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
}
