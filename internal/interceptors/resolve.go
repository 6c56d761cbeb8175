package interceptors

import (
	"context"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// ResolveModel resolves the request's "<provider>/<model>" once, with
// providers.Resolve, the one place that parses it, and records the
// resolved target in the call record: the provider queue and the handler
// take it from there. A model that does not resolve fails here with
// INVALID_ARGUMENT, reason UNKNOWN_PROVIDER or UNKNOWN_MODEL and a
// BadRequest on `model`; the message names only what was asked for, never
// the configured providers or models. Requests without a model pass.
//
// It sits after ModelAccess, so a key that may not use a model learns
// nothing about whether it exists.
func ResolveModel(providers *provider.Set) Link {
	resolve := func(ctx context.Context, req any) error {
		model, ok := requestModel(req)
		if !ok {
			return nil
		}
		e, m, err := providers.Resolve(model)
		if err != nil {
			return apierr.FromError(err)
		}
		callinfo.From(ctx).SetTarget(provider.Target{Entry: e, Model: m})
		return nil
	}
	return requestCheck("resolve", resolve)
}
