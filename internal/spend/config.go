package spend

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llmrelay/llmrelay/internal/setting"
)

// Check reports the governance section's problems.
func (c Config) Check(p setting.Problems) {
	if c.DefaultOutputTokens <= 0 || c.DefaultOutputTokens > 1_000_000 {
		p.Bad("default_output_tokens", "must be between 1 and 1000000 (a reservation's output when a request sets no max_output_tokens)")
	}
	if c.UsageRetentionDays < 1 {
		p.Bad("usage_retention_days", "must be at least 1")
	}
}

// Against is what the teams section is checked against: the other
// sections that name teams or price what budgets cap.
type Against struct {
	// KeyTeams is each configured key's team (auth.keys[i].team), by
	// index; KeyBudgets each key's budgets.
	KeyTeams   []string
	KeyBudgets [][]Budget
	// Currency is pricing.currency: cost budgets are in US dollars.
	Currency string
}

// CheckSection reports the teams' problems (names, budgets), the keys'
// teams that are not configured, and cost budgets in a price table that is
// not in USD. Paths are from the config's root.
func CheckSection(teams []Team, a Against, p setting.Problems) {
	names := map[string]int{}
	cost := false
	for i, t := range teams {
		switch j, dup := names[t.Name]; {
		case !NamePattern.MatchString(t.Name):
			p.Bad(fmt.Sprintf("teams[%d].name", i), "%q must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", starting with a letter or digit", t.Name)
		case dup:
			p.Bad(fmt.Sprintf("teams[%d].name", i), "%q is already the name of teams[%d]", t.Name, j)
		default:
			names[t.Name] = i
		}
		checkBudgets(fmt.Sprintf("teams[%d].", i), t.Budgets, p)
		cost = cost || hasCost(t.Budgets)
	}
	for i, team := range a.KeyTeams {
		if _, ok := names[team]; team != "" && !ok {
			p.Bad(fmt.Sprintf("auth.keys[%d].team", i), "%q is not one of the teams (teams: [{name: %s, budgets: [...]}])", team, team)
		}
	}
	for _, b := range a.KeyBudgets {
		cost = cost || hasCost(b)
	}
	if cost && !strings.EqualFold(a.Currency, "USD") {
		p.Bad("pricing.currency", "is %q, but budgets cap max_cost_usd: the prices must be in USD", a.Currency)
	}
}

func checkBudgets(prefix string, budgets []Budget, p setting.Problems) {
	var be *BudgetError
	if err := CheckBudgets(budgets); errors.As(err, &be) {
		p.Bad(fmt.Sprintf("%sbudgets[%d].%s", prefix, be.Index, be.Field), "%s", be.Problem)
	}
}

func hasCost(budgets []Budget) bool {
	for _, b := range budgets {
		if b.MaxCostUSD > 0 {
			return true
		}
	}
	return false
}

// WarnTeams reports the teams' cost caps when the price table prices no
// model (priced false): every call then costs nothing, so they never stop
// one. Only then: a team's keys may come from the admin API, whose models
// the config does not know. Paths are from the config's root.
func WarnTeams(teams []Team, priced bool, w setting.Problems) {
	if priced {
		return
	}
	for i, t := range teams {
		for j, b := range t.Budgets {
			if b.MaxCostUSD > 0 {
				w.Bad(fmt.Sprintf("teams[%d].budgets[%d].max_cost_usd", i, j),
					"pricing prices no model: calls to unpriced models cost nothing, so team %q's cap never stops one (max_tokens would)", t.Name)
			}
		}
	}
}
