// Package metrics owns llmrelay's Prometheus metrics: every metric name is
// defined here, once, and documented in docs/observability.md (Metrics).
//
// A Metrics value is created once per server on its own registry (tests make
// as many servers as they like) and is safe for concurrent use. A nil
// *Metrics is valid and records nothing.
package metrics

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Metric names. Keep docs/observability.md's table in step with this list.
const (
	// NameRetries counts retries (WillRetry events) by provider and reason.
	NameRetries = "llmrelay_retries_total"
	// NameAttempts observes how many attempts each Generate call took.
	NameAttempts = "llmrelay_attempts_per_call"
	// NameTimeToFirstDelta observes the time from the call's start to its first delta.
	NameTimeToFirstDelta = "llmrelay_time_to_first_delta_seconds"
	// NameCalls counts finished Generate calls by provider, gRPC code and interface.
	NameCalls = "llmrelay_generate_calls_total"
	// NameProviderErrors counts failed attempts by provider and error class.
	NameProviderErrors = "llmrelay_provider_errors_total"
	// NameValidationRetries counts structured-output re-asks by provider.
	NameValidationRetries = "llmrelay_validation_retries_total"
	// NameRateLimited counts calls refused by llmrelay's own limits, by limit
	// ("rate", "concurrency", "provider_queue").
	NameRateLimited = "llmrelay_rate_limit_rejections_total"
	// NameRetryBudgetExhausted counts retries the retry budget denied, by provider.
	NameRetryBudgetExhausted = "llmrelay_retry_budget_exhausted_total"
	// NameFallbacks counts calls moved from one target to the next, by
	// route ("" for a request's fallback_models behind a provider's model)
	// and the targets from and to.
	NameFallbacks = "llmrelay_fallbacks_total"
	// NameHedges counts hedges (attempts started beside a slower attempt
	// of the same call) by provider and result: "won" (its delta came
	// first), "lost" (cancelled: another attempt's came first, or the call
	// ended), "failed" (it failed before producing a delta), "refused"
	// (the retry budget did not allow it: it never started).
	NameHedges = "llmrelay_hedges_total"
	// NameEjections counts route targets ejected by outlier detection, by target.
	NameEjections = "llmrelay_target_ejections_total"
	// NameEjected is 1 for a route target that is ejected now, else 0, by target.
	NameEjected = "llmrelay_target_ejected"
	// NameStateStoreUp is 1 while the shared state store (Redis) answers,
	// 0 while it does not; only a redis store reports it.
	NameStateStoreUp = "llmrelay_state_store_up"
	// NameStateStoreErrors counts failed operations on the shared state
	// store, by operation ("admit", "acquire", "count", "release", "renew",
	// "ping", "retry_budget", "target_health"; the budgets' "reserve",
	// "balances", "settle", "settle_dropped"; the stored keys'
	// "create_key", "update_key", "key_by_hash", "key_by_name",
	// "list_keys", "usage"; the event logs of resumable calls:
	// "create_log", "append_log", "read_log", "keep_log", "delete_log",
	// "renew_log"), each documented in docs/observability.md.
	NameStateStoreErrors = "llmrelay_state_store_errors_total"
	// NameStateStoreFallbacks counts decisions made without the shared
	// state store while it was unreachable, by decision: "local" (fail_open:
	// decided on this replica's own limits) or "refused" (fail_closed).
	NameStateStoreFallbacks = "llmrelay_state_store_fallbacks_total"

	// The GenAI semantic conventions' metrics, in Prometheus form (dots
	// become underscores, the unit a suffix), by provider, model, route,
	// API key name and team, interface and gen_ai.operation.name (see
	// CallLabels):
	//
	// NameTimeToFirstToken (gen_ai.server.time_to_first_token) observes
	// the time from a Generate call's start to its first delta.
	NameTimeToFirstToken = "gen_ai_server_time_to_first_token_seconds"
	// NameRequestDuration (gen_ai.server.request.duration) observes each
	// Generate call's duration, with error_type (the ErrorInfo reason of a
	// failed call, "" for a successful one).
	NameRequestDuration = "gen_ai_server_request_duration_seconds"
	// NameTokenUsage (gen_ai.client.token.usage) observes the input and
	// output tokens of each attempt (of a Generate or an Embed call) that
	// reported usage, by token_type.
	NameTokenUsage = "gen_ai_client_token_usage"

	// NameTokens counts tokens by kind (type: input, output and the kinds
	// that are part of them, usage.Kinds), provider, model, route, key and
	// the key's team:
	// who is spending what.
	NameTokens = "llmrelay_tokens_total"
	// NameCost counts what the tokens cost at the price table's prices
	// (pricing), by provider, model, route, key and team; only priced
	// models.
	NameCost = "llmrelay_cost_total"
	// NameEstimatedCost counts the cost of the tokens budgets and usage
	// records counted by estimate (NameEstimatedTokens), by the call
	// labels as NameCost; only priced models. NameCost and it together
	// are what a key or team was charged.
	NameEstimatedCost = "llmrelay_estimated_cost_total"

	// NameConfigReloads counts config reloads by result: "success" (the
	// new config serves new calls), "failure" (refused; the old one
	// stays).
	NameConfigReloads = "llmrelay_config_reloads_total"
	// NameConfigLastReloadSuccessful is 1 when the last reload succeeded
	// (or none was tried), 0 when it failed.
	NameConfigLastReloadSuccessful = "llmrelay_config_last_reload_successful"
	// NameConfigLastReloadTime is when the config in use was loaded, in
	// seconds since the Unix epoch.
	NameConfigLastReloadTime = "llmrelay_config_last_reload_success_timestamp_seconds"
)

// Metrics holds llmrelay's collectors and the go-grpc-middleware server
// metrics, all registered on one registry.
type Metrics struct {
	registry *prometheus.Registry

	// Server is the per-RPC metrics (grpc_server_*, as go-grpc-middleware's
	// Prometheus provider names them), with the handling-time histogram;
	// its interceptors go into the chain (grpcserver.go).
	Server *ServerMetrics

	retries           *prometheus.CounterVec
	attempts          *prometheus.HistogramVec
	timeToFirstDelta  *prometheus.HistogramVec
	calls             *prometheus.CounterVec
	providerErrors    *prometheus.CounterVec
	validationRetries *prometheus.CounterVec
	rateLimited       *prometheus.CounterVec
	budgetExhausted   *prometheus.CounterVec
	fallbacks         *prometheus.CounterVec
	hedges            *prometheus.CounterVec
	ejections         *prometheus.CounterVec
	stateUp           prometheus.Gauge
	stateUpOnce       sync.Once
	stateErrors       *prometheus.CounterVec
	stateFallbacks    *prometheus.CounterVec

	// The GenAI metrics and usage per key; calls holds their series per
	// label set (genai.go).
	timeToFirstToken *prometheus.HistogramVec
	requestDuration  *prometheus.HistogramVec
	tokenUsage       *prometheus.HistogramVec
	tokens           *prometheus.CounterVec
	cost             *prometheus.CounterVec
	estimatedCost    *prometheus.CounterVec
	series           seriesCache

	reloads           *prometheus.CounterVec
	lastReloadOK      prometheus.Gauge
	lastReloadSuccess prometheus.Gauge

	resume     resumeMetrics     // resumable calls (resume.go)
	http       httpMetrics       // the HTTP doors (http.go)
	tools      toolMetrics       // server tools (tools.go)
	governance governanceMetrics // the admin API and budgets (governance.go)
}

// New creates the metrics on a fresh registry, with Go runtime and process
// collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		registry: reg,
		Server:   newServerMetrics([]float64{.001, .005, .01, .05, .1, .5, 1, 2.5, 5, 10, 30, 60, 120}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameRetries,
			Help: "Retries of Generate attempts, by provider and reason.",
		}, []string{"provider", "reason"}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameAttempts,
			Help:    "Attempts each Generate call took, by provider.",
			Buckets: []float64{1, 2, 3, 4, 5, 6, 8, 10},
		}, []string{"provider"}),
		timeToFirstDelta: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameTimeToFirstDelta,
			Help:    "Time from the start of a Generate call to its first delta, by provider.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}, []string{"provider"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameCalls,
			Help: "Finished Generate calls, by provider, gRPC code and interface (grpc, openai, anthropic).",
		}, []string{"provider", "code", "interface"}),
		providerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameProviderErrors,
			Help: "Failed attempts, by provider and error class.",
		}, []string{"provider", "class"}),
		validationRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameValidationRetries,
			Help: "Structured-output re-asks after an invalid reply, by provider.",
		}, []string{"provider"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameRateLimited,
			Help: "Calls refused by llmrelay's own limits, by limit.",
		}, []string{"limit"}),
		budgetExhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameRetryBudgetExhausted,
			Help: "Retries denied by the per-provider retry budget, by provider.",
		}, []string{"provider"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameFallbacks,
			Help: "Calls moved from a failing target to the next, by route and the targets from and to.",
		}, []string{"route", "from", "to"}),
		hedges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameHedges,
			Help: "Hedged attempts, by provider and result: won, lost, failed, or refused by the retry budget.",
		}, []string{"provider", "result"}),
		ejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameEjections,
			Help: "Route targets ejected by outlier detection after failing in a row, by target.",
		}, []string{"target"}),
		stateUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameStateStoreUp,
			Help: "1 while the shared state store (Redis) answers, 0 while it does not.",
		}),
		stateErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameStateStoreErrors,
			Help: "Failed operations on the shared state store, by operation.",
		}, []string{"op"}),
		stateFallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameStateStoreFallbacks,
			Help: "Decisions made without the unreachable shared state store: local (fail_open) or refused (fail_closed).",
		}, []string{"decision"}),
		timeToFirstToken: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: NameTimeToFirstToken,
			Help: "Time from the start of a Generate call to its first delta (gen_ai.server.time_to_first_token).",
			// The conventions' advice.
			Buckets: []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0},
		}, callLabelNames),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameRequestDuration,
			Help:    "Duration of Generate calls, by the ErrorInfo reason of failed ones (gen_ai.server.request.duration).",
			Buckets: []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84, 327.68, 655.36},
		}, append(callLabelNames[:len(callLabelNames):len(callLabelNames)], "error_type")),
		tokenUsage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameTokenUsage,
			Help:    "Input and output tokens of each attempt that reported usage, by gen_ai.operation.name (chat, embeddings) (gen_ai.client.token.usage).",
			Buckets: []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864},
		}, append(callLabelNames[:len(callLabelNames):len(callLabelNames)], "token_type")),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameTokens,
			Help: "Tokens used by Generate and Embed calls, by kind of token, provider, model, route, API key name, team, interface and gen_ai.operation.name.",
		}, append(callLabelNames[:len(callLabelNames):len(callLabelNames)], "type")),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameCost,
			Help: "Cost of the tokens of Generate and Embed calls at the configured prices, by provider, model, route, API key name, team, interface and gen_ai.operation.name.",
		}, callLabelNames),
		estimatedCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameEstimatedCost,
			Help: "Cost of the tokens budgets counted by estimate, for attempts whose provider did not report their whole usage, by provider, model, route, API key name, team, interface and gen_ai.operation.name.",
		}, callLabelNames),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameConfigReloads,
			Help: "Config reloads, by result: success or failure (refused, the old config stays).",
		}, []string{"result"}),
		lastReloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameConfigLastReloadSuccessful,
			Help: "1 when the last config reload succeeded (or none was tried), 0 when it failed.",
		}),
		lastReloadSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameConfigLastReloadTime,
			Help: "When the config in use was loaded, in seconds since the Unix epoch.",
		}),
	}
	m.series.init()
	m.resume = newResumeMetrics(reg)
	m.http = newHTTPMetrics(reg)
	m.tools = newToolMetrics(reg)
	m.governance = newGovernanceMetrics(reg)
	m.lastReloadOK.Set(1)
	m.lastReloadSuccess.SetToCurrentTime()
	for _, r := range []string{ReloadSuccess, ReloadFailure} {
		m.reloads.WithLabelValues(r)
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Server, m.retries, m.attempts, m.timeToFirstDelta, m.calls,
		m.providerErrors, m.validationRetries, m.rateLimited, m.budgetExhausted,
		m.fallbacks, m.hedges, m.ejections,
		m.stateErrors, m.stateFallbacks,
		m.timeToFirstToken, m.requestDuration, m.tokenUsage, m.tokens, m.cost, m.estimatedCost,
		m.reloads, m.lastReloadOK, m.lastReloadSuccess,
	)
	return m
}

// Results of a config reload (NameConfigReloads).
const (
	ReloadSuccess = "success"
	ReloadFailure = "failure"
)

// ConfigReloaded records a config reload's result.
func (m *Metrics) ConfigReloaded(ok bool) {
	if m == nil {
		return
	}
	if !ok {
		m.reloads.WithLabelValues(ReloadFailure).Inc()
		m.lastReloadOK.Set(0)
		return
	}
	m.reloads.WithLabelValues(ReloadSuccess).Inc()
	m.lastReloadOK.Set(1)
	m.lastReloadSuccess.SetToCurrentTime()
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Text returns the registry in the Prometheus text format, as the
// Handler serves it, for tests.
func (m *Metrics) Text() string {
	mfs, err := m.registry.Gather()
	var b strings.Builder
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			fmt.Fprintf(&b, "# error: %v\n", err)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "# error: %v\n", err)
	}
	return b.String()
}

// Registry returns the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Retry records one retry.
func (m *Metrics) Retry(provider, reason string) {
	if m != nil {
		m.retries.WithLabelValues(provider, reason).Inc()
	}
}

// ProviderError records one failed attempt.
func (m *Metrics) ProviderError(provider, class string) {
	if m != nil {
		m.providerErrors.WithLabelValues(provider, class).Inc()
	}
}

// ValidationRetry records one structured-output re-ask.
func (m *Metrics) ValidationRetry(provider string) {
	if m != nil {
		m.validationRetries.WithLabelValues(provider).Inc()
	}
}

// RateLimited records a call refused by one of llmrelay's own limits.
func (m *Metrics) RateLimited(limit string) {
	if m != nil {
		m.rateLimited.WithLabelValues(limit).Inc()
	}
}

// RetryBudgetExhausted records a retry denied by the retry budget.
func (m *Metrics) RetryBudgetExhausted(provider string) {
	if m != nil {
		m.budgetExhausted.WithLabelValues(provider).Inc()
	}
}

// Fallback records a call moved from one target to the next.
func (m *Metrics) Fallback(route, from, to string) {
	if m != nil {
		m.fallbacks.WithLabelValues(route, from, to).Inc()
	}
}

// Hedge results (NameHedges).
const (
	HedgeWon     = "won"
	HedgeLost    = "lost"
	HedgeFailed  = "failed"
	HedgeRefused = "refused"
)

// Hedge records one hedge to provider and its result.
func (m *Metrics) Hedge(provider, result string) {
	if m != nil {
		m.hedges.WithLabelValues(provider, result).Inc()
	}
}

// Ejection records a route target ejected by outlier detection.
func (m *Metrics) Ejection(target string) {
	if m != nil {
		m.ejections.WithLabelValues(target).Inc()
	}
}

// TargetHealth registers the gauge of route targets' health: ejected
// returns, at each scrape, whether each target is ejected, by target.
func (m *Metrics) TargetHealth(ejected func() map[string]bool) {
	if m != nil {
		m.registry.MustRegister(&ejectedCollector{ejected: ejected})
	}
}

var ejectedDesc = prometheus.NewDesc(NameEjected,
	"1 while a route target is ejected by outlier detection, else 0, by target.", []string{"target"}, nil)

// ejectedCollector reports NameEjected from the targets' health at scrape
// time: an ejection ends by the clock, not by an event to count.
type ejectedCollector struct{ ejected func() map[string]bool }

func (c *ejectedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- ejectedDesc }

func (c *ejectedCollector) Collect(ch chan<- prometheus.Metric) {
	for target, ejected := range c.ejected() {
		v := 0.0
		if ejected {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(ejectedDesc, prometheus.GaugeValue, v, target)
	}
}

// StateStoreUp records whether the shared state store answers. The gauge is
// registered on the first call, so only servers with a redis store export
// it.
func (m *Metrics) StateStoreUp(up bool) {
	if m == nil {
		return
	}
	m.stateUpOnce.Do(func() { m.registry.MustRegister(m.stateUp) })
	v := 0.0
	if up {
		v = 1
	}
	m.stateUp.Set(v)
}

// StateStoreError records a failed operation on the shared state store.
func (m *Metrics) StateStoreError(op string) {
	if m != nil {
		m.stateErrors.WithLabelValues(op).Inc()
	}
}

// StateStoreFallback records a decision made without the shared state
// store: "local" or "refused".
func (m *Metrics) StateStoreFallback(decision string) {
	if m != nil {
		m.stateFallbacks.WithLabelValues(decision).Inc()
	}
}
