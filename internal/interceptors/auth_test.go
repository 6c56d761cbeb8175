package interceptors

import (
	"context"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/engine/callinfo"
)

const (
	fullKey   = "key-full"
	listKey   = "key-list-only"
	narrowKey = "key-narrow"
)

func authKeys(t *testing.T) *auth.Keyring {
	return testKeys(t,
		auth.KeyConfig{Name: "full", SHA256: auth.HashKey(fullKey), Scopes: []string{"generate", "models.list"}, Models: []string{"*"}},
		auth.KeyConfig{Name: "list", SHA256: auth.HashKey(listKey), Scopes: []string{"models.list"}, Models: []string{"*"}},
		auth.KeyConfig{Name: "narrow", SHA256: auth.HashKey(narrowKey), Scopes: []string{"generate"}, Models: []string{"mock/echo"}},
	)
}

func TestAuth(t *testing.T) {
	var seen string // the identity the handler saw, and the key in the call record
	svc := &fakeService{
		listModels: func(ctx context.Context, _ *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
			id, _ := auth.FromContext(ctx)
			seen = id.Name + "/" + callinfo.From(ctx).Snapshot().Key
			return &llmrelayv1.ListModelsResponse{}, nil
		},
	}
	c := serve(t, svc, Guard(discardLogger()), APIOnly(Auth(keyAuth(authKeys(t)))), Validate(newValidator(t)), ModelAccess())
	tests := []struct {
		name       string
		md         []string // authorization header values
		generate   bool
		model      string
		wantCode   codes.Code
		wantReason string
	}{
		{"no header", nil, false, "", codes.Unauthenticated, ReasonCredentialsMissing},
		{"no header, stream", nil, true, "", codes.Unauthenticated, ReasonCredentialsMissing},
		{"basic scheme", []string{"Basic Zm9vOmJhcg=="}, false, "", codes.Unauthenticated, ReasonCredentialsMalformed},
		{"bearer without key", []string{"Bearer"}, true, "", codes.Unauthenticated, ReasonCredentialsMalformed},
		{"two headers", []string{"Bearer " + fullKey, "Bearer " + listKey}, false, "", codes.Unauthenticated, ReasonCredentialsMalformed},
		{"unknown key", []string{"Bearer not-a-key"}, false, "", codes.Unauthenticated, ReasonAPIKeyUnknown},
		{"unknown key, stream", []string{"Bearer not-a-key"}, true, "", codes.Unauthenticated, ReasonAPIKeyUnknown},
		{"key without generate scope", []string{"Bearer " + listKey}, true, "mock/echo", codes.PermissionDenied, ReasonScopeMissing},
		{"key without models.list scope", []string{"Bearer " + narrowKey}, false, "", codes.PermissionDenied, ReasonScopeMissing},
		{"key without the model", []string{"Bearer " + narrowKey}, true, "mock/lorem", codes.PermissionDenied, ReasonModelNotAllowed},
		{"key with the model", []string{"Bearer " + narrowKey}, true, "mock/echo", codes.OK, ""},
		{"key with scope", []string{"Bearer " + fullKey}, false, "", codes.OK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			for _, v := range tt.md {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", v)
			}
			var err error
			if tt.generate {
				req := validRequest()
				if tt.model != "" {
					req.Model = tt.model
				}
				_, err = c.generate(ctx, req)
			} else {
				_, err = c.llm.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
			}
			if tt.wantCode == codes.OK {
				if err != nil {
					t.Fatalf("call failed: %v", err)
				}
				return
			}
			wantStatus(t, err, tt.wantCode, tt.wantReason)
		})
	}
	if seen != "full/full" {
		t.Errorf("handler saw identity/call-record key %q, want full/full", seen)
	}
}

func TestAuthSkipsHealth(t *testing.T) {
	c := serve(t, &fakeService{}, APIOnly(Auth(keyAuth(authKeys(t)))))
	resp, err := c.health.Check(testCtx(t), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without a key: %v, %v", resp, err)
	}
}

// TestModelAccessRoutesAndFallbacks: a key's allow-list applies to the
// name the caller used, a route by its name whatever its targets, and to
// each of the request's fallback_models.
func TestModelAccessRoutesAndFallbacks(t *testing.T) {
	const key = "key-routes"
	keys := testKeys(t, auth.KeyConfig{Name: "routes", SHA256: auth.HashKey(key), Scopes: []string{"generate"},
		Models: []string{"smart", "mock/echo"}})
	c := serve(t, &fakeService{}, Guard(discardLogger()), APIOnly(Auth(keyAuth(keys))), Validate(newValidator(t)), ModelAccess())
	tests := []struct {
		name      string
		model     string
		fallbacks []string
		wantModel string // the model refused; "" when allowed
		wantField string
	}{
		{"the allowed route", "smart", nil, "", ""},
		{"another route", "fast", nil, "fast", ""},
		{"a route is not a provider's model", "openai/smart", nil, "openai/smart", ""},
		{"allowed fallbacks", "smart", []string{"mock/echo", "smart"}, "", ""},
		{"a fallback the key may not use", "mock/echo", []string{"smart", "mock/lorem"}, "mock/lorem", "fallback_models[1]"},
		{"a fallback route the key may not use", "smart", []string{"fast"}, "fast", "fallback_models[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := validRequest()
			req.Model, req.FallbackModels = tt.model, tt.fallbacks
			_, err := c.generate(metadata.AppendToOutgoingContext(testCtx(t), "authorization", "Bearer "+key), req)
			if tt.wantModel == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			st := wantStatus(t, err, codes.PermissionDenied, ReasonModelNotAllowed)
			md := findDetail[*errdetails.ErrorInfo](st).GetMetadata()
			if md["model"] != tt.wantModel || md["field"] != tt.wantField {
				t.Errorf("ErrorInfo metadata %v, want model %q field %q", md, tt.wantModel, tt.wantField)
			}
		})
	}
}

func TestAuthOpenWithoutKeys(t *testing.T) {
	c := serve(t, &fakeService{}, APIOnly(Auth(keyAuth(testKeys(t)))), ModelAccess())
	if _, err := c.generate(testCtx(t), validRequest()); err != nil {
		t.Fatalf("no keys configured: %v", err)
	}
}

func TestIsInfrastructure(t *testing.T) {
	for svc, want := range map[string]bool{
		"grpc.health.v1.Health":                    true,
		"grpc.reflection.v1.ServerReflection":      true,
		"grpc.reflection.v1alpha.ServerReflection": true,
		"llmrelay.v1.LLMService":                   false,
		"grpc.healthy.Fake":                        false,
	} {
		if got := IsInfrastructure(svc); got != want {
			t.Errorf("IsInfrastructure(%q) = %v", svc, got)
		}
	}
}
