package metrics

import "github.com/prometheus/client_golang/prometheus"

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
)

// Actions of NameAdminChanges.
const (
	AdminCreateKey = "create_key"
	AdminUpdateKey = "update_key"
	AdminRevokeKey = "revoke_key"
)

// governanceMetrics are the collectors of governance.
type governanceMetrics struct {
	changes  *prometheus.CounterVec
	refusals *prometheus.CounterVec
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
	}
	for _, a := range []string{AdminCreateKey, AdminUpdateKey, AdminRevokeKey} {
		g.changes.WithLabelValues(a)
	}
	reg.MustRegister(g.changes, g.refusals)
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
