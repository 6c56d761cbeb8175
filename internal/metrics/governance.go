package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// The metrics of governance: the admin API and the budgets
// (internal/apikeys, internal/spend).
const (
	// NameAdminChanges counts the changes made through the admin API, by
	// action: "create_key", "update_key", "revoke_key".
	NameAdminChanges = "llmrelay_admin_changes_total"
	// NameBudgetRefusals counts the calls a budget refused
	// (BUDGET_EXHAUSTED), by window ("day", "month", "total") and owner
	// ("key" or "team").
	NameBudgetRefusals = "llmrelay_budget_refusals_total"
	// NameEstimatedTokens counts the tokens budgets and usage records
	// counted by estimate, for attempts whose provider did not report
	// their whole usage (a stream that ended before its usage came), by
	// provider, model and type ("input", "output"); their cost is
	// NameEstimatedCost.
	NameEstimatedTokens = "llmrelay_estimated_tokens_total"
)

// Actions of NameAdminChanges.
const (
	AdminCreateKey = "create_key"
	AdminUpdateKey = "update_key"
	AdminRevokeKey = "revoke_key"
)

// governanceMetrics are the collectors of governance.
type governanceMetrics struct {
	changes   *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	estimated *prometheus.CounterVec
}

func newGovernanceMetrics(reg *prometheus.Registry) governanceMetrics {
	g := governanceMetrics{
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameAdminChanges,
			Help: "Changes made through the admin API, by action.",
		}, []string{"action"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameBudgetRefusals,
			Help: "Calls refused because a budget had no room for them, by window and owner (key or team).",
		}, []string{"window", "owner"}),
		estimated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameEstimatedTokens,
			Help: "Tokens budgets counted by estimate, for attempts whose provider reported no usage, by provider, model and type.",
		}, []string{"provider", "model", "type"}),
	}
	for _, a := range []string{AdminCreateKey, AdminUpdateKey, AdminRevokeKey} {
		g.changes.WithLabelValues(a)
	}
	reg.MustRegister(g.changes, g.refusals, g.estimated)
	return g
}

// AdminChange counts one change made through the admin API.
func (m *Metrics) AdminChange(action string) {
	if m != nil {
		m.governance.changes.WithLabelValues(action).Inc()
	}
}

// BudgetRefused counts one call refused by a budget of window, owned by a
// key or a team.
func (m *Metrics) BudgetRefused(window string, team bool) {
	if m == nil {
		return
	}
	owner := "key"
	if team {
		owner = "team"
	}
	m.governance.refusals.WithLabelValues(window, owner).Inc()
}

// Estimated counts the tokens of u, an estimate settlement counted for an
// attempt whose provider did not report its whole usage, by the provider
// and model of its labels l (the rest are not this metric's), and, when
// priced, their cost by all of l (NameEstimatedCost), beside what
// AttemptUsage counted for the attempt. The model of a provider that
// lists none is bounded as the call metrics' is (MaxOpenModels): clients
// choose it.
func (m *Metrics) Estimated(l CallLabels, u provider.Usage, cost float64, priced bool) {
	if m == nil {
		return
	}
	model := l.Model
	if l.OpenModels {
		model = m.series.open.bound(l.Provider, model)
	}
	if u.InputTokens > 0 {
		m.governance.estimated.WithLabelValues(l.Provider, model, usage.Input).Add(float64(u.InputTokens))
	}
	if u.OutputTokens > 0 {
		m.governance.estimated.WithLabelValues(l.Provider, model, usage.Output).Add(float64(u.OutputTokens))
	}
	if priced {
		m.series.get(m, l).estimatedCost.Add(cost)
	}
}
