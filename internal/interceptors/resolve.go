package interceptors

import (
	"context"

	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
	"github.com/llmrelay/llmrelay/internal/route"
)

// ResolveModel resolves the request's model (a route's name or
// "<provider>/<model>") and its fallback_models once, with routes.Resolve,
// the one place that resolves them (it has provider.Set.Resolve parse
// "<provider>/<model>"), and records the call's targets in the call
// record: the provider queue and the handler take them from there. A name
// that does not resolve fails here with INVALID_ARGUMENT, reason
// UNKNOWN_PROVIDER or UNKNOWN_MODEL and a BadRequest on its field; the
// message names only what was asked for, never the configured providers,
// models or routes. Requests without a model pass.
//
// It sits after ModelAccess, so a key that may not use a model learns
// nothing about whether it exists.
func ResolveModel(routes *route.Table) Link {
	resolve := func(ctx context.Context, req any) error {
		model, ok := requestModel(req)
		if !ok {
			return nil
		}
		res, err := routes.Resolve(ctx, model, requestFallbacks(req))
		if err != nil {
			return apierr.FromError(err)
		}
		callinfo.From(ctx).SetResolved(res)
		return nil
	}
	return requestCheck("resolve", resolve)
}
