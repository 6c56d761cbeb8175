// Package service implements the llmrelay.v1.LLMService handlers. Handlers
// are thin: they resolve the provider, run the call's attempts and turn each
// provider event into a GenerateEvent; retry decisions live in
// internal/retry and status mapping in internal/apierr.
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
	cfg       *config.Config
	log       *slog.Logger
	metrics   *metrics.Metrics
	limits    retry.Limits
	budgets   *retry.Budgets
	timer     Timer
	// schemas compiles and caches structured-output schemas; schemaCfg
	// bounds them and the re-asks.
	schemas   *schema.Cache
	schemaCfg schema.Config
}

// Timer makes the waits between attempts; tests inject one that records
// each wait and returns at once. Its After matches retry-go's Timer.
type Timer interface {
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Deps are what a Service needs.
type Deps struct {
	Providers *provider.Set
	Config    *config.Config
	Logger    *slog.Logger
	Metrics   *metrics.Metrics // may be nil
	// Timer makes the waits between attempts; nil means real time.
	Timer Timer
}

// New returns a Service.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r, dl, so := d.Config.Retry, d.Config.Deadlines, d.Config.StructuredOutput
	schemaCfg := schema.Config{
		MaxSchemaBytes:           so.MaxSchemaBytes,
		SchemaCacheSize:          so.SchemaCacheSize,
		DefaultValidationRetries: so.DefaultValidationRetries,
		MaxValidationRetries:     so.MaxValidationRetries,
	}
	return &Service{
		providers: d.Providers, cfg: d.Config, log: log, metrics: d.Metrics, timer: d.Timer,
		schemas: schema.NewCache(schemaCfg), schemaCfg: schemaCfg,
		limits: retry.Limits{
			DefaultMaxAttempts: r.DefaultMaxAttempts,
			MaxAttemptsLimit:   r.MaxAttemptsLimit,
			InitialBackoff:     r.InitialBackoff,
			MaxBackoff:         r.MaxBackoff,
			MaxRetryAfter:      r.MaxRetryAfter,
			DefaultDeadline:    dl.Default,
			MaxDeadline:        dl.Max,
			DefaultIdleTimeout: dl.StreamIdle,
			MaxIdleTimeout:     dl.MaxStreamIdle,
		},
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
// attempts (see run) under the call's effective deadline and ends with the
// successful attempt's Final or the status of the failure.
func (s *Service) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	ctx := stream.Context()
	c, err := s.newCall(ctx, req, stream)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	// The service's own guarantee, whatever the interceptors did: a call
	// without a deadline gets the default one, and none runs past the max.
	ctx, cancel := context.WithDeadline(ctx, c.deadline)
	defer cancel()
	res, err := c.run(ctx)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if err := c.sendFinal(res); err != nil {
		return s.fail(ctx, c, err)
	}
	s.metrics.CallDone(c.entry.Config.Name, codes.OK.String(), c.attempts)
	return nil
}

// call is one Generate call in flight.
type call struct {
	svc       *Service
	req       *llmrelayv1.GenerateRequest
	entry     *provider.Entry
	model     string
	preq      *provider.Request
	out       *emitter
	info      *callinfo.Info // nil without the interceptor chain
	requestID string
	start     time.Time
	// policy, idle and deadline are the call's retry policy, stream idle
	// timeout and effective deadline.
	policy   retry.Policy
	idle     time.Duration
	deadline time.Time
	// attempts counts the attempts made so far.
	attempts int
	// usage sums the tokens of every attempt.
	usage provider.Usage
	// firstDelta is set once the call sent its first delta.
	firstDelta bool
	// so is the structured-output state; nil without response_format.
	so *structured
}

// newCall resolves the provider, prepares the provider request and works
// out the call's policy, idle timeout and deadline. Errors are
// *apierr.Error.
func (s *Service) newCall(ctx context.Context, req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) (*call, error) {
	c := &call{svc: s, req: req, out: &emitter{stream: stream}, info: callinfo.From(ctx), requestID: req.GetRequestId(), start: time.Now()}
	if c.info != nil {
		// The chain's call record: the same id in every log line and error.
		c.requestID = c.info.RequestID()
	}
	if c.requestID == "" {
		c.requestID = uuid.NewString()
	}
	deadline, ok := ctx.Deadline()
	c.deadline = s.limits.Deadline(c.start, deadline, ok)
	c.idle = s.limits.IdleTimeout(req.GetStreamIdleTimeout().AsDuration())
	rp := req.GetRetry()
	c.policy = s.limits.Policy(retry.Request{
		MaxAttempts:    int(rp.GetMaxAttempts()),
		InitialBackoff: rp.GetInitialBackoff().AsDuration(),
		MaxBackoff:     rp.GetMaxBackoff().AsDuration(),
		Midstream:      retry.Midstream(rp.GetMidstream()),
	})
	entry, model, err := s.providers.Resolve(req.GetModel())
	if err != nil {
		reason := apierr.ReasonUnknownProvider
		if errors.Is(err, provider.ErrUnknownModel) {
			reason = apierr.ReasonUnknownModel
		}
		e := apierr.InvalidField(reason, "model", err.Error())
		e.Cause = err
		return c, e
	}
	c.entry, c.model = entry, model
	rf := responseFormat(req)
	if c.preq, err = providerRequest(req, model, rf); err != nil {
		var fe *provider.FieldError
		if !errors.As(err, &fe) {
			return c, err
		}
		return c, apierr.InvalidField(apierr.ReasonInvalidRequest, fe.Field, fe.Description)
	}
	if rf != nil {
		if c.so, err = s.newStructured(rf, c.preq); err != nil {
			return c, err
		}
	}
	if v, ok := entry.Provider.(provider.RequestValidator); ok {
		if err := v.ValidateRequest(c.preq); err != nil {
			return c, err
		}
	}
	return c, nil
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
		Attempts:     uint32(c.attempts),
		Provider:     c.entry.Config.Name,
		Model:        c.model,
	}
	c.so.fillFinal(final, res)
	return c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(c.attempts), Event: &llmrelayv1.GenerateEvent_Final{Final: final}})
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
		s.log.Debug("generate failed", "request_id", c.requestID, "code", ae.Code.String(), "reason", ae.Reason, "attempts", c.attempts, "error", err)
	}
	name := ""
	if c.entry != nil {
		name = c.entry.Config.Name
	}
	s.metrics.CallDone(name, ae.Code.String(), c.attempts)
	return ae
}

// emitter numbers and sends a call's events: sequence 1, 2, 3, ... with no
// gaps.
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
