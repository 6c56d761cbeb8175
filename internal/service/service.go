// Package service implements the llmrelay.v1.LLMService handlers. Handlers
// are thin: they resolve the provider, run the call's attempts and turn each
// provider event into a GenerateEvent; retry decisions live in
// internal/retry and status mapping in internal/apierr.
package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// Service implements llmrelayv1.LLMServiceServer. It is safe for concurrent use.
type Service struct {
	llmrelayv1.UnimplementedLLMServiceServer

	providers *provider.Set
	cfg       *config.Config
	log       *slog.Logger
	metrics   *metrics.Metrics
}

// Deps are what a Service needs.
type Deps struct {
	Providers *provider.Set
	Config    *config.Config
	Logger    *slog.Logger
	Metrics   *metrics.Metrics // may be nil
}

// New returns a Service.
func New(d Deps) *Service {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{providers: d.Providers, cfg: d.Config, log: log, metrics: d.Metrics}
}

// ListModels implements llmrelayv1.LLMServiceServer.
func (s *Service) ListModels(_ context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	resp := &llmrelayv1.ListModelsResponse{}
	for _, name := range s.providers.Names() {
		if req.GetProvider() != "" && req.GetProvider() != name {
			continue
		}
		e, _ := s.providers.Get(name)
		for _, m := range e.Models {
			resp.Models = append(resp.Models, &llmrelayv1.Model{
				Id: name + "/" + m, Provider: name, ProviderKind: e.Config.Kind, Name: m,
			})
		}
	}
	sort.Slice(resp.Models, func(i, j int) bool { return resp.Models[i].Id < resp.Models[j].Id })
	return resp, nil
}

// Generate implements llmrelayv1.LLMServiceServer.
func (s *Service) Generate(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	ctx := stream.Context()
	c, err := s.newCall(req, stream)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	res, err := c.runAttempt(ctx, 1)
	if err != nil {
		return s.fail(ctx, c, err)
	}
	if err := c.sendFinal(res, 1); err != nil {
		return s.fail(ctx, c, err)
	}
	s.metrics.CallDone(c.entry.Config.Name, codes.OK.String(), 1)
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
	requestID string
	start     time.Time
	// firstDelta is set once the call sent its first delta.
	firstDelta bool
}

// newCall resolves the provider and prepares the provider request. Errors
// are *apierr.Error.
func (s *Service) newCall(req *llmrelayv1.GenerateRequest, stream grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) (*call, error) {
	c := &call{svc: s, req: req, out: &emitter{stream: stream}, requestID: req.GetRequestId(), start: time.Now()}
	if c.requestID == "" {
		c.requestID = uuid.NewString()
	}
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
	if c.preq, err = providerRequest(req, model); err != nil {
		return c, apierr.InvalidField(apierr.ReasonInvalidRequest, "tools", err.Error())
	}
	if v, ok := entry.Provider.(provider.RequestValidator); ok {
		if err := v.ValidateRequest(c.preq); err != nil {
			return c, err
		}
	}
	return c, nil
}

// attemptResult is what one successful attempt produced.
type attemptResult struct {
	text      strings.Builder
	toolCalls []*llmrelayv1.ToolCall
	finish    provider.FinishReason
	usage     provider.Usage
	// deltas counts the deltas this attempt sent to the client.
	deltas int
}

// runAttempt runs attempt n: it streams the provider's deltas to the client
// as they arrive and returns the assembled result, or the error that ended
// the attempt (with res holding what was sent before it).
func (c *call) runAttempt(ctx context.Context, n int) (*attemptResult, error) {
	res := &attemptResult{}
	preq := *c.preq
	preq.Attempt = n
	st, err := c.entry.Provider.Stream(ctx, &preq)
	if err != nil {
		return res, err
	}
	defer st.Close()
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		switch ev.Kind {
		case provider.EventText:
			if ev.Text == "" {
				continue
			}
			res.text.WriteString(ev.Text)
			if err := c.sendDelta(n, &llmrelayv1.Delta{Text: ev.Text}, res); err != nil {
				return res, err
			}
		case provider.EventToolCall:
			res.addToolCall(ev.ToolCall)
			d := &llmrelayv1.Delta{ToolCall: &llmrelayv1.ToolCallDelta{
				Index: uint32(ev.ToolCall.Index), Id: ev.ToolCall.ID, Name: ev.ToolCall.Name, ArgumentsDelta: ev.ToolCall.ArgumentsDelta,
			}}
			if err := c.sendDelta(n, d, res); err != nil {
				return res, err
			}
		case provider.EventUsage:
			res.usage = ev.Usage
		case provider.EventFinish:
			res.finish = ev.FinishReason
		}
	}
}

func (c *call) sendDelta(attempt int, d *llmrelayv1.Delta, res *attemptResult) error {
	if !c.firstDelta {
		c.firstDelta = true
		c.svc.metrics.FirstDelta(c.entry.Config.Name, time.Since(c.start))
	}
	res.deltas++
	return c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(attempt), Event: &llmrelayv1.GenerateEvent_Delta{Delta: d}})
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

// sendFinal sends the call's Final, built from the successful attempt.
func (c *call) sendFinal(res *attemptResult, attempts int) error {
	msg := &llmrelayv1.Message{Role: llmrelayv1.Role_ROLE_ASSISTANT, Content: res.text.String()}
	for _, tc := range res.toolCalls {
		if tc.GetId() != "" || tc.GetName() != "" || tc.GetArguments() != "" {
			msg.ToolCalls = append(msg.ToolCalls, tc)
		}
	}
	final := &llmrelayv1.Final{
		Message:      msg,
		FinishReason: finishReason(res.finish),
		Usage:        &llmrelayv1.Usage{InputTokens: uint64(res.usage.InputTokens), OutputTokens: uint64(res.usage.OutputTokens)},
		Attempts:     uint32(attempts),
		Provider:     c.entry.Config.Name,
		Model:        c.model,
	}
	return c.out.send(&llmrelayv1.GenerateEvent{Attempt: uint32(attempts), Event: &llmrelayv1.GenerateEvent_Final{Final: final}})
}

// fail logs the error with the request id and returns its status. The
// client sees only the public message.
func (s *Service) fail(ctx context.Context, c *call, err error) error {
	if ctx.Err() != nil {
		// Report why the context ended (client cancel, deadline, shutdown),
		// not the error the provider call returned because of it.
		err = context.Cause(ctx)
	}
	ae := apierr.FromError(err)
	if ae.Code == codes.Internal {
		s.log.Error("generate failed", "request_id", c.requestID, "error", err)
	} else {
		s.log.Debug("generate failed", "request_id", c.requestID, "code", ae.Code.String(), "reason", ae.Reason, "error", err)
	}
	name := ""
	if c.entry != nil {
		name = c.entry.Config.Name
	}
	s.metrics.CallDone(name, ae.Code.String(), 0)
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
