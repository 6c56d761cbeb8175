package engine

import (
	"context"
	"strings"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
)

// ReasonTokenCountingNotSupported is the ErrorInfo reason of a token
// count (CountTokens) whose model has no target whose provider can count
// (provider.TokenCounter): UNIMPLEMENTED. Stable: clients switch on it.
const ReasonTokenCountingNotSupported = "TOKEN_COUNTING_NOT_SUPPORTED"

// AdmitCount admits a token count (CountTokens) of a caller that a door
// authenticated as for a generation (Auth.Authenticate with the Generate
// method, so a count needs the scope a generation needs), for req, the
// Generate request whose input is counted. It runs the steps of
// AdmitAuthenticated that decide whether this caller may send this request
// and where it goes: the key's rate (a rate token, as every call takes; no
// stream slot, since a count streams nothing), the deadline, the request's
// size, validation, the key's model access and resolution. It takes no
// budget reservation (a count generates nothing, and providers charge
// nothing for it) and no provider slot (max_concurrent bounds
// generations). ctx must carry a call record (callinfo.NewContext); an
// error is the *apierr.Error of the step that refused the count, with
// nothing held.
func (a *Admission) AdmitCount(ctx context.Context, req *llmrelayv1.GenerateRequest) (context.Context, func(), error) {
	callinfo.From(ctx).RecordRequest(req.GetModel(), req.GetRequestId())
	r, err := a.Limits.admitRate(ctx)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := a.Deadlines.Bound(ctx)
	release := func() { cancel(); r() }
	for _, check := range []func(context.Context, any) error{a.Size.Check, a.Validator.Check, AllowModels, a.Resolver.Resolve} {
		if err := check(ctx, req); err != nil {
			release()
			return nil, nil, err
		}
	}
	return ctx, release, nil
}

// admitRate takes a rate token of the caller's key (auth.FromContext), and
// no stream slot.
func (kl *KeyLimits) admitRate(ctx context.Context) (release func(), err error) {
	id, ok := auth.FromContext(ctx)
	if kl == nil || !ok {
		return func() {}, nil
	}
	return kl.admit(ctx, id, "")
}

// TokenCount is the answer of CountTokens.
type TokenCount struct {
	// InputTokens is the provider's count of the request's input.
	InputTokens int64
	// Target is the target that counted.
	Target provider.Target
}

// CountTokens counts the input tokens of req at the first of the call's
// targets (resolved by AdmitCount, which ran on ctx, in the order a
// generation's attempts would take them) whose provider can count
// (provider.TokenCounter), else at the first of the route's targets that
// resolution skipped as ejected and can count: the request as that target would be sent it,
// the hooks before the first attempt applied (a route's system prompt and
// messages are counted), without the server tools' definitions. A count
// is one request to one target: it is not retried, falls back to no other
// target, and counts in no target's health or retry budget; a route's
// timeout bounds it as it bounds a generation (routeDeadline); its failure
// is a generation's whose one attempt failed so (apierr.FromFailure).
// When no target can count it is UNIMPLEMENTED, reason
// TOKEN_COUNTING_NOT_SUPPORTED, naming the model and its providers.
func (s *Engine) CountTokens(ctx context.Context, req *llmrelayv1.GenerateRequest) (TokenCount, error) {
	res, ok := callinfo.From(ctx).Resolved()
	if !ok {
		return TokenCount{}, apierr.FromError(errUnresolved)
	}
	target, counter := firstCounter(res.Targets)
	if counter == nil && res.Route != nil {
		// The route's targets resolution skipped, ejected: a count is
		// one request that counts in no target's health, and the model
		// can count all the same.
		all := make([]provider.Target, len(res.Route.Targets))
		for i, t := range res.Route.Targets {
			all[i] = t.Target
		}
		if target, counter = firstCounter(all); counter == nil {
			return TokenCount{}, cannotCount(res.Name, all)
		}
	}
	if counter == nil {
		return TokenCount{}, cannotCount(res.Name, res.Targets)
	}
	ctx, cancel := routeDeadline(ctx, res)
	defer cancel()
	hc := &hook.Call{Model: res.Name, Route: res.Route, Request: req}
	if id, ok := auth.FromContext(ctx); ok {
		hc.Key = id.Name
	}
	if err := s.hooks.Before(ctx, hc); err != nil {
		return TokenCount{}, apierr.FromError(err)
	}
	req = hc.Request
	preq, err := providerRequest(req, target.Model, responseFormat(req))
	if err == nil {
		err = target.Entry.Config.CheckOptions(preq.Options)
	}
	if v, ok := target.Entry.Provider.(provider.RequestValidator); ok && err == nil {
		err = v.ValidateRequest(preq)
	}
	if err != nil {
		return TokenCount{}, apierr.FromError(err)
	}
	preq.Attempt = 1
	n, err := counter.CountTokens(ctx, preq)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		c := retry.Classify(err)
		stop := retry.StopNotRetryable
		if c.Class.Transient() {
			stop = retry.StopAttempts // a count makes one attempt
		}
		f := &retry.Failure{Err: err, Class: c, Stop: stop, Attempts: 1, Provider: target.Entry.Config.Name}
		s.log.Debug("count tokens failed", "request_id", callinfo.From(ctx).RequestID(), "target", target.String(), "error", err)
		return TokenCount{}, apierr.FromFailure(f)
	}
	callinfo.From(ctx).RecordServed(target.Entry.Config.Name, target.Model)
	return TokenCount{InputTokens: n, Target: target}, nil
}

// firstCounter returns the first of targets whose provider can count, and
// its counter: nil when none can.
func firstCounter(targets []provider.Target) (provider.Target, provider.TokenCounter) {
	for _, t := range targets {
		if c, ok := t.Entry.Provider.(provider.TokenCounter); ok {
			return t, c
		}
	}
	return provider.Target{}, nil
}

// cannotCount is the error of a count of model none of whose targets can
// count: it names the model, its targets and their providers' kinds.
func cannotCount(model string, targets []provider.Target) error {
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		names = append(names, t.String()+" (kind "+t.Entry.Config.Kind+")")
	}
	whose := "the provider of its target " + names[0] + " does"
	if len(names) > 1 {
		whose = "the providers of its targets " + strings.Join(names, ", ") + " do"
	}
	return &apierr.Error{
		Kind: apierr.Unimplemented, Reason: ReasonTokenCountingNotSupported,
		Message: "model " + model + " cannot count tokens: " + whose + " not count them (providers of kind anthropic do); " +
			"a reply's usage reports the input tokens its request took",
		Metadata: map[string]string{"model": model},
	}
}
