// Package service implements the llmrelay.v1.LLMService handlers. Handlers
// are thin: Generate takes the target its model resolved to (from the call
// record, which the interceptor chain filled), has the provider validate
// the request, runs the call's attempt plan (internal/retry's Plan) and
// turns each provider event into a GenerateEvent, numbered by one emitter.
// Retry decisions live in internal/retry, classification in the provider
// adapters and status mapping in internal/apierr.
package service

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/schema"
)

// Service implements llmrelayv1.LLMServiceServer. It is safe for concurrent use.
type Service struct {
	llmrelayv1.UnimplementedLLMServiceServer

	providers *provider.Set
	log       *slog.Logger
	metrics   *metrics.Metrics
	limits    retry.Limits
	budgets   *retry.Budgets
	timer     retry.Timer
	// schemas compiles and caches structured-output schemas; schemaCfg
	// bounds them and the re-asks.
	schemas   *schema.Cache
	schemaCfg schema.Config
}

// Deps are what a Service needs.
type Deps struct {
	Providers *provider.Set
	Config    *config.Config
	Logger    *slog.Logger
	Metrics   *metrics.Metrics // may be nil
	// Timer makes the waits between attempts; nil means real time.
	Timer retry.Timer
}

// New returns a Service.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	schemaCfg := d.Config.SchemaConfig()
	r := d.Config.Retry
	return &Service{
		providers: d.Providers, log: log, metrics: d.Metrics, timer: d.Timer,
		schemas: schema.NewCache(schemaCfg), schemaCfg: schemaCfg,
		limits:  d.Config.RetryLimits(),
		budgets: retry.NewBudgets(r.Budget.MaxTokens, r.Budget.TokenRatio),
	}
}

// ListModels implements llmrelayv1.LLMServiceServer. With an API key, it
// lists only the models the key may use.
func (s *Service) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	id, keyed := auth.FromContext(ctx)
	resp := &llmrelayv1.ListModelsResponse{}
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
			})
		}
	}
	sort.Slice(resp.Models, func(i, j int) bool { return resp.Models[i].Id < resp.Models[j].Id })
	return resp, nil
}

// Generate implements llmrelayv1.LLMServiceServer: it runs the call's
// attempt plan (see run) and ends with the successful attempt's Final or
// the status of the failure. The call's deadline is the one its context
// carries: the interceptor chain's deadline link owns it (the server's
// default when the client set none, clamped to the server's max).
func (s *Service) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	ctx := stream.Context()
	c, err := s.newCall(ctx, req, stream)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	res, err := c.run(ctx)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if err := c.sendFinal(res); err != nil {
		return s.fail(ctx, c, err)
	}
	s.metrics.CallDone(c.providerName(), codes.OK.String(), c.plan.Attempts())
	return nil
}

// errUnresolved is the internal error of a call that reached the handler
// without a resolved target: the interceptor chain is wired wrong.
var errUnresolved = errors.New("service: the call's model was not resolved (the chain's resolve link did not run)")

// call is one Generate call in flight.
type call struct {
	svc       *Service
	req       *llmrelayv1.GenerateRequest
	target    provider.Target
	preq      *provider.Request
	out       *emitter
	info      *callinfo.Info // nil without the interceptor chain
	requestID string
	start     time.Time
	// plan numbers the attempts, says where each goes and decides what
	// follows each failure; nil until the call is ready to run.
	plan *retry.Plan
	// idle is the call's stream idle timeout.
	idle time.Duration
	// usage sums the tokens of every attempt.
	usage provider.Usage
	// firstDelta is set once the call sent its first delta.
	firstDelta bool
	// so is the structured-output state; nil without response_format.
	so *structured
}

// newCall takes the call's resolved target, prepares the provider request,
// has the provider validate it and makes the call's attempt plan. Errors
// are *apierr.Error or map to one.
func (s *Service) newCall(ctx context.Context, req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) (*call, error) {
	c := &call{svc: s, req: req, out: &emitter{stream: stream}, info: callinfo.From(ctx), requestID: req.GetRequestId(), start: time.Now()}
	if c.info != nil {
		// The chain's call record: the same id in every log line and error.
		c.requestID = c.info.RequestID()
	}
	if c.requestID == "" {
		c.requestID = uuid.NewString()
	}
	target, ok := c.info.Target()
	if !ok {
		return c, errUnresolved
	}
	c.target = target
	c.idle = s.limits.IdleTimeout(req.GetStreamIdleTimeout().AsDuration())
	rf := responseFormat(req)
	var err error
	if c.preq, err = providerRequest(req, target.Model, rf); err != nil {
		return c, err
	}
	if rf != nil {
		if c.so, err = s.newStructured(rf, c.preq); err != nil {
			return c, err
		}
	}
	if v, ok := target.Entry.Provider.(provider.RequestValidator); ok {
		if err := v.ValidateRequest(c.preq); err != nil {
			return c, err
		}
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
		Target:    target,
		Budget:    func(name string) retry.Throttle { return s.budgets.For(name) },
		Deadline:  deadline,
		MaxReasks: c.so.maxReasks(),
	})
	return c, nil
}

// providerName returns the configured name of the provider the call's
// current attempt goes to, "" before the call has a target.
func (c *call) providerName() string {
	if c.plan != nil {
		return c.plan.Target().Entry.Config.Name
	}
	if c.target.Entry != nil {
		return c.target.Entry.Config.Name
	}
	return ""
}

// attempts returns the attempts the call made.
func (c *call) attempts() int {
	if c.plan == nil {
		return 0
	}
	return c.plan.Attempts()
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
	tc.Arguments += d.ArgumentsDelta
}

// sendFinal sends the call's Final: the successful attempt's message, with
// the usage of every attempt and, for structured output, the object and the
// validation retries and errors.
func (c *call) sendFinal(res *attemptResult) error {
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: res.text.String()}
	for _, tc := range res.toolCalls {
		if tc.GetId() != "" || tc.GetName() != "" || tc.GetArguments() != "" {
			msg.ToolCalls = append(msg.ToolCalls, tc)
		}
	}
	final := &llmrelayv1.Final{
		Message:      msg,
		FinishReason: finishReason(res.finish),
		Usage:        &llmrelayv1.Usage{InputTokens: uint64(c.usage.InputTokens), OutputTokens: uint64(c.usage.OutputTokens)},
		Attempts:     uint32(c.plan.Attempts()),
		Provider:     c.providerName(),
		Model:        c.plan.Target().Model,
	}
	c.so.fillFinal(final, res)
	return c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(c.plan.Attempts()), Event: &llmrelayv1.GenerateEvent_Final{Final: final}})
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
	if ae.Code == codes.Internal {
		s.log.Error("generate failed", "request_id", c.requestID, "error", err)
	} else {
		s.log.Debug("generate failed", "request_id", c.requestID, "code", ae.Code.String(), "reason", ae.Reason, "attempts", c.attempts(), "error", err)
	}
	s.metrics.CallDone(c.providerName(), ae.Code.String(), c.attempts())
	return ae
}

// emitter numbers and sends a call's events: sequence 1, 2, 3, ... with no
// gaps. It is the one place events are numbered.
type emitter struct {
	stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]
	seq    uint64
}

// send stamps the next sequence number on ev and sends it.
func (e *emitter) send(ev *llmrelayv1.GenerateEvent) error {
	e.seq++
	ev.Sequence = e.seq
	return e.stream.Send(ev)
}
