package provider

import "context"

type clientBetasKey struct{}

// WithClientBetas returns ctx carrying the names of the API betas the
// call's client asked for: the anthropic-beta header an Anthropic SDK sends
// to the Anthropic-compatible door. They are the client's wish for one
// API, not a setting of the call: an adapter whose API has betas by these
// names (anthropic) reads them with ClientBetas and decides what to send;
// every other adapter ignores them, so a route may fall back to any kind.
func WithClientBetas(ctx context.Context, names []string) context.Context {
	if len(names) == 0 {
		return ctx
	}
	return context.WithValue(ctx, clientBetasKey{}, names)
}

// ClientBetas returns the beta names WithClientBetas put in ctx, nil for
// none. The caller must not change the slice.
func ClientBetas(ctx context.Context) []string {
	names, _ := ctx.Value(clientBetasKey{}).([]string)
	return names
}
