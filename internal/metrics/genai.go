package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// callLabelNames are the labels every call metric shares (see
// CallLabels). gen_ai_operation_name is the GenAI conventions'
// gen_ai.operation.name, which they require on their metrics.
var callLabelNames = []string{"provider", "model", "route", "key", "team", "interface", "gen_ai_operation_name"}

// MaxOpenModels bounds the model label of a provider that lists no models
// (any model name resolves there, so clients choose it): its first
// MaxOpenModels model names keep their label, later ones are counted as
// OtherModel.
const MaxOpenModels = 100

// OtherModel is the model label of the models beyond MaxOpenModels: in
// parentheses, as OtherTool, so that a model named "other" keeps its own
// series.
const OtherModel = "(other)"

// CallLabels are the labels of one call's metrics (a Generate's, or an
// Embed's tokens and cost). Their cardinality is bounded by the config:
// providers, their models, routes and API keys are configured
// (OpenModels bounds the rest), and Operation is one of a fixed few.
type CallLabels struct {
	// Provider is the configured name of the provider of the call's last
	// attempt; "" before the call had one.
	Provider string
	// Model is the model at that provider.
	Model string
	// OpenModels says the provider lists no models, so that Model is the
	// client's choice (bounded by MaxOpenModels).
	OpenModels bool
	// Route is the route the request's model named; "" for
	// "<provider>/<model>".
	Route string
	// Key is the name of the caller's API key; "" on a server without keys.
	Key string
	// Team is the key's team; "" for a key of no team.
	Team string
	// Interface is the API the call came in by: "grpc", or an HTTP door's
	// ("openai", "openai-responses", "anthropic").
	Interface string
	// Operation is the call's gen_ai.operation.name, as the GenAI
	// conventions name it: "chat" for a Generate call (whatever door it
	// came by), "embeddings" for an Embed. The engine sets it, from its
	// constants (telemetry.OperationChat, telemetry.OperationEmbeddings),
	// never from a request.
	Operation string
}

// CallResult is how a Generate call ended.
type CallResult struct {
	// Code is the call's gRPC code, by name; ErrorType its ErrorInfo
	// reason when it failed.
	Code      string
	ErrorType string
	Attempts  int
	Duration  time.Duration
}

// FirstToken records the time from a Generate call's start to its first
// delta.
func (m *Metrics) FirstToken(l CallLabels, d time.Duration) {
	if m == nil {
		return
	}
	s := m.series.get(m, l)
	s.timeToFirstToken.Observe(d.Seconds())
	s.timeToFirstDelta.Observe(d.Seconds())
}

// GenerateDone records a finished Generate call: its count by code, its
// attempts and its duration. l are the labels of its last attempt.
func (m *Metrics) GenerateDone(l CallLabels, r CallResult) {
	if m == nil {
		return
	}
	s := m.series.get(m, l)
	e := s.end(m, l, r.Code, r.ErrorType)
	e.calls.Inc()
	e.duration.Observe(r.Duration.Seconds())
	if r.Attempts > 0 {
		s.attempts.Observe(float64(r.Attempts))
	}
}

// AttemptUsage records the tokens one attempt of a Generate call reported
// (u) under its labels l, and their cost when priced. An attempt that
// reported none records nothing.
func (m *Metrics) AttemptUsage(l CallLabels, u provider.Usage, cost float64, priced bool) {
	m.attemptUsage(l, u, cost, priced, true)
}

// EmbedUsage records the tokens of one Embed attempt, as AttemptUsage
// does, but for the output: an embedding has none, so the token usage
// histogram observes its input alone (a 0 observed as output tokens for
// every Embed would pull the output's distribution towards 0).
func (m *Metrics) EmbedUsage(l CallLabels, u provider.Usage, cost float64, priced bool) {
	m.attemptUsage(l, u, cost, priced, false)
}

// attemptUsage records u under l; output says the attempt generated
// output, so that its output tokens are observed, 0 included.
func (m *Metrics) attemptUsage(l CallLabels, u provider.Usage, cost float64, priced, output bool) {
	if m == nil {
		return
	}
	var s *callSeries
	for i, k := range usage.Kinds {
		if n := k.Tokens(u); n > 0 {
			if s == nil {
				s = m.series.get(m, l)
			}
			s.tokens[i].Add(float64(n))
		}
	}
	if s == nil {
		return
	}
	for i, k := range usage.Kinds {
		if s.usage[i] != nil && (output || k.Name != usage.Output) {
			s.usage[i].Observe(float64(k.Tokens(u)))
		}
	}
	if priced {
		s.cost.Add(cost)
	}
}

// seriesCache holds the series of each label set, so that recording a
// call looks its series up once, without allocating, instead of once per
// metric.
type seriesCache struct {
	mu       sync.RWMutex
	byLabels map[seriesKey]*callSeries
	// open bounds the model names of each provider that lists none.
	open *labelBound
}

type seriesKey struct{ provider, model, route, key, team, iface, op string }

type callSeries struct {
	timeToFirstToken, timeToFirstDelta prometheus.Observer
	attempts                           prometheus.Observer
	// usage (wholes only, nil for parts) and tokens, by usage.Kinds index.
	usage  []prometheus.Observer
	tokens []prometheus.Counter
	cost   prometheus.Counter
	// estimatedCost is made with cost, so that the two have the same
	// series and a query adds them label set by label set.
	estimatedCost prometheus.Counter

	mu   sync.RWMutex
	ends map[endKey]*endSeries
}

type endKey struct{ code, errorType string }

type endSeries struct {
	calls    prometheus.Counter
	duration prometheus.Observer
}

func (c *seriesCache) init() {
	c.byLabels = make(map[seriesKey]*callSeries)
	c.open = newLabelBound(MaxOpenModels, OtherModel)
}

// get returns l's series, made on first use.
func (c *seriesCache) get(m *Metrics, l CallLabels) *callSeries {
	if l.OpenModels {
		l.Model = c.open.bound(l.Provider, l.Model)
	}
	k := seriesKey{l.Provider, l.Model, l.Route, l.Key, l.Team, l.Interface, l.Operation}
	c.mu.RLock()
	s := c.byLabels[k]
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s = c.byLabels[k]; s != nil {
		return s
	}
	lv := []string{k.provider, k.model, k.route, k.key, k.team, k.iface, k.op}
	s = &callSeries{
		timeToFirstToken: m.timeToFirstToken.WithLabelValues(lv...),
		timeToFirstDelta: m.timeToFirstDelta.WithLabelValues(k.provider),
		attempts:         m.attempts.WithLabelValues(k.provider),
		usage:            make([]prometheus.Observer, len(usage.Kinds)),
		tokens:           make([]prometheus.Counter, len(usage.Kinds)),
		cost:             m.cost.WithLabelValues(lv...),
		estimatedCost:    m.estimatedCost.WithLabelValues(lv...),
		ends:             make(map[endKey]*endSeries),
	}
	for i, kind := range usage.Kinds {
		s.tokens[i] = m.tokens.WithLabelValues(append(lv, kind.Name)...)
		if kind.PartOf == "" {
			s.usage[i] = m.tokenUsage.WithLabelValues(append(lv, kind.Name)...)
		}
	}
	c.byLabels[k] = s
	return s
}

// end returns the series of calls with l ending with code and errorType.
func (s *callSeries) end(m *Metrics, l CallLabels, code, errorType string) *endSeries {
	k := endKey{code, errorType}
	s.mu.RLock()
	e := s.ends[k]
	s.mu.RUnlock()
	if e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e = s.ends[k]; e != nil {
		return e
	}
	if l.OpenModels {
		l.Model = m.series.open.bound(l.Provider, l.Model)
	}
	e = &endSeries{
		calls:    m.calls.WithLabelValues(l.Provider, code, l.Interface),
		duration: m.requestDuration.WithLabelValues(l.Provider, l.Model, l.Route, l.Key, l.Team, l.Interface, l.Operation, errorType),
	}
	s.ends[k] = e
	return e
}
