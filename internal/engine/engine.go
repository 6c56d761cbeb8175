// Package engine is one llmrelay call as plain Go, callable from any
// door (the gRPC service today; HTTP doors in other vendors' formats
// tomorrow). A door converts its request into a llmrelayv1.GenerateRequest,
// describes its caller (Caller: the credential, the client's address, the
// method), runs the engine's admission (Admit: authentication, limits,
// deadline, request checks, model resolution, a provider slot, in the one
// order Admission lists) and the call (Generate, Resume, ListModels), and
// turns the events the engine hands its Sink, and the *apierr.Error it
// returns, into its own wire format. The engine imports no transport: a
// door decides nothing the engine decides.
//
// A Generate call is a call, its turns and their attempts. The call owns
// what the client sees once (the emitter, the sole owner of event
// numbering; usage and cost; the resumable log; the Final); a turn owns one
// model request (the provider request, its attempt plan, structured output
// and the output limit); an attempt is one provider stream of that plan.
// A call has one turn, or with server tools a loop of turns (tools.go)
// that adds turns without touching the call's parts, the plan numbering
// attempts across them (retry.PlanConfig.Numbered).
//
// Retry and fallback decisions live in internal/retry, target order and
// health in internal/route, classification in the provider adapters and
// the error kinds in internal/apierr.
package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callctx"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/resume"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/schema"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/timeheap"
	tokenusage "github.com/llmrelay/llmrelay/internal/usage"
)

// Sink receives the events of one call, for its door: the gRPC door's is
// the call's server stream. The engine calls it from one goroutine at a
// time.
type Sink interface {
	// Send delivers the next event. An error means the client is gone.
	Send(*llmrelayv1.GenerateEvent) error
	// SetHeader sets response headers, given as key, value pairs (an even
	// number of strings), sent with the first event or by SendHeader; it
	// commits nothing. The headers of one step come in one call: gRPC
	// merges each call's headers into a new map.
	SetHeader(kv ...string)
	// SendHeader sends the response headers now, which commits the call:
	// a client library no longer retries it by itself.
	SendHeader() error
}

// ShownOutputKeeper is a Sink's optional capability: KeepsShownOutput
// reports that its client cannot take back output it was shown (an HTTP
// door's streamed reply to a client that did not opt in to restarts).
// Such a call's structured output is validated but never re-asked, be
// its schema the request's or its route's default: a re-ask replaces the
// reply the client was shown. (The door asks for retry.midstream
// MIDSTREAM_FAIL itself, a field of the request.)
type ShownOutputKeeper interface {
	KeepsShownOutput() bool
}

// EarlyUsageSink is a Sink's optional capability, for a door whose format
// reports the prompt's tokens as the reply starts (Anthropic's
// message_start): EarlyUsage is given, as an attempt's first delta is
// made and before it is sent, the usage the attempt's provider reported
// before that delta, nil when it reported none. An Anthropic provider
// reports the input as its stream opens; OpenAI's and Gemini's formats
// report usage with or after their output, so nil. It is called once per
// attempt that streams, only with its first delta (an attempt that failed
// before one gives none), from one goroutine at a time as Send is; the
// sink keeps u. What the call used is the Final's usage, which sums every
// attempt's, failed and cancelled ones included.
type EarlyUsageSink interface {
	EarlyUsage(u *llmrelayv1.Usage)
}

// keepsShownOutput reports whether sink's client cannot take back output
// it was shown (ShownOutputKeeper).
func keepsShownOutput(sink Sink) bool {
	k, ok := sink.(ShownOutputKeeper)
	return ok && k.KeepsShownOutput()
}

// Engine runs calls. It is safe for concurrent use.
type Engine struct {
	providers *provider.Set
	routes    *route.Table
	hooks     hook.Chain
	log       *slog.Logger
	metrics   *metrics.Metrics
	limits    retry.Limits
	// plans is what every call's attempt plan shares: the retry budgets,
	// the routes' health, the observed latencies.
	plans retry.Env
	timer retry.Timer
	// schemas compiles and caches structured-output schemas; schemaCfg
	// bounds them and the re-asks.
	schemas   *schema.Cache
	schemaCfg schema.Config
	output    OutputLimits
	heartbeat Heartbeat
	streaming Streaming
	// prices turns tokens into cost (nil: none priced); captureContent
	// records prompts and replies on the attempt spans.
	prices         *tokenusage.Prices
	captureContent bool
	// resume runs the resumable calls and replays their logs.
	resume *resume.Registry
	// admission decides who may call and what a call may take.
	admission *Admission
	// tools runs the server tools; nil: none.
	tools *servertools.Host
	// keyCalls are the calls open by key, which end when their key stops
	// working; nil: not registered.
	keyCalls *KeyCalls
	// stalls runs the attempts' stall timeouts.
	stalls timeheap.Clock
}

// OutputLimits are the server's bounds on a reply's output (the
// limits section's default_max_output_bytes and max_output_bytes).
type OutputLimits struct {
	// Default is the output limit of a request that sets none; Max caps
	// any request's.
	Default, Max int64
}

// Heartbeat is the heartbeat section: it keeps quiet Generate streams
// alive through proxies that cut streams silent for longer than their idle
// timeout: a call with a heartbeat sends its response headers at once, and
// a heartbeat event whenever it has sent nothing else for the interval
// (see docs/deployment.md, "Timeouts of what sits in front").
type Heartbeat struct {
	// Interval turns the heartbeat on for every Generate call, with this
	// interval, unless a request asks for another one; 0 (the default)
	// leaves it to requests (heartbeat_interval).
	Interval time.Duration `yaml:"interval"`
	// MinInterval is the shortest heartbeat_interval a request may ask
	// for; shorter ones are INVALID_ARGUMENT.
	MinInterval time.Duration `yaml:"min_interval"`
}

// Deps are what an Engine runs on: the runtime's parts, each package's own
// settings, and the state that outlives a reload (the server's). Every
// field but Hooks, Metrics, Timer, Budget and Prices is required: the
// engine makes up no defaults (config.Default is their one owner).
type Deps struct {
	Providers *provider.Set
	// Routes resolves models and keeps the targets' health.
	Routes *route.Table
	// Hooks run before each call's first attempt and after its success,
	// in order; the server puts the routes' defaults first.
	Hooks   hook.Chain
	Logger  *slog.Logger
	Metrics *metrics.Metrics // may be nil
	// Timer makes the waits between attempts; nil means real time.
	Timer retry.Timer
	// Retry is the retry section with the stall timeouts; Schema the
	// structured_output section; Output and Heartbeat theirs.
	Retry     retry.Limits
	Schema    schema.Config
	Output    OutputLimits
	Heartbeat Heartbeat
	// Streaming says how deltas reach the client (the streaming section).
	Streaming Streaming
	// Prices turns tokens into cost (nil: none priced); CaptureContent
	// records prompts and replies on the attempt spans.
	Prices         *tokenusage.Prices
	CaptureContent bool
	// Budget returns a provider's retry budget, by its configured name
	// (nil: none): the state store's, shared by the replicas, or this
	// process's, kept across reloads by the server.
	Budget func(provider string) retry.Throttle
	// Resume runs resumable calls, on the server's state store.
	Resume *resume.Registry
	// Latencies are the targets' recent times to first delta, which
	// adaptive hedging delays follow; the server's, kept across reloads.
	Latencies *retry.Latencies
	// Admission decides who may call and what a call may take.
	Admission *Admission
	// Tools runs the server tools (GenerateRequest.server_tools) on the
	// configured MCP servers; the server's, kept across reloads. nil: a
	// request naming server tools fails.
	Tools *servertools.Host
	// KeyCalls registers each keyed call while it runs, so that the calls
	// of a key that stops working meanwhile end (KeyCalls.Watch); the
	// server's, kept across reloads. nil: calls run to their end.
	KeyCalls *KeyCalls
}

// New returns an Engine on d.
func New(d Deps) *Engine {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		providers: d.Providers, routes: d.Routes, hooks: d.Hooks, log: log, metrics: d.Metrics, timer: d.Timer,
		schemas: schema.NewCache(d.Schema), schemaCfg: d.Schema,
		limits: d.Retry, output: d.Output, heartbeat: d.Heartbeat, streaming: d.Streaming,
		prices: d.Prices, captureContent: d.CaptureContent,
		resume: d.Resume, admission: d.Admission, tools: d.Tools, keyCalls: d.KeyCalls,
		plans: retry.Env{Budget: d.Budget, Health: d.Routes, Latencies: d.Latencies},
	}
}

// Admission returns the engine's admission.
func (s *Engine) Admission() *Admission { return s.admission }

// ListModels lists the models and routes, and the providers that accept
// any model name (provider.Entry.OpenModels), whose models it cannot list.
// With an API key, it lists only the models, routes and such providers
// the key may use; a route is listed with all its targets, each with its
// health, and a provider's model that a route uses with its health.
func (s *Engine) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	id, keyed := auth.FromContext(ctx)
	resp := &llmrelayv1.ListModelsResponse{}
	health := s.targetHealth(ctx)
	for _, name := range s.providers.Names() {
		if req.GetProvider() != "" && req.GetProvider() != name {
			continue
		}
		e, _ := s.providers.Get(name)
		if e.OpenModels() {
			// Its models are whatever the caller names: say so, with the
			// key's patterns that may reach it, as a key that may reach
			// none of its models must not learn it exists.
			var patterns []string
			if keyed {
				if patterns = id.ModelPatternsUnder(name); len(patterns) == 0 {
					continue
				}
			}
			resp.AnyModelProviders = append(resp.AnyModelProviders, &llmrelayv1.AnyModelProvider{
				Provider: name, ProviderKind: e.Config.Kind, KeyPatterns: patterns,
			})
		}
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
func (s *Engine) targetHealth(ctx context.Context) map[string]*llmrelayv1.TargetHealth {
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

// routeDeadline returns ctx with res's route timeout applied: a call to a
// route whose timeout is set (Generate, Embed, CountTokens) ends at most
// that long after it starts. It may only bring the call's deadline in
// (Admission's deadline step owns it). The deadline is on callctx's
// shared timer, as the call's own: a runtime timer, stopped, would hold
// the call's context until the runtime clears it from its timer heap.
func routeDeadline(ctx context.Context, res *route.Resolved) (context.Context, context.CancelFunc) {
	if res == nil || res.Route == nil || res.Route.Timeout <= 0 {
		return ctx, func() {}
	}
	return callctx.WithDeadline(ctx, time.Now().Add(res.Route.Timeout))
}

// Generate runs one call of an admitted caller (Admit ran on ctx) to its
// end: the call's attempt plan (see run), its events to sink, numbered by
// the call's one emitter, ending with the successful attempt's Final. A
// failed call returns its *apierr.Error. The call's deadline is the one
// ctx carries (Admission's deadline step owns it; a route's timeout may
// only bring it in).
func (s *Engine) Generate(ctx context.Context, req *llmrelayv1.GenerateRequest, sink Sink) error {
	if attaching(ctx, req) {
		// Admission found the call kept (Attach) and charged this one
		// nothing: it must not run, whatever became of the kept call
		// since (a call that failed meanwhile ends it with its status).
		caller, _ := auth.FromContext(ctx)
		return s.attach(ctx, req.GetRequestId(), caller, sink)
	}
	if res, ok := callinfo.From(ctx).Resolved(); ok {
		var cancel context.CancelFunc
		ctx, cancel = routeDeadline(ctx, res)
		defer cancel()
	}
	c, err := s.newCall(ctx, req, sink)
	defer c.recordAnnotations()
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if c.resumable {
		// From here on the call runs on a context of its own, which the
		// client's going away does not end (see resumable).
		detached, end, err := c.makeResumable(ctx, sink)
		switch {
		case errors.Is(err, resume.ErrAttach):
			return s.attach(ctx, c.requestID, c.id, sink)
		case err != nil:
			return s.fail(ctx, c, err)
		}
		defer end()
		ctx = detached
	}
	if c.id != nil {
		// Ends the call, on the context it runs on (a resumable call's
		// own), once its key (its secret) stops working.
		var kc *keyCall
		ctx, kc = s.keyCalls.add(ctx, c.id)
		defer s.keyCalls.remove(kc)
	}
	if c.heartbeat > 0 {
		if err := c.out.startHeartbeat(c.heartbeat); err != nil {
			return s.fail(ctx, c, err)
		}
		defer c.out.stopHeartbeat()
	}
	res, err := c.runTurns(ctx)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if err := c.sendFinal(ctx, res); err != nil {
		return s.fail(ctx, c, err)
	}
	c.out.endLog(nil)
	c.done(ctx, apierr.OK, "", res)
	return nil
}

// errUnresolved is the internal error of a call that reached Generate
// without a resolved target: its door did not admit it.
var errUnresolved = errors.New("engine: the call's model was not resolved (Admit did not run)")

// call is one Generate call in flight: what the client sees once (the
// emitter, the sole owner of event numbering; the usage and cost of every
// attempt; the resumable log; the Final) and the turn it runs.
type call struct {
	eng       *Engine
	req       *llmrelayv1.GenerateRequest
	resolved  *route.Resolved
	hook      *hook.Call // what the hooks see; nil before they run
	out       *emitter
	info      *callinfo.Info // the call record; nil when a door made none
	requestID string
	id        *auth.Identity // the caller's API key; nil without keys
	start     time.Time
	// turn is the turn running; nil until the call is ready to run.
	// attemptsBefore and hedgesBefore count the attempts and hedges of
	// the turns before it (int32: the call record stays in its size class).
	turn                         *turn
	attemptsBefore, hedgesBefore int32
	// first is the call's first turn, allocated with the call.
	first turn
	// usage sums the tokens of every attempt, and cost their cost when
	// priced.
	usage provider.Usage
	cost  float64
	// estimated sums what settlement counts for the attempts whose
	// provider did not report their whole usage (spend.Charge): the
	// budgets and usage records count it, the Final does not. Nil until
	// there is one (a held call keeps this record small).
	estimated *estimate
	// fingerprint identifies the client's request, for a repeated
	// Generate of the same call (resume.go).
	fingerprint string
	// heartbeat is the call's heartbeat interval, 0 for none.
	heartbeat time.Duration
	// tools is the call's server tools and its transcript (tools.go); nil
	// without server tools.
	tools *tools
	// priced says an attempt's model had a price. The call's flags sit
	// together: a held call keeps this record small.
	priced bool
	// firstDelta is set once the call sent its first delta.
	firstDelta bool
	// resumable says the call asked to survive its stream (the request,
	// or its route's default).
	resumable bool
	// keepsShown says the client cannot take back output it was shown
	// (ShownOutputKeeper): its structured output is never re-asked.
	keepsShown bool
}

// key returns the name of the caller's API key, "" without keys.
func (c *call) key() string {
	if c.id == nil {
		return ""
	}
	return c.id.Name
}

// team returns the team of the caller's API key, "" for none.
func (c *call) team() string {
	if c.id == nil {
		return ""
	}
	return c.id.Team
}

// newCall takes the call's resolved targets, runs the hooks before the
// first attempt, prepares the provider request, has every target's
// provider validate it and makes the call's attempt plan. Errors are
// *apierr.Error or map to one.
func (s *Engine) newCall(ctx context.Context, req *llmrelayv1.GenerateRequest, sink Sink) (*call, error) {
	out := &emitter{sink: sink}
	out.early, _ = sink.(EarlyUsageSink)
	if id, ok := callinfo.CanonicalRequestID(req.GetRequestId()); ok && id != req.RequestId {
		// One form of the id for the resumable call's registry and the
		// request's fingerprint, whatever case the client wrote it in.
		req.RequestId = id
	}
	c := &call{eng: s, req: req, out: out, info: callinfo.From(ctx), requestID: req.GetRequestId(), start: time.Now(),
		keepsShown: keepsShownOutput(sink)}
	if id, ok := auth.FromContext(ctx); ok {
		c.id = id
	}
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
	var err error
	if c.heartbeat, err = s.heartbeatOf(req); err != nil {
		return c, err
	}
	if c.tools, err = s.newTools(c, req); err != nil {
		return c, err
	}
	if err := s.prepareTurn(ctx, c, &c.first, req, 1, res.Targets); err != nil {
		return c, err
	}
	c.turn = &c.first
	c.out.setTurn(1)
	return c, nil
}

// turn is one model request of a call: the provider request, its attempt
// plan, its structured output and the output limit of its attempts. A call
// has one turn, or with server tools a loop of turns (tools.go), each
// numbered, with its attempts numbered after the earlier turns'.
type turn struct {
	// n is the turn's number in its call, from 1.
	n    int
	preq *provider.Request
	// plan numbers the turn's attempts, says where each goes and decides
	// what follows each failure.
	plan *retry.Plan
	// idle and firstEvent are the stall timeouts the request asked for
	// (zero: unset; retry.Limits.Stall makes each attempt's).
	idle, firstEvent time.Duration
	// so is the structured-output state; nil without response_format.
	so *structured
	// output bounds each attempt's output.
	output outputLimit
	// prepared is the wire request the first target's provider built as it
	// checked the request (provider.RequestPreparer), until the turn's
	// first attempt to that target takes it (takePrepared), or the request
	// changes (a re-ask): nil then. Attempts of a race run at once, hence
	// the atomic.
	prepared atomic.Pointer[preparedRequest]
}

// preparedRequest is a wire request a provider built for target.
type preparedRequest struct {
	target provider.Target
	wire   any
}

// takePrepared returns the wire request prepared for an attempt to
// target, once: nil for another target, for later attempts and after the
// request changed.
func (tn *turn) takePrepared(target provider.Target) any {
	p := tn.prepared.Load()
	if p == nil || p.target != target || !tn.prepared.CompareAndSwap(p, nil) {
		return nil
	}
	return p.wire
}

// prepareTurn prepares tn, call c's turn n, for req: the provider request
// (with server tools, the conversation so far and the tools offered),
// which every target's provider must take, and the turn's attempt plan
// over targets (the call's, or from the second turn on those from the
// target that answered the turn before). Errors are *apierr.Error or map
// to one.
func (s *Engine) prepareTurn(ctx context.Context, c *call, tn *turn, req *llmrelayv1.GenerateRequest, n int, targets []provider.Target) error {
	tn.n = n
	first := targets[0]
	idle, firstEvent := req.GetStreamIdleTimeout().AsDuration(), req.GetFirstEventTimeout().AsDuration()
	if err := s.limits.CheckStreamTimeouts(idle, firstEvent); err != nil {
		return err
	}
	tn.idle, tn.firstEvent = idle, firstEvent
	tn.output = s.outputLimitOf(req)
	var err error
	rf := responseFormat(req)
	if rf != nil && tn.output.truncate {
		return apierr.InvalidField(apierr.ReasonInvalidRequest, "output_limit.on_limit",
			"ON_OUTPUT_LIMIT_TRUNCATE cannot be combined with response_format: an object cut at the limit never conforms to its schema")
	}
	if tn.preq, err = providerRequest(req, first.Model, rf); err != nil {
		return err
	}
	if c.tools != nil {
		more, err := c.tools.turnMessages(len(tn.preq.Messages))
		if err != nil {
			return err
		}
		tn.preq.Messages = append(tn.preq.Messages, more...)
		c.tools.offerTools(tn.preq, n)
		tn.output = c.tools.turnLimit(tn.output)
	}
	if rf != nil {
		if tn.so, err = s.newStructured(rf, tn.preq, c.keepsShown); err != nil {
			return err
		}
	}
	// Every target the call may reach must take the request: a request one
	// of them cannot carry fails now, not after the others failed.
	// The operator's provider_options policy of each target comes first
	// (with the headers it configured, which extra_headers cannot replace).
	// A provider that builds its wire request to check it keeps what it
	// built for the first target, whose first attempt sends it.
	for i, t := range targets {
		if err := t.Entry.Config.CheckOptions(tn.preq.Options); err != nil {
			return err
		}
		preq := *tn.preq
		preq.Model = t.Model
		switch v := t.Entry.Provider.(type) {
		case provider.RequestPreparer:
			wire, err := v.PrepareRequest(&preq)
			if err != nil {
				return err
			}
			if i == 0 && wire != nil {
				tn.prepared.Store(&preparedRequest{target: t, wire: wire})
			}
		case provider.RequestValidator:
			if err := v.ValidateRequest(&preq); err != nil {
				return err
			}
		}
	}
	hedging, err := s.limits.Hedging(hedgeRequest(req.GetHedging()))
	if err != nil {
		return err
	}
	rp := req.GetRetry()
	deadline, _ := ctx.Deadline()
	tn.plan = retry.NewPlan(retry.PlanConfig{
		Policy: s.limits.Policy(retry.Request{
			MaxAttempts:    int(rp.GetMaxAttempts()),
			InitialBackoff: rp.GetInitialBackoff().AsDuration(),
			MaxBackoff:     rp.GetMaxBackoff().AsDuration(),
			Midstream:      retry.Midstream(rp.GetMidstream()),
		}),
		Target:    first,
		Fallbacks: targets[1:],
		Env:       &s.plans,
		Deadline:  deadline,
		MaxReasks: tn.so.maxReasks(),
		Hedging:   hedging,
		Numbered:  c.attempts(),
	})
	return nil
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
	if p := c.plan(); p != nil {
		return p.Target().Entry.Config.Name
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

// plan returns the plan of the call's turn, nil before it has one.
func (c *call) plan() *retry.Plan {
	if c.turn == nil {
		return nil
	}
	return c.turn.plan
}

// attempts returns the attempts the call made, hedges included, in every
// turn: the plan of a turn numbers its attempts after the earlier turns'
// (retry.PlanConfig.Numbered).
func (c *call) attempts() int {
	if p := c.plan(); p != nil {
		return int(c.attemptsBefore) + p.Attempts()
	}
	return int(c.attemptsBefore)
}

// hedges returns how many of the call's attempts were hedges.
func (c *call) hedges() int {
	if p := c.plan(); p != nil {
		return int(c.hedgesBefore) + p.Hedges()
	}
	return int(c.hedgesBefore)
}

// toolCallBlock is a tool call being assembled from its fragments. What a
// provider may send in any number of fragments is kept in builders, as the
// reply's text is: adding each fragment to a string copied everything
// before it, so a provider that sent a call's arguments a byte at a time
// cost a core minutes of copying within the output limit.
type toolCallBlock struct {
	id, name             string
	arguments, signature strings.Builder
}

// message returns the call as the final message carries it.
func (b *toolCallBlock) message() *llmrelayv1.ToolCall {
	return &llmrelayv1.ToolCall{Id: b.id, Name: b.name, Arguments: b.arguments.String(), Signature: b.signature.String()}
}

// addToolCall folds a tool-call fragment into the result's calls.
func (r *attemptResult) addToolCall(d provider.ToolCallDelta) {
	b := r.addBlocks()
	for len(b.toolCalls) <= d.Index {
		b.toolCalls = append(b.toolCalls, &toolCallBlock{})
	}
	tc := b.toolCalls[d.Index]
	if d.ID != "" {
		tc.id = d.ID
	}
	if d.Name != "" {
		tc.name = d.Name
	}
	tc.signature.WriteString(d.Signature)
	tc.arguments.WriteString(d.ArgumentsDelta)
}

// reasoningBlock is a reasoning block being assembled from its fragments
// (in builders, as a tool call is).
type reasoningBlock struct {
	text, signature, redacted strings.Builder
	format                    string
	id, kind, providerFormat  string
}

// addReasoning folds a reasoning fragment into the result's blocks.
func (r *attemptResult) addReasoning(d provider.ReasoningDelta) {
	rb := r.addBlocks()
	for len(rb.reasoning) <= d.Index {
		rb.reasoning = append(rb.reasoning, &reasoningBlock{})
	}
	b := rb.reasoning[d.Index]
	if d.Format != "" {
		b.format = d.Format
	}
	b.text.WriteString(d.Text)
	b.signature.WriteString(d.Signature)
	b.redacted.WriteString(d.Redacted)
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
	blocks := r.more().reasoning
	out := make([]provider.Reasoning, len(blocks))
	for i, b := range blocks {
		out[i] = provider.Reasoning{Text: b.text.String(), Signature: b.signature.String(), Redacted: b.redacted.String(), Format: b.format,
			ID: b.id, Kind: b.kind, ProviderFormat: b.providerFormat}
	}
	return out
}

// providerMessage returns the result as the assistant message a provider
// is sent back (a structured-output re-ask's): its text, reasoning,
// provider tool blocks, tool calls and their order.
func (r *attemptResult) providerMessage() provider.Message {
	more := r.more()
	m := provider.Message{Role: provider.RoleAssistant, Content: r.text.String(), Reasoning: r.providerReasoning(), ProviderTools: more.providerTools}
	for _, tc := range more.toolCalls {
		m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: tc.id, Name: tc.name, Arguments: tc.arguments.String(), Signature: tc.signature.String()})
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
	final := &llmrelayv1.Final{
		Message:      finalMessage(res),
		FinishReason: finishReason(res.finish),
		Usage:        usage(c.usage),
		Attempts:     uint32(c.attempts()),
		Hedges:       uint32(c.hedges()),
		Provider:     c.providerName(),
		Model:        c.turn.plan.Target().Model,
		Route:        c.routeName(),
	}
	c.turn.so.fillFinal(final, res)
	c.fillTools(final)
	final.StopSequence = c.stopSequence(final, res)
	c.noteDroppedReasoning()
	c.eng.hooks.After(ctx, c.hook, final)
	final.Annotations = c.hook.Annotations()
	c.out.stopHeartbeat() // nothing follows the final
	return c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(res.attempt), Event: &llmrelayv1.GenerateEvent_Final{Final: final}})
}

// AnnotationReasoningDropped is the annotation a call gets when the
// answering provider was sent a conversation with reasoning of formats it
// does not take, which its adapter left out (a fallback or hedge to
// another provider kind, or a conversation carried over from one): the
// formats, comma-separated and sorted, e.g. "anthropic,gemini".
const AnnotationReasoningDropped = "reasoning.dropped"

// noteDroppedReasoning annotates the call with the reasoning formats the
// adapters of the targets that answered its turns left out of the requests
// they were sent (provider.DroppedReasoning), when they left out any: every
// turn's reply is in the Final, and an earlier turn may have been answered
// by another provider kind than the last.
func (c *call) noteDroppedReasoning() {
	f := c.turn.droppedReasoning()
	if c.tools != nil {
		f = mergeFormats(c.tools.dropped, f)
	}
	if len(f) > 0 {
		c.hook.Annotate(AnnotationReasoningDropped, strings.Join(f, ","))
	}
}

// droppedReasoning returns the reasoning formats the adapter of the target
// that answered tn left out of tn's request (provider.DroppedReasoning).
func (tn *turn) droppedReasoning() []string {
	return provider.DroppedReasoning(tn.plan.Target().Entry.Provider, tn.preq.Messages)
}

// mergeFormats returns the formats of a and b, sorted and each once.
func mergeFormats(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// stopSequence returns the Final's stop_sequence: the stop sequence the
// answering attempt's provider said ended the reply, when the call ends
// with FINISH_REASON_STOP (not one that ran out of tool turns, or was cut
// at the output limit) and the sequence is one of the request's. A
// provider that names another (a stop token of its own, or any string)
// does not reach the client, so the field is never more than the request
// asked for.
func (c *call) stopSequence(final *llmrelayv1.Final, res *attemptResult) string {
	s := res.more().stopSequence
	if s == "" || final.GetFinishReason() != llmrelayv1.FinishReason_FINISH_REASON_STOP ||
		!slices.Contains(c.req.GetGeneration().GetStop(), s) {
		return ""
	}
	return s
}

// fail logs the error with the request id and returns its status. The
// client sees only the public message.
func (s *Engine) fail(ctx context.Context, c *call, err error) error {
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
	if ae.Kind == apierr.Internal {
		s.log.Error("generate failed", "request_id", c.requestID, "error", err)
	} else {
		s.log.Debug("generate failed", "request_id", c.requestID, "code", ae.Kind.String(), "reason", ae.Reason, "attempts", c.attempts(), "error", err)
	}
	c.done(ctx, ae.Kind, ae.Reason, nil)
	return ae
}

// emitter numbers and sends a call's events: sequence 1, 2, 3, ... with no
// gaps, each with the turn it belongs to (heartbeats belong to none). It
// is the one place events are numbered. With a heartbeat
// (startHeartbeat), its goroutine sends heartbeat events too, taking turns
// with send. For a resumable call every event also goes to the call's log,
// numbered the same, and the client's stream going away is no error: the
// events then go to the log only (resume.go).
type emitter struct {
	sink Sink
	// early is sink as an EarlyUsageSink; nil when it is none.
	early EarlyUsageSink
	// log is the resumable call's log, nil for other calls; gone says the
	// client's stream went away. Guarded by mu.
	log  *resume.Call
	gone bool

	mu   sync.Mutex
	seq  uint64
	turn uint32    // the turn the call's events belong to
	last time.Time // when the last event was sent, with a heartbeat
	// stop ends the heartbeat's goroutine, which closes stopped; nil
	// without a heartbeat. Only the call's goroutine uses them.
	stop, stopped chan struct{}
}

// setHeader sets response headers of the client's stream (key, value
// pairs), taking turns with the events, as the Sink needs (nothing once
// the stream went away).
func (e *emitter) setHeader(kv ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.gone {
		e.sink.SetHeader(kv...)
	}
}

// earlyUsage gives the sink, when it takes it (EarlyUsageSink), the usage
// u an attempt's provider reported before the attempt's first delta (none
// unless reported), taking turns with the events, as setHeader does.
func (e *emitter) earlyUsage(u provider.Usage, reported bool) {
	if e.early == nil {
		return
	}
	var early *llmrelayv1.Usage
	if reported {
		u, _ = u.Bounded() // the attempt's settlement logs counts out of range
		early = usage(u)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.gone {
		e.early.EarlyUsage(early)
	}
}

// setTurn makes n the turn of the events sent from now on.
func (e *emitter) setTurn(n int) {
	e.mu.Lock()
	e.turn = uint32(n)
	e.mu.Unlock()
}

// send stamps the next sequence number and the current turn on ev and
// sends it.
func (e *emitter) send(ev *llmrelayv1.GenerateEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev.Sequence, ev.Turn = e.seq, e.turn
	err := e.deliver(ev)
	if e.stop != nil {
		e.last = time.Now()
	}
	return err
}
