package engine

import (
	"context"
	"errors"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/metrics"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// ReasonEmbeddingsNotSupported is the ErrorInfo reason of an Embed call
// whose model has a target whose provider cannot embed (it is not a
// provider.Embedder: the anthropic kind): FAILED_PRECONDITION, before any
// upstream request, with metadata provider, provider_kind and model.
// Stable: clients switch on it.
const ReasonEmbeddingsNotSupported = "EMBEDDINGS_NOT_SUPPORTED"

// Embed runs an embedding call admitted on ctx (Admit or
// AdmitAuthenticated with the Embed method: its targets resolved into the
// call record, its budget reserved, its provider slot held) and returns
// one embedding per input, in order. A route's timeout brings the call's
// deadline in, as for Generate.
//
// Every target must be a provider.Embedder (else FAILED_PRECONDITION,
// EMBEDDINGS_NOT_SUPPORTED, naming the first that is not) and take the
// request's provider_options under its operator's policy, both checked
// before any attempt. The attempts follow an attempt plan (retry.Plan,
// run by retry.Run) with the server's retry policy, its retry budgets and
// the targets' health, as a Generate's do: a transient failure is retried
// on its target, and a failure that is the target's moves the call to its
// next target; no hedging (a call streams nothing to race on). A request
// an adapter refuses before sending it (a *provider.FieldError) ends the
// call at once. The usage and cost of the attempts are recorded (metrics,
// the call record's log line) and settle the call's budget hold: what the
// providers reported, or, for an attempt that answered without a count
// (Gemini's batchEmbedContents), an estimate from the inputs' size
// (spend.Charge). A failed call returns its *apierr.Error.
func (s *Engine) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest) (*llmrelayv1.EmbedResponse, error) {
	info := callinfo.From(ctx)
	res, ok := info.Resolved()
	if !ok {
		return nil, apierr.FromError(errUnresolved)
	}
	ctx, cancel := routeDeadline(ctx, res)
	defer cancel()
	e := &embedCall{eng: s, ctx: ctx, info: info, route: res.Name}
	if res.Route == nil {
		e.route = ""
	}
	if id, ok := auth.FromContext(ctx); ok {
		e.labels.Key, e.labels.Team = id.Name, id.Team
	}
	e.labels.Route, e.labels.Interface, e.labels.Operation = e.route, info.Interface(), telemetry.OperationEmbeddings
	defer e.settle()
	e.preq = provider.EmbedRequest{Inputs: req.GetInputs(), Dimensions: int(req.GetDimensions())}
	if opts := req.GetProviderOptions(); opts != nil {
		e.preq.Options = opts.AsMap()
	}
	for _, in := range e.preq.Inputs {
		e.inputBytes += int64(len(in))
	}
	for _, t := range res.Targets {
		if _, ok := t.Entry.Provider.(provider.Embedder); !ok {
			return nil, cannotEmbed(res.Name, t)
		}
		if err := t.Entry.Config.CheckOptions(e.preq.Options); err != nil {
			return nil, apierr.FromError(err)
		}
	}
	deadline, _ := ctx.Deadline()
	e.plan = retry.NewPlan(retry.PlanConfig{
		Policy:    s.limits.Policy(retry.Request{}),
		Target:    res.Targets[0],
		Fallbacks: res.Targets[1:],
		Env:       &s.plans,
		Deadline:  deadline,
	})
	out, err := retry.Run(ctx, e.plan, s.timer, e)
	if err != nil {
		var f *retry.Failure
		if errors.As(err, &f) {
			return nil, apierr.FromFailure(f)
		}
		return nil, apierr.FromError(err)
	}
	info.RecordServed(out.target.Entry.Config.Name, out.target.Model)
	resp := &llmrelayv1.EmbedResponse{
		Embeddings: make([]*llmrelayv1.Embedding, len(out.emb.Vectors)),
		Provider:   out.target.Entry.Config.Name,
		Model:      out.target.Model,
		Route:      e.route,
		Usage:      &llmrelayv1.Usage{InputTokens: uint64(max(out.emb.Usage.InputTokens, 0))},
		Attempts:   uint32(out.attempt),
	}
	for i, v := range out.emb.Vectors {
		resp.Embeddings[i] = &llmrelayv1.Embedding{Values: v}
	}
	return resp, nil
}

// embedCall is one Embed call in flight, its attempt plan's Attempter.
type embedCall struct {
	eng        *Engine
	ctx        context.Context
	info       *callinfo.Info
	route      string
	labels     metrics.CallLabels
	preq       provider.EmbedRequest
	plan       *retry.Plan
	inputBytes int64
	// usage, cost and priced sum what the providers reported for every
	// attempt; estimated and estimatedCost what settlement counts on top
	// (spend.Charge) for an attempt answered without a count.
	usage, estimated    provider.Usage
	cost, estimatedCost float64
	priced              bool
}

// embedResult is what one attempt produced.
type embedResult struct {
	emb     *provider.Embeddings
	target  provider.Target
	attempt int
}

// Attempt implements retry.Attempter: one request to the attempt's target.
func (e *embedCall) Attempt(ctx context.Context, a *retry.Attempt) (embedResult, error) {
	a.Commit() // an attempt runs alone: Embed makes no hedges
	e.info.ObserveAttempt(a.N)
	preq := e.preq
	preq.Model, preq.Attempt = a.Target.Model, a.N
	emb, err := a.Target.Entry.Provider.(provider.Embedder).Embed(ctx, &preq)
	if err != nil {
		return embedResult{target: a.Target, attempt: a.N}, err
	}
	return embedResult{emb: emb, target: a.Target, attempt: a.N}, nil
}

// Settle implements retry.Attempter: it accounts for the attempt and, for
// a failure, asks the plan what follows.
func (e *embedCall) Settle(a *retry.Attempt, res embedResult, err error) (embedResult, error) {
	if err == nil {
		e.account(a.Target, res.emb)
		e.plan.Succeeded()
		return res, nil
	}
	var fe *provider.FieldError
	if errors.As(err, &fe) {
		return res, apierr.FromError(err)
	}
	if e.ctx.Err() != nil {
		err = context.Cause(e.ctx)
	}
	cl := retry.Classify(err)
	if cl.Provider != nil {
		e.eng.metrics.ProviderError(a.Target.Entry.Config.Name, cl.Class.String())
	}
	e.eng.log.Debug("embed attempt failed", "request_id", e.info.RequestID(), "attempt", a.N, "target", a.Target.String(), "error", err)
	step := e.plan.Failed(err, cl, false)
	e.eng.observeStep(e.info.RequestID(), e.route, a, step, false, err)
	return res, step.Continue()
}

// account records a successful attempt's usage and cost: what its
// provider reported, or the estimate of an answer without a count.
func (e *embedCall) account(t provider.Target, emb *provider.Embeddings) {
	l := withTarget(e.labels, t)
	u, _ := provider.Usage{InputTokens: emb.Usage.InputTokens}.Bounded()
	emb.Usage = u
	cost, priced := e.eng.prices.Cost(t.Entry.Config.Name, t.Model, u)
	e.usage.Add(u)
	e.cost += cost
	e.priced = e.priced || priced
	e.eng.metrics.EmbedUsage(l, u, cost, priced)
	est := spend.Charge(spend.Attempt{Usage: u, Reported: emb.Reported, Finished: true, Opened: true, InputBytes: e.inputBytes})
	if est == (provider.Usage{}) {
		return
	}
	cost, priced = e.eng.prices.Cost(t.Entry.Config.Name, t.Model, est)
	e.estimated.Add(est)
	e.estimatedCost += cost
	e.eng.metrics.Estimated(l, est, cost, priced)
}

// settle records the call's usage in its record (the log line) and
// settles its budget hold, however the call ended.
func (e *embedCall) settle() {
	e.info.RecordUsage(callinfo.Usage{Tokens: e.usage, Cost: e.cost, Priced: e.priced, Estimated: e.estimated, EstimatedCost: e.estimatedCost})
	h := e.info.Hold()
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), settleTimeout)
	defer cancel()
	s := spend.Spent{Usage: e.usage, Cost: e.cost + e.estimatedCost, Estimated: e.estimated, EstimatedCost: e.estimatedCost}
	s.Usage.Add(e.estimated)
	if err := h.Settle(ctx, s); err != nil {
		e.eng.log.Warn("the call's spend could not be settled", "request_id", e.info.RequestID(), "key", e.labels.Key, "error", err)
	}
}

// cannotEmbed is the error of an Embed call whose model has target t,
// whose provider cannot embed.
func cannotEmbed(model string, t provider.Target) error {
	kind := t.Entry.Config.Kind
	return &apierr.Error{
		Kind: apierr.FailedPrecondition, Reason: ReasonEmbeddingsNotSupported,
		Message: "model " + model + " cannot embed: its target " + t.String() + " is a provider of kind " + kind +
			", which has no embeddings API; providers of kind " + strings.Join(embedKinds, ", ") + " embed",
		Metadata: map[string]string{"model": model, "provider": t.Entry.Config.Name, "provider_kind": kind},
	}
}

// embedKinds lists the adapters that implement provider.Embedder, for
// cannotEmbed's message.
var embedKinds = []string{"openai", "gemini", "mock"}
