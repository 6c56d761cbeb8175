package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/netip"
	"os"

	"google.golang.org/grpc"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/admin"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/hook"
	"github.com/llmrelay/llmrelay/internal/interceptors"
	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/retry"
	"github.com/llmrelay/llmrelay/internal/route"
	"github.com/llmrelay/llmrelay/internal/servertools"
	"github.com/llmrelay/llmrelay/internal/service"
)

// runtime is what one config makes of the server: its API keys, its
// providers and routes, the interceptor chain built from them and the
// LLMService that serves with them. A runtime is immutable once built.
//
// Each call reads the server's current runtime once, as it starts (the
// runtime link, outermost), and runs its whole chain and handler on it, to
// its end. A reload builds a new runtime from the new config and swaps it
// in: calls that start afterwards see the new keys and providers, calls in
// flight finish on the runtime they started with.
type runtime struct {
	cfg  *config.Config
	keys *auth.Keyring
	// apiKeys looks presented keys up among keys and the store's (admin
	// API); admin is the admin API's service on the runtime's keys, teams
	// and budgets (admin.go).
	apiKeys   *apikeys.Keys
	admin     *admin.Service
	providers *provider.Set
	routes    *route.Table
	hooks     hook.Chain
	queue     *engine.ProviderQueue
	// engine runs the calls; service is its gRPC door.
	engine  *engine.Engine
	service *service.Service
	// budget returns a provider's retry budget (nil func: off): the state
	// store's, shared by the replicas, or this process's own, budgets,
	// carried over from the runtime this one replaces.
	budget  func(provider string) retry.Throttle
	budgets *retry.Budgets
	// trusted are the proxies whose X-Forwarded-For or PROXY protocol
	// header names the client (auth.trusted_proxies).
	trusted []netip.Prefix
	// cert is the TLS certificate, nil without TLS; httpCert the HTTP
	// listener's (http_tls).
	cert, httpCert *tls.Certificate
	// tools is the tools section ready for the server's tool host, which
	// applies it when the runtime is swapped in.
	tools *servertools.Prepared
	// unary and stream are the interceptor chain, composed.
	unary  grpc.UnaryServerInterceptor
	stream grpc.StreamServerInterceptor
}

// newRuntime builds the runtime of cfg, a validated config. prev is the
// runtime it replaces (nil at start): calls of both count against the
// same provider slots where a provider's max_concurrent and queue did not
// change, and against the same retry budgets.
func (s *Server) newRuntime(cfg *config.Config, prev *runtime) (*runtime, error) {
	rt := &runtime{cfg: cfg}
	var err error
	if rt.keys, err = auth.NewKeyring(cfg.Auth.Keys); err != nil {
		return nil, err
	}
	if rt.providers, err = provider.NewSet(cfg.Providers); err != nil {
		return nil, cfg.Locate(err)
	}
	if err := s.buildRoutes(rt); err != nil {
		return nil, cfg.Locate(err)
	}
	maxConcurrent := make(map[string]int, len(cfg.Providers))
	for _, p := range cfg.Providers {
		maxConcurrent[p.Name] = p.MaxConcurrent
	}
	rt.queue = engine.NewProviderQueue(maxConcurrent, cfg.Limits.ProviderQueue, s.metrics)
	if prev != nil {
		rt.queue.Inherit(prev.queue)
	}
	if cfg.TLS.Enabled() {
		if rt.cert, err = cfg.TLS.Certificate("tls"); err != nil {
			return nil, err
		}
	}
	if cfg.HTTPTLS.Enabled() {
		if rt.httpCert, err = cfg.HTTPTLS.Certificate("http_tls"); err != nil {
			return nil, err
		}
	}
	s.retryBudgets(rt, prev)
	s.apiKeys(rt)
	scopes := cfg.ToolScopes()
	scopes.Stored = rt.apiKeys.StoredTools
	if rt.tools, err = servertools.Prepare(cfg.Tools, scopes, os.Getenv); err != nil {
		return nil, err
	}
	validator, err := s.validator()
	if err != nil {
		return nil, err
	}
	if rt.trusted, _, err = auth.ParseTrustedProxies(cfg.Auth.TrustedProxies); err != nil {
		return nil, err
	}
	authn := &engine.Authenticator{Throttle: s.throttle, TrustedProxies: rt.trusted, Metrics: s.metrics}
	budget := s.governance(rt, authn)
	rt.engine = engine.New(engine.Deps{
		Providers: rt.providers, Routes: rt.routes, Hooks: rt.hooks, Logger: s.log, Metrics: s.metrics, Timer: s.timer,
		Retry: cfg.Retry.Limits(cfg.Deadlines.StallSettings), Schema: cfg.StructuredOutput,
		Output: cfg.Limits.Output(), Heartbeat: cfg.Heartbeat, Streaming: cfg.Streaming,
		Prices: cfg.Pricing.Prices(), CaptureContent: cfg.Tracing.CaptureContent,
		Budget: rt.budget, Resume: s.resume, Latencies: s.latencies, Tools: s.tools, KeyCalls: s.keyCalls,
		Admission: &engine.Admission{
			Auth: authn,
			// Resume is restart-only: the start-up config's is the one in force.
			Limits:    engine.NewKeyLimits(s.store, s.metrics).WithResumeReaders(s.store, s.cfg.Resume.MaxReadersPerKey).WithAttach(s.resume),
			Deadlines: cfg.Deadlines.Deadlines,
			Size:      engine.RequestSize(cfg.Limits.MaxRequestBytes),
			Validator: engine.Validator{V: validator},
			Resolver:  engine.Resolver{Routes: rt.routes},
			Attach:    engine.Attach{Resume: s.resume},
			Budget:    budget,
			Queue:     rt.queue,
		},
	})
	rt.service = service.New(rt.engine)
	links, err := s.interceptorChain(rt)
	if err != nil {
		return nil, err
	}
	rt.unary, rt.stream = interceptors.Compose(links...)
	return rt, nil
}

// runtimeUnary and runtimeStream are the server's one installed
// interceptor: they read the current runtime once for the call and run its
// chain. An LLMService call is handed to the runtime's Service: a stream
// handler gets it as its srv, a unary one finds it in the context.
func (s *Server) runtimeUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	rt := s.current.Load()
	switch info.Server.(type) {
	case llmService, adminService:
		ctx = context.WithValue(ctx, runtimeKey{}, rt)
	}
	return rt.unary(ctx, req, info, h)
}

// runtimeStream hands a stream of LLMService, registered client-streaming
// (llmServiceDesc), on as the proto declares it: gRPC's stream checked for
// its one request (oneRequestStream), info a server stream's
// (oneRequest).
func (s *Server) runtimeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	rt := s.current.Load()
	if _, ok := srv.(llmService); ok {
		srv = rt.service
		if contract := oneRequest[info.FullMethod]; contract != nil {
			ss, info = &oneRequestStream{ServerStream: ss}, contract
		}
	}
	return rt.stream(srv, ss, info, h)
}

type runtimeKey struct{}

// llmService is the LLMService registered with gRPC. It serves nothing
// itself: the runtime link hands each call to the Service of the call's
// runtime. It embeds the Unsafe interface, so that an RPC added to the
// proto fails to compile here until it is dispatched too.
type llmService struct {
	llmrelayv1.UnsafeLLMServiceServer
}

// ListModels implements llmrelayv1.LLMServiceServer.
func (llmService) ListModels(ctx context.Context, req *llmrelayv1.ListModelsRequest) (*llmrelayv1.ListModelsResponse, error) {
	rt, ok := ctx.Value(runtimeKey{}).(*runtime)
	if !ok {
		return nil, apierr.FromError(errNotDispatched)
	}
	return rt.service.ListModels(ctx, req)
}

// ListTools implements llmrelayv1.LLMServiceServer.
func (llmService) ListTools(ctx context.Context, req *llmrelayv1.ListToolsRequest) (*llmrelayv1.ListToolsResponse, error) {
	rt, ok := ctx.Value(runtimeKey{}).(*runtime)
	if !ok {
		return nil, apierr.FromError(errNotDispatched)
	}
	return rt.service.ListTools(ctx, req)
}

// Embed implements llmrelayv1.LLMServiceServer.
func (llmService) Embed(ctx context.Context, req *llmrelayv1.EmbedRequest) (*llmrelayv1.EmbedResponse, error) {
	rt, ok := ctx.Value(runtimeKey{}).(*runtime)
	if !ok {
		return nil, apierr.FromError(errNotDispatched)
	}
	return rt.service.Embed(ctx, req)
}

// Generate implements llmrelayv1.LLMServiceServer; the runtime link
// replaces it with the runtime's Service, so it only runs if that link is
// missing.
func (llmService) Generate(*llmrelayv1.GenerateRequest, grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	return apierr.FromError(errNotDispatched)
}

// Resume implements llmrelayv1.LLMServiceServer; like Generate, the
// runtime link hands it to the runtime's Service.
func (llmService) Resume(*llmrelayv1.ResumeRequest, grpc.ServerStreamingServer[llmrelayv1.GenerateEvent]) error {
	return apierr.FromError(errNotDispatched)
}

// errNotDispatched is the internal error of a call that reached the
// registered LLMService without the runtime link: the server is wired
// wrong.
var errNotDispatched = fmt.Errorf("server: the call was not handed to a runtime (the runtime link did not run)")
