// Package service implements the llmrelay.v1.LLMService handlers. Handlers
// are thin: Generate takes the targets its model resolved to (from the call
// record, which the interceptor chain filled), runs the server's hooks
// (internal/hook: the route's defaults among them), has each target's
// provider validate the request, runs the call's attempt plan
// (internal/retry's Plan) and turns each provider event into a
// GenerateEvent, numbered by one emitter; a resumable call's events also
// go to its event log, which Resume replays (internal/resume). Retry and
// fallback decisions live in internal/retry, target order and health in
// internal/route, classification in the provider adapters and status
// mapping in internal/apierr.
package service

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/schema"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	tokenusage "github.com/llmrelay/llmrelay/internal/usage"
)

// Service implements llmrelayv1.LLMServiceServer. It is safe for concurrent use.
type Service struct {
	llmrelayv1.UnimplementedLLMServiceServer

	providers *provider.Set
	routes    *route.Table
	hooks     hook.Chain
	log       *slog.Logger
	metrics   *metrics.Metrics
	limits    retry.Limits
	budget    func(provider string) retry.Throttle
	latencies *retry.Latencies
	timer     retry.Timer
	// schemas compiles and caches structured-output schemas; schemaCfg
	// bounds them and the re-asks.
	schemas   *schema.Cache
	schemaCfg schema.Config
	// defaultOutput and maxOutput are the server's output limit for
	// requests that set none, and its cap on any request's.
	defaultOutput, maxOutput int64
	// heartbeat is the server's heartbeat interval (0: off unless a
	// request asks), minHeartbeat the shortest a request may ask for.
	heartbeat, minHeartbeat time.Duration
	// prices turns tokens into cost (nil: none priced); captureContent
	// records prompts and replies on the attempt spans.
	prices         *tokenusage.Prices
	captureContent bool
	// resume runs the resumable calls and replays their logs.
	resume *resume.Registry
}

// Deps are what a Service needs.
type Deps struct {
	Providers *provider.Set
	// Routes resolves models and keeps the targets' health; nil: no routes.
	Routes *route.Table
	// Hooks run before each call's first attempt and after its success,
	// in order; the server puts the routes' defaults first.
	Hooks   hook.Chain
	Config  *config.Config
	Logger  *slog.Logger
	Metrics *metrics.Metrics // may be nil
	// Timer makes the waits between attempts; nil means real time.
	Timer retry.Timer
	// Budget returns a provider's retry budget, by its configured name
	// (nil: none); a nil func makes this process's own from Config (none
	// when the budget is off). The server passes its own: the state
	// store's, shared by the replicas, when it has them, else this
	// process's, kept across config reloads so that what is in flight
	// goes on counting.
	Budget func(provider string) retry.Throttle
	// Resume runs resumable calls; nil makes one on an in-memory store
	// from Config. The server passes its own, on its state store, which
	// outlives reloads.
	Resume *resume.Registry
	// Latencies are the targets' recent times to first delta, which
	// adaptive hedging delays follow; nil starts an empty record. The
	// server passes its own, kept across reloads.
	Latencies *retry.Latencies
}

// New returns a Service.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	schemaCfg := d.Config.SchemaConfig()
	routes := d.Routes
	if routes == nil {
		routes, _ = route.NewTable(nil, d.Providers, route.Options{}) // no routes: cannot fail
	}
	s := &Service{
		providers: d.Providers, routes: routes, hooks: d.Hooks, log: log, metrics: d.Metrics, timer: d.Timer,
		schemas: schema.NewCache(schemaCfg), schemaCfg: schemaCfg,
		limits:        d.Config.RetryLimits(),
		defaultOutput: d.Config.Limits.DefaultMaxOutputBytes, maxOutput: d.Config.Limits.MaxOutputBytes,
		heartbeat: d.Config.Heartbeat.Interval, minHeartbeat: d.Config.Heartbeat.MinInterval,
		prices: d.Config.Pricing.Prices(), captureContent: d.Config.Tracing.CaptureContent,
	}
	s.budget = d.Budget
	if s.budget == nil {
		if b, on := d.Config.RetryBudget(); on {
			s.budget = retry.NewBudgets(b).Throttle
		}
	}
	s.resume = d.Resume
	if s.resume == nil {
		s.resume = resume.New(d.Config.ResumeConfig(), memory.New(), log, d.Metrics)
	}
	s.latencies = d.Latencies
	if s.latencies == nil {
		s.latencies = retry.NewLatencies()
	}
	return s
}

// ListModels implements llmrelayv1.LLMServiceServer. With an API key, it
// lists only the models and routes the key may use; a route is listed
// with all its targets, each with its health, and a provider's model that
// a route uses with its health.
func (s *Service) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	id, keyed := auth.FromContext(ctx)
	resp := &llmrelayv1.ListModelsResponse{}
	health := s.targetHealth(ctx)
	for _, name := range s.providers.Names() {
		if req.GetProvider() != "" && req.GetProvider() != name {
			continue
		}
		e, _ := s.providers.Get(name)
		for _, m := range e.Models {
			if keyed && !id.AllowsModel(name, m) {
				continue
			}
			resp.Models = append(resp.Models, &llmrelayv1.Model{
				Id: name + "/" + m, Provider: name, ProviderKind: e.Config.Kind, Name: m,
				Kind: llmrelayv1.ModelKind_MODEL_KIND_PROVIDER_MODEL, Health: health[name+"/"+m],
			})
		}
	}
	for _, r := range s.routes.Routes() {
		if req.GetProvider() != "" || keyed && !id.AllowsRoute(r.Name) {
			continue
		}
		m := &llmrelayv1.Model{Id: r.Name, Name: r.Name, Kind: llmrelayv1.ModelKind_MODEL_KIND_ROUTE, Balance: llmrelayv1.RouteBalance_ROUTE_BALANCE_ORDERED}
		if r.Weighted {
			m.Balance = llmrelayv1.RouteBalance_ROUTE_BALANCE_WEIGHTED
		}
		for _, t := range r.Targets {
			m.Targets = append(m.Targets, &llmrelayv1.RouteTarget{
				Model: t.Key, Provider: t.Entry.Config.Name, Name: t.Model, Weight: uint32(t.Weight), Health: health[t.Key],
			})
		}
		resp.Models = append(resp.Models, m)
	}
	sort.Slice(resp.Models, func(i, j int) bool { return resp.Models[i].Id < resp.Models[j].Id })
	return resp, nil
}

// targetHealth returns the health of every route target, by key.
func (s *Service) targetHealth(ctx context.Context) map[string]*llmrelayv1.TargetHealth {
	var keys []string
	for _, r := range s.routes.Routes() {
		for _, t := range r.Targets {
			if !slices.Contains(keys, t.Key) {
				keys = append(keys, t.Key)
			}
		}
	}
	out := make(map[string]*llmrelayv1.TargetHealth, len(keys))
	for i, st := range s.routes.Health(ctx, keys) {
		h := &llmrelayv1.TargetHealth{Ejected: st.Ejected, ConsecutiveFailures: uint32(st.Failures), Ejections: uint32(st.Ejections)}
		if st.Ejected {
			h.EjectedUntil = timestamppb.New(st.Until)
		}
		out[keys[i]] = h
	}
	return out
}

// Generate implements llmrelayv1.LLMServiceServer: it runs the call's
// attempt plan (see run) and ends with the successful attempt's Final or
// the status of the failure. The call's deadline is the one its context
// carries: the interceptor chain's deadline link owns it (the server's
// default when the client set none, clamped to the server's max).
func (s *Service) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	ctx := stream.Context()
	if res, ok := callinfo.From(ctx).Resolved(); ok && res.Route != nil && res.Route.Timeout > 0 {
		// The route's timeout: it may only bring the call's deadline in.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, res.Route.Timeout)
		defer cancel()
	}
	c, err := s.newCall(ctx, req, stream)
	defer c.recordAnnotations()
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if c.resumable {
		// From here on the call runs on a context of its own, which the
		// client's going away does not end (see resumable).
		detached, end, err := c.makeResumable(ctx, stream)
		switch {
		case errors.Is(err, resume.ErrAttach):
			return s.attach(ctx, c, stream)
		case err != nil:
			return s.fail(ctx, c, err)
		}
		defer end()
		ctx = detached
	}
	if c.heartbeat > 0 {
		if err := c.out.startHeartbeat(c.heartbeat); err != nil {
			return s.fail(ctx, c, err)
		}
		defer c.out.stopHeartbeat()
	}
	res, err := c.run(ctx)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if err := c.sendFinal(ctx, res); err != nil {
		return s.fail(ctx, c, err)
	}
	c.out.endLog(nil)
	c.done(ctx, codes.OK, "", res)
	return nil
}

// errUnresolved is the internal error of a call that reached the handler
// without a resolved target: the interceptor chain is wired wrong.
var errUnresolved = errors.New("service: the call's model was not resolved (the chain's resolve link did not run)")

// call is one Generate call in flight.
type call struct {
	svc       *Service
	req       *llmrelayv1.GenerateRequest
	resolved  *route.Resolved
	hook      *hook.Call // what the hooks see; nil before they run
	preq      *provider.Request
	out       *emitter
	info      *callinfo.Info // nil without the interceptor chain
	requestID string
	key       string // the caller's API key name, "" without keys
	start     time.Time
	// plan numbers the attempts, says where each goes and decides what
	// follows each failure; nil until the call is ready to run.
	plan *retry.Plan
	// idle is the call's stream idle timeout; firstEvent the first event
	// timeout it asked for (zero: the provider's default, see runAttempt).
	// idleCallerSet says the caller chose an idle timeout stricter than the
	// server's default, which makes a stall under it the caller's doing
	// (retry.StallError).
	idle, firstEvent time.Duration
	idleCallerSet    bool
	// usage sums the tokens of every attempt, and cost their cost when
	// priced.
	usage  provider.Usage
	cost   float64
	priced bool
	// firstDelta is set once the call sent its first delta.
	firstDelta bool
	// so is the structured-output state; nil without response_format.
	so *structured
	// output bounds each attempt's output.
	output outputLimit
	// heartbeat is the call's heartbeat interval, 0 for none.
	heartbeat time.Duration
	// resumable says the call asked to survive its stream (the request,
	// or its route's default); fingerprint identifies the client's
	// request, for a repeated Generate of the same call (resume.go).
	resumable   bool
	fingerprint string
}

// newCall takes the call's resolved targets, runs the hooks before the
// first attempt, prepares the provider request, has every target's
// provider validate it and makes the call's attempt plan. Errors are
// *apierr.Error or map to one.
func (s *Service) newCall(ctx context.Context, req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) (*call, error) {
	c := &call{svc: s, req: req, out: &emitter{stream: stream}, info: callinfo.From(ctx), requestID: req.GetRequestId(), start: time.Now(), key: keyName(ctx)}
	if c.info != nil {
		// The chain's call record: the same id in every log line and error.
		c.requestID = c.info.RequestID()
	}
	if c.requestID == "" {
		c.requestID = uuid.NewString()
	}
	res, ok := c.info.Resolved()
	if !ok {
		return c, errUnresolved
	}
	c.resolved = res
	if mayResume(req, res) {
		// The client's request as it sent it: hooks change it.
		c.fingerprint = fingerprint(req)
	}
	c.hook = &hook.Call{Model: res.Name, Route: res.Route, Request: req}
	if id, ok := auth.FromContext(ctx); ok {
		c.hook.Key = id.Name
	}
	if err := s.hooks.Before(ctx, c.hook); err != nil {
		return c, err
	}
	req = c.hook.Request
	c.req = req
	if c.resumable = req.GetResumable(); c.resumable && c.fingerprint == "" {
		c.fingerprint = fingerprint(req)
	}
	first := res.Targets[0]
	idle, firstEvent := req.GetStreamIdleTimeout().AsDuration(), req.GetFirstEventTimeout().AsDuration()
	if err := s.limits.CheckStreamTimeouts(idle, firstEvent); err != nil {
		return c, err
	}
	c.idle, c.firstEvent = s.limits.IdleTimeout(idle), firstEvent
	c.idleCallerSet = c.idle < s.limits.DefaultIdleTimeout
	c.output = s.outputLimitOf(req)
	var err error
	if c.heartbeat, err = s.heartbeatOf(req); err != nil {
		return c, err
	}
	rf := responseFormat(req)
	if rf != nil && c.output.truncate {
		return c, apierr.InvalidField(apierr.ReasonInvalidRequest, "output_limit.on_limit",
			"ON_OUTPUT_LIMIT_TRUNCATE cannot be combined with response_format: an object cut at the limit never conforms to its schema")
	}
	if c.preq, err = providerRequest(req, first.Model, rf); err != nil {
		return c, err
	}
	if rf != nil {
		if c.so, err = s.newStructured(rf, c.preq); err != nil {
			return c, err
		}
	}
	// Every target the call may reach must take the request: a request one
	// of them cannot carry fails now, not after the others failed.
	// The operator's provider_options policy of each target comes first
	// (with the headers it configured, which extra_headers cannot replace).
	for _, t := range res.Targets {
		if err := t.Entry.Config.CheckOptions(c.preq.Options); err != nil {
			return c, err
		}
		if v, ok := t.Entry.Provider.(provider.RequestValidator); ok {
			preq := *c.preq
			preq.Model = t.Model
			if err := v.ValidateRequest(&preq); err != nil {
				return c, err
			}
		}
	}
	hedging, err := s.limits.Hedging(hedgeRequest(req.GetHedging()))
	if err != nil {
		return c, err
	}
	rp := req.GetRetry()
	deadline, _ := ctx.Deadline()
	c.plan = retry.NewPlan(retry.PlanConfig{
		Policy: s.limits.Policy(retry.Request{
			MaxAttempts:    int(rp.GetMaxAttempts()),
			InitialBackoff: rp.GetInitialBackoff().AsDuration(),
			MaxBackoff:     rp.GetMaxBackoff().AsDuration(),
			Midstream:      retry.Midstream(rp.GetMidstream()),
		}),
		Target:    first,
		Fallbacks: res.Targets[1:],
		Budget:    s.budget,
		Health:    s.routes,
		Deadline:  deadline,
		MaxReasks: c.so.maxReasks(),
		Hedging:   hedging,
		Latencies: s.latencies,
	})
	return c, nil
}

// hedgeRequest reads a request's hedging policy.
func hedgeRequest(h *llmrelayv1.HedgePolicy) retry.HedgeRequest {
	if h == nil {
		return retry.HedgeRequest{}
	}
	r := retry.HedgeRequest{Set: true, After: h.GetHedgeAfter().AsDuration(), Adaptive: h.GetAdaptive(), Target: retry.HedgeTarget(h.GetTarget())}
	if h.MaxHedges != nil {
		n := int(h.GetMaxHedges())
		r.MaxHedges = &n
	}
	return r
}

// providerName returns the configured name of the provider the call's
// current attempt goes to, "" before the call has a target.
func (c *call) providerName() string {
	if c.plan != nil {
		return c.plan.Target().Entry.Config.Name
	}
	if c.resolved != nil {
		return c.resolved.Targets[0].Entry.Config.Name
	}
	return ""
}

// routeName returns the route the call's model named, "" for
// "<provider>/<model>".
func (c *call) routeName() string {
	if c.resolved == nil || c.resolved.Route == nil {
		return ""
	}
	return c.resolved.Route.Name
}

// recordAnnotations writes the hooks' annotations to the call record, for
// the call's log line, whether the call succeeded or not.
func (c *call) recordAnnotations() {
	if c != nil && c.hook != nil {
		c.info.Annotate(c.hook.Annotations())
	}
}

// attempts returns the attempts the call made, hedges included.
func (c *call) attempts() int {
	if c.plan == nil {
		return 0
	}
	return c.plan.Attempts()
}

// hedges returns how many of the call's attempts were hedges.
func (c *call) hedges() int {
	if c.plan == nil {
		return 0
	}
	return c.plan.Hedges()
}

// addToolCall folds a tool-call fragment into the result's calls.
func (r *attemptResult) addToolCall(d provider.ToolCallDelta) {
	for len(r.toolCalls) <= d.Index {
		r.toolCalls = append(r.toolCalls, &llmrelayv1.ToolCall{})
	}
	tc := r.toolCalls[d.Index]
	if d.ID != "" {
		tc.Id = d.ID
	}
	if d.Name != "" {
		tc.Name = d.Name
	}
	tc.Signature += d.Signature
	tc.Arguments += d.ArgumentsDelta
}

// reasoningBlock is a reasoning block being assembled from its fragments.
type reasoningBlock struct {
	text                        strings.Builder
	signature, redacted, format string
	id, kind, providerFormat    string
}

// addReasoning folds a reasoning fragment into the result's blocks.
func (r *attemptResult) addReasoning(d provider.ReasoningDelta) {
	for len(r.reasoning) <= d.Index {
		r.reasoning = append(r.reasoning, &reasoningBlock{})
	}
	b := r.reasoning[d.Index]
	if d.Format != "" {
		b.format = d.Format
	}
	b.text.WriteString(d.Text)
	b.signature += d.Signature
	b.redacted += d.Redacted
	if d.ID != "" {
		b.id = d.ID
	}
	if d.Kind != "" {
		b.kind = d.Kind
	}
	if d.ProviderFormat != "" {
		b.providerFormat = d.ProviderFormat
	}
}

// providerReasoning returns the result's reasoning blocks.
func (r *attemptResult) providerReasoning() []provider.Reasoning {
	out := make([]provider.Reasoning, len(r.reasoning))
	for i, b := range r.reasoning {
		out[i] = provider.Reasoning{Text: b.text.String(), Signature: b.signature, Redacted: b.redacted, Format: b.format,
			ID: b.id, Kind: b.kind, ProviderFormat: b.providerFormat}
	}
	return out
}

// providerMessage returns the result as the assistant message a provider
// is sent back (a structured-output re-ask's): its text, reasoning,
// provider tool blocks, tool calls and their order.
func (r *attemptResult) providerMessage() provider.Message {
	m := provider.Message{Role: provider.RoleAssistant, Content: r.text.String(), Reasoning: r.providerReasoning(), ProviderTools: r.providerTools}
	for _, tc := range r.toolCalls {
		m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments(), Signature: tc.GetSignature()})
	}
	if !r.order.Usual(m.Content) {
		m.Parts = r.order.Parts(m.Content)
	}
	return m
}

// sendFinal sends the call's Final: the successful attempt's message (its
// text, reasoning, tool calls, provider tool blocks, refusal and the
// order of its blocks), with the usage of every attempt (cancelled hedges
// included), how many attempts and hedges ran, the provider, model and
// route that answered, for structured output the object and the
// validation retries and errors, and the annotations of the hooks, which
// run just before.
func (c *call) sendFinal(ctx context.Context, res *attemptResult) error {
	msg := finalMessage(res)
	final := &llmrelayv1.Final{
		Message:      msg,
		FinishReason: finishReason(res.finish),
		Usage:        usage(c.usage),
		Attempts:     uint32(c.plan.Attempts()),
		Hedges:       uint32(c.plan.Hedges()),
		Provider:     c.providerName(),
		Model:        c.plan.Target().Model,
		Route:        c.routeName(),
	}
	c.so.fillFinal(final, res)
	c.svc.hooks.After(ctx, c.hook, final)
	final.Annotations = c.hook.Annotations()
	c.out.stopHeartbeat() // nothing follows the final
	return c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(res.attempt), Event: &llmrelayv1.GenerateEvent_Final{Final: final}})
}

// fail logs the error with the request id and returns its status. The
// client sees only the public message.
func (s *Service) fail(ctx context.Context, c *call, err error) error {
	var ae *apierr.Error
	var f *retry.Failure
	if errors.As(err, &f) {
		ae = apierr.FromFailure(f)
	} else {
		if ctx.Err() != nil {
			// Report why the context ended (client cancel, deadline,
			// shutdown), not the error a send returned because of it.
			err = context.Cause(ctx)
		}
		ae = apierr.FromError(err)
	}
	ae = apierr.FromError(c.out.endLog(ae))
	if ae.Code == codes.Internal {
		s.log.Error("generate failed", "request_id", c.requestID, "error", err)
	} else {
		s.log.Debug("generate failed", "request_id", c.requestID, "code", ae.Code.String(), "reason", ae.Reason, "attempts", c.attempts(), "error", err)
	}
	c.done(ctx, ae.Code, ae.Reason, nil)
	return ae
}

// emitter numbers and sends a call's events: sequence 1, 2, 3, ... with no
// gaps. It is the one place events are numbered. With a heartbeat
// (startHeartbeat), its goroutine sends heartbeat events too, taking turns
// with send. For a resumable call every event also goes to the call's log,
// numbered the same, and the client's stream going away is no error: the
// events then go to the log only (resume.go).
type emitter struct {
	stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]
	// log is the resumable call's log, nil for other calls; gone says the
	// client's stream went away. Guarded by mu.
	log  *resume.Call
	gone bool

	mu   sync.Mutex
	seq  uint64
	last time.Time // when the last event was sent, with a heartbeat
	// stop ends the heartbeat's goroutine, which closes stopped; nil
	// without a heartbeat. Only the call's goroutine uses them.
	stop, stopped chan struct{}
}

// send stamps the next sequence number on ev and sends it.
func (e *emitter) send(ev *llmrelayv1.GenerateEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev.Sequence = e.seq
	err := e.deliver(ev)
	if e.stop != nil {
		e.last = time.Now()
	}
	return err
}
