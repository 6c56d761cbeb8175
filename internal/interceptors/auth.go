package interceptors

import (
	"context"
	"errors"
	"strconv"
	"strings"

	grpcauth "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/interceptors/callinfo"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// methodScopes maps each API method to the scope it needs. A method missing
// here is denied to every key, so a new RPC is closed until it is listed.
var methodScopes = map[string]auth.Scope{
	llmrelayv1.LLMService_Generate_FullMethodName:   auth.ScopeGenerate,
	llmrelayv1.LLMService_ListModels_FullMethodName: auth.ScopeModelsList,
	// Resuming a call is reading the rest of a Generate.
	llmrelayv1.LLMService_Resume_FullMethodName: auth.ScopeGenerate,
}

// Auth authenticates every call with go-grpc-middleware's auth interceptor:
// the call's `authorization: Bearer <key>` must name a configured key
// (UNAUTHENTICATED otherwise: CREDENTIALS_MISSING, CREDENTIALS_MALFORMED or
// API_KEY_UNKNOWN), and the key must hold the method's scope
// (PERMISSION_DENIED, SCOPE_MISSING). The key's identity goes into the
// context (auth.FromContext) and its name into the call record.
//
// With no keys configured Auth does nothing: the server then only listens
// on loopback (see internal/config). Wrap it in APIOnly so health and
// reflection need no key.
func Auth(keys *auth.Keyring) Link {
	if keys.Len() == 0 {
		// No keys: every call passes.
		pass := func(ctx context.Context) (context.Context, error) {
			callinfo.From(ctx).Authenticated()
			return ctx, nil
		}
		return Link{Name: "auth", Unary: grpcauth.UnaryServerInterceptor(pass), Stream: grpcauth.StreamServerInterceptor(pass)}
	}
	authFunc := func(ctx context.Context) (context.Context, error) {
		id, err := keys.Authenticate(metadata.ValueFromIncomingContext(ctx, "authorization"))
		if err != nil {
			return nil, authError(err)
		}
		ci := callinfo.From(ctx)
		ci.SetKey(id.Name)
		ci.Authenticated()
		method, _ := grpc.Method(ctx)
		scope, known := methodScopes[method]
		if !known {
			return nil, statusError(codes.PermissionDenied, ReasonScopeMissing,
				"no scope opens "+method+" to API keys", map[string]string{"key": id.Name, "method": method}, 0)
		}
		if !id.HasScope(scope) {
			return nil, statusError(codes.PermissionDenied, ReasonScopeMissing,
				"API key "+id.Name+" lacks scope "+string(scope)+" for "+method,
				map[string]string{"key": id.Name, "scope": string(scope), "method": method}, 0)
		}
		return auth.NewContext(ctx, id), nil
	}
	return Link{
		Name:   "auth",
		Unary:  grpcauth.UnaryServerInterceptor(authFunc),
		Stream: grpcauth.StreamServerInterceptor(authFunc),
	}
}

// authError turns an auth.Keyring error into UNAUTHENTICATED. The message
// never contains the presented key.
func authError(err error) error {
	reason, msg := ReasonAPIKeyUnknown, "unknown API key"
	switch {
	case errors.Is(err, auth.ErrNoCredentials):
		reason, msg = ReasonCredentialsMissing, `missing credentials: send "authorization: Bearer <key>"`
	case errors.Is(err, auth.ErrMalformedCredentials):
		reason, msg = ReasonCredentialsMalformed, err.Error()
	}
	return statusError(codes.Unauthenticated, reason, msg, nil, 0)
}

// ModelAccess checks, once the request has arrived, that the caller's key
// may use the model it names and each of its fallback_models
// (PERMISSION_DENIED, MODEL_NOT_ALLOWED): a route is allowed by its name,
// whatever its targets are, and a "<provider>/<model>" by the key's
// patterns on the provider and model it resolves to (provider.SplitModel,
// auth.MatchPattern). It sits after validation, so a malformed model is
// INVALID_ARGUMENT, not a permission problem. Calls without an identity
// (no keys configured) and requests without a model pass.
func ModelAccess() Link {
	check := func(ctx context.Context, req any) error {
		id, ok := auth.FromContext(ctx)
		if !ok {
			return nil
		}
		model, ok := requestModel(req)
		if !ok {
			return nil
		}
		if !allowed(id, model) {
			return statusError(codes.PermissionDenied, ReasonModelNotAllowed,
				"API key "+id.Name+" may not use model "+model,
				map[string]string{"key": id.Name, "model": model}, 0)
		}
		for i, f := range requestFallbacks(req) {
			if !allowed(id, f) {
				field := "fallback_models[" + strconv.Itoa(i) + "]"
				return statusError(codes.PermissionDenied, ReasonModelNotAllowed,
					"API key "+id.Name+" may not use model "+f+" ("+field+")",
					map[string]string{"key": id.Name, "model": f, "field": field}, 0)
			}
		}
		return nil
	}
	return requestCheck("model_access", check)
}

// allowed reports whether the key may use the model a request names: a
// route by its name (which has no "/"), a provider's model by
// "<provider>/<model>" (a name with an empty part by none).
func allowed(id *auth.Identity, name string) bool {
	p, m, ok := provider.SplitModel(name)
	if !strings.Contains(name, "/") {
		return id.AllowsRoute(name)
	}
	// Split where the provider set splits it, so the patterns match what
	// the request resolves to.
	return ok && id.AllowsModel(p, m)
}
