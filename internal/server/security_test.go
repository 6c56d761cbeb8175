package server_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// panicKind is a provider kind whose every attempt panics: a stand-in for a
// bug anywhere below the interceptor chain.
const panicKind = "test-panic"

type panicProvider struct{}

func (panicProvider) Stream(context.Context, *provider.Request) (provider.Stream, error) {
	panic("provider bug")
}

func init() {
	provider.Register(panicKind, func(provider.Config) (provider.Provider, error) { return panicProvider{}, nil })
}

// The keys of the secured test server.
const (
	keyFull     = "full-key-0123456789abcdef"
	keyListOnly = "list-key-0123456789abcdef"
	keyEchoOnly = "echo-key-0123456789abcdef"
	keySlow     = "slow-key-0123456789abcdef"
	keySingle   = "single-key-0123456789abcdef"
)

// securedConfig is the default config with API keys and three providers:
// the mock, a provider that panics, and a mock allowed one call at a time.
func securedConfig() *config.Config {
	cfg := config.Default()
	both := []string{"generate", "models.list"}
	key := func(name, secret string, scopes, models []string) auth.KeyConfig {
		return auth.KeyConfig{Name: name, SHA256: auth.HashKey(secret), Scopes: scopes, Models: models}
	}
	slow := key("slow", keySlow, both, []string{"*"})
	slow.RequestsPerSecond, slow.Burst = 0.001, 1
	single := key("single", keySingle, both, []string{"*"})
	single.MaxConcurrentStreams = 1
	cfg.Auth.Keys = []config.APIKey{
		key("full", keyFull, both, []string{"*"}),
		key("list-only", keyListOnly, []string{"models.list"}, []string{"*"}),
		key("echo-only", keyEchoOnly, both, []string{"mock/echo"}),
		slow,
		single,
	}
	cfg.Providers = []provider.Config{
		{Name: "mock", Kind: "mock"},
		{Name: "boom", Kind: panicKind, Models: []string{"any"}},
		{Name: "busy", Kind: "mock", MaxConcurrent: 1},
	}
	cfg.Limits.ProviderQueue = 0
	return cfg
}

func bearer(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}

// wantError fails the test unless err has code and an ErrorInfo in domain
// llmrelay with reason, and returns the status.
func wantError(t *testing.T, err error, code codes.Code, reason string) *status.Status {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code {
		t.Fatalf("error %v, want code %v", err, code)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.GetReason() != reason || info.GetDomain() != "llmrelay" {
				t.Fatalf("ErrorInfo %s/%s, want llmrelay/%s", info.GetDomain(), info.GetReason(), reason)
			}
			return st
		}
	}
	t.Fatalf("status %v carries no ErrorInfo", st)
	return nil
}

func detail[T any](st *status.Status) T {
	var zero T
	for _, d := range st.Details() {
		if v, ok := d.(T); ok {
			return v
		}
	}
	return zero
}

// stalled starts a Generate call that streams one delta and then stalls,
// and returns once that delta arrived: the call is then in flight on the
// server. Cancel ctx to end it.
func stalled(t *testing.T, ctx context.Context, c llmrelayv1.LLMServiceClient, model string) {
	t.Helper()
	req := withOptions(t, echoRequest("one two three"), map[string]any{"faults": []any{map[string]any{"stall_after": 1}}})
	req.Model = model
	stream, err := c.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatalf("stalled call: %v", err)
	}
}

func TestSecurityMatrix(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	generate := func(ctx context.Context, req *llmrelayv1.GenerateRequest) error {
		_, err := servertest.Collect(ctx, in.Client, req)
		return err
	}
	listModels := func(ctx context.Context) error {
		_, err := in.Client.ListModels(ctx, &llmrelayv1.ListModelsRequest{})
		return err
	}
	lorem := echoRequest("hi")
	lorem.Model = "mock/lorem"

	tests := []struct {
		name   string
		call   func(ctx context.Context) error
		code   codes.Code
		reason string
	}{
		{"no header", func(ctx context.Context) error { return generate(ctx, echoRequest("hi")) },
			codes.Unauthenticated, "CREDENTIALS_MISSING"},
		{"no header, unary", listModels,
			codes.Unauthenticated, "CREDENTIALS_MISSING"},
		{"malformed header", func(ctx context.Context) error {
			return generate(metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+keyFull), echoRequest("hi"))
		}, codes.Unauthenticated, "CREDENTIALS_MALFORMED"},
		{"bearer without a key", func(ctx context.Context) error {
			return listModels(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer"))
		}, codes.Unauthenticated, "CREDENTIALS_MALFORMED"},
		{"unknown key", func(ctx context.Context) error { return generate(bearer(ctx, "no-such-key"), echoRequest("hi")) },
			codes.Unauthenticated, "API_KEY_UNKNOWN"},
		{"key without the generate scope", func(ctx context.Context) error { return generate(bearer(ctx, keyListOnly), echoRequest("hi")) },
			codes.PermissionDenied, "SCOPE_MISSING"},
		{"key without the model", func(ctx context.Context) error { return generate(bearer(ctx, keyEchoOnly), lorem) },
			codes.PermissionDenied, "MODEL_NOT_ALLOWED"},
		{"panic below the chain", func(ctx context.Context) error {
			req := echoRequest("hi")
			req.Model = "boom/any"
			return generate(bearer(ctx, keyFull), req)
		}, codes.Internal, "INTERNAL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, tc.call(t.Context()), tc.code, tc.reason)
			// The server still serves the next call.
			if err := generate(bearer(t.Context(), keyFull), echoRequest("next")); err != nil {
				t.Fatalf("next call: %v", err)
			}
		})
	}
	t.Run("the key with the model and scope", func(t *testing.T) {
		if err := generate(bearer(t.Context(), keyEchoOnly), echoRequest("hi")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSecurityRateLimit(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	ctx := bearer(t.Context(), keySlow)
	if _, err := servertest.Collect(ctx, in.Client, echoRequest("first")); err != nil {
		t.Fatalf("the burst of 1: %v", err)
	}
	for name, call := range map[string]func() error{
		"stream": func() error { _, err := servertest.Collect(ctx, in.Client, echoRequest("second")); return err },
		"unary":  func() error { _, err := in.Client.ListModels(ctx, &llmrelayv1.ListModelsRequest{}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			st := wantError(t, call(), codes.ResourceExhausted, "RATE_LIMITED")
			ri := detail[*errdetails.RetryInfo](st)
			// One token per 1000s: the next one is due within 1000s.
			if d := ri.GetRetryDelay().AsDuration(); d <= 0 || d > 1000*time.Second {
				t.Errorf("RetryInfo delay %v, want within (0, 1000s]", d)
			}
		})
	}
	// Other keys are not affected.
	if _, err := servertest.Collect(bearer(t.Context(), keyFull), in.Client, echoRequest("other")); err != nil {
		t.Fatal(err)
	}
}

func TestSecurityConcurrentStreams(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	held, cancel := context.WithCancel(bearer(t.Context(), keySingle))
	stalled(t, held, in.Client, "mock/echo")
	_, err := servertest.Collect(bearer(t.Context(), keySingle), in.Client, echoRequest("second"))
	wantError(t, err, codes.ResourceExhausted, "TOO_MANY_STREAMS")
	cancel()
	// The slot frees once the first stream has ended on the server.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := servertest.Collect(bearer(t.Context(), keySingle), in.Client, echoRequest("third"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream slot not given back: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSecurityProviderQueue(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	held, cancel := context.WithCancel(bearer(t.Context(), keyFull))
	defer cancel()
	stalled(t, held, in.Client, "busy/echo")
	req := echoRequest("second")
	req.Model = "busy/echo"
	_, err := servertest.Collect(bearer(t.Context(), keyFull), in.Client, req)
	st := wantError(t, err, codes.Unavailable, "PROVIDER_BUSY")
	if detail[*errdetails.RetryInfo](st) == nil {
		t.Error("no RetryInfo")
	}
}

func TestSecurityValidation(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	tests := []struct {
		name   string
		mutate func(*llmrelayv1.GenerateRequest)
		field  string
	}{
		{"empty model", func(r *llmrelayv1.GenerateRequest) { r.Model = "" }, "model"},
		{"no messages", func(r *llmrelayv1.GenerateRequest) { r.Messages = nil }, "messages"},
		{"bad role", func(r *llmrelayv1.GenerateRequest) { r.Messages[0].Role = llmrelayv1.Role_ROLE_UNSPECIFIED }, "messages[0].role"},
		{"max_attempts 50", func(r *llmrelayv1.GenerateRequest) { r.Retry = &llmrelayv1.RetryPolicy{MaxAttempts: 50} }, "retry.max_attempts"},
		{"bad request_id", func(r *llmrelayv1.GenerateRequest) { r.RequestId = "not-a-uuid" }, "request_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := echoRequest("hi")
			tc.mutate(req)
			// The echo-only key: validation comes before the model check.
			_, err := servertest.Collect(bearer(t.Context(), keyEchoOnly), in.Client, req)
			st := wantError(t, err, codes.InvalidArgument, "INVALID_REQUEST")
			v := detail[*errdetails.BadRequest](st)
			if len(v.GetFieldViolations()) == 0 {
				t.Fatalf("no google.rpc.BadRequest in %v", st)
			}
			if got := v.GetFieldViolations()[0].GetField(); got != tc.field {
				t.Errorf("violation on %q, want %q", got, tc.field)
			}
		})
	}
}

func TestSecurityRequestTooLarge(t *testing.T) {
	cfg := securedConfig()
	cfg.Limits.MaxRequestBytes = 1 << 10
	in := servertest.Start(t, cfg)
	_, err := servertest.Collect(bearer(t.Context(), keyFull), in.Client, echoRequest(strings.Repeat("x", 2<<10)))
	wantError(t, err, codes.ResourceExhausted, "REQUEST_TOO_LARGE")
}

func TestSecurityHealthAndReflectionNeedNoKey(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	resp, err := healthpb.NewHealthClient(in.Conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: "llmrelay.v1.LLMService"})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without a key: %v, %v", resp.GetStatus(), err)
	}
	rc, err := rpb.NewServerReflectionClient(in.Conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.CloseSend()
	if err := rc.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	lr, err := rc.Recv()
	if err != nil {
		t.Fatalf("reflection without a key: %v", err)
	}
	if len(lr.GetListServicesResponse().GetService()) == 0 {
		t.Errorf("reflection listed no services: %v", lr)
	}
}

func TestSecurityListModelsByKey(t *testing.T) {
	in := servertest.Start(t, securedConfig())
	ids := func(key string) []string {
		resp, err := in.Client.ListModels(bearer(t.Context(), key), &llmrelayv1.ListModelsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range resp.GetModels() {
			out = append(out, m.GetId())
		}
		return out
	}
	if got := ids(keyEchoOnly); !slices.Equal(got, []string{"mock/echo"}) {
		t.Errorf("echo-only key lists %v, want [mock/echo]", got)
	}
	if got := ids(keyFull); !slices.Equal(got, []string{"boom/any", "busy/echo", "busy/lorem", "busy/think", "mock/echo", "mock/lorem", "mock/think"}) {
		t.Errorf("full key lists %v", got)
	}
}

// TestListModelsAnyModelProvider: a provider whose config lists no models
// accepts any model name, so ListModels cannot list its models; it lists
// the provider instead, with the key's patterns that reach it, and only
// to the keys that may use a model of it.
func TestListModelsAnyModelProvider(t *testing.T) {
	cfg := securedConfig()
	cfg.Providers = append(cfg.Providers, provider.Config{Name: "open", Kind: "openai", BaseURL: "http://127.0.0.1:9"})
	cfg.Auth.Keys = append(cfg.Auth.Keys, auth.KeyConfig{
		Name: "gpt", SHA256: auth.HashKey("gpt-key-0123456789abcdef"), Scopes: []string{"models.list"}, Models: []string{"mock/echo", "open/gpt-4o*"},
	})
	keyed := servertest.Start(t, cfg).Client
	list := func(ctx context.Context, c llmrelayv1.LLMServiceClient, providerName string) string {
		t.Helper()
		resp, err := c.ListModels(ctx, &llmrelayv1.ListModelsRequest{Provider: providerName})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range resp.GetAnyModelProviders() {
			out = append(out, p.GetProvider()+" "+p.GetProviderKind()+" "+strings.Join(p.GetKeyPatterns(), ","))
		}
		for _, m := range resp.GetModels() {
			if m.GetProvider() == "open" {
				t.Errorf("%s is listed as a model: it accepts any model name", m.GetId())
			}
		}
		return strings.Join(out, "; ")
	}
	for _, tt := range []struct {
		name, key, provider, want string
	}{
		{"a key that allows every model", keyFull, "", "open openai *"},
		{"a key that allows some of its models", "gpt-key-0123456789abcdef", "", "open openai open/gpt-4o*"},
		{"a key that allows none of its models", keyEchoOnly, "", ""},
		{"filtered to it", keyFull, "open", "open openai *"},
		{"filtered to another provider", keyFull, "mock", ""},
		{"filtered to it, a key that allows none of its models", keyEchoOnly, "open", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := list(bearer(t.Context(), tt.key), keyed, tt.provider); got != tt.want {
				t.Errorf("any-model providers %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("no API keys", func(t *testing.T) {
		cfg := config.Default()
		cfg.Providers = append(cfg.Providers, provider.Config{Name: "open", Kind: "openai", BaseURL: "http://127.0.0.1:9"})
		open := servertest.Start(t, cfg).Client
		if got, want := list(t.Context(), open, ""), "open openai "; got != want {
			t.Errorf("any-model providers %q, want %q", got, want)
		}
	})
}

func TestSecurityConcurrentCalls(t *testing.T) {
	// Many keys' calls at once share the limiters; keys without limits
	// are never refused. Run with -race.
	in := servertest.Start(t, securedConfig())
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			key := []string{keyFull, keyEchoOnly, keySlow, keySingle}[i%4]
			_, genErr := servertest.Collect(bearer(t.Context(), key), in.Client, echoRequest("x"))
			_, listErr := in.Client.ListModels(bearer(t.Context(), key), &llmrelayv1.ListModelsRequest{})
			if (key == keyFull || key == keyEchoOnly) && (genErr != nil || listErr != nil) {
				t.Errorf("unlimited key refused: %v, %v", genErr, listErr)
			}
		})
	}
	wg.Wait()
}
