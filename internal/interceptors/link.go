// Package interceptors owns the links of llmrelay's gRPC door's
// interceptor chain. The concerns that are gRPC's own are decided here: the
// call record's start and panic recovery (go-grpc-middleware's recovery),
// the RPC's logging and metrics, server pushback. Everything else a link
// does is one step of the engine's admission (internal/engine: auth, key
// limits, deadline, request size, validation, model access, resolution,
// the provider queue), which the link only runs: it decides nothing
// itself.
//
// Each link is a Link: a unary and a stream interceptor that do the same
// thing, so the chain built from them (internal/server/chain.go) is the same
// for both kinds of call. Every error a link returns is an *apierr.Error
// (an ErrorInfo, domain "llmrelay", and a RetryInfo when waiting helps).
package interceptors

import (
	"context"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	middleware "github.com/grpc-ecosystem/go-grpc-middleware/v2"
	grpcmeta "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/internal/metrics"
)

// Link is one link of the interceptor chain.
type Link struct {
	// Name names the link in tests and in the chain's order check.
	Name   string
	Unary  grpc.UnaryServerInterceptor
	Stream grpc.StreamServerInterceptor
}

// Chain returns the server options that install links in order, the first
// outermost, for unary and stream calls alike.
func Chain(links ...Link) []grpc.ServerOption {
	unary := make([]grpc.UnaryServerInterceptor, len(links))
	stream := make([]grpc.StreamServerInterceptor, len(links))
	for i, l := range links {
		unary[i], stream[i] = l.Unary, l.Stream
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...)}
}

// Compose returns links composed into one unary and one stream
// interceptor, the first outermost: what Chain installs, as values, for a
// chain that is chosen per call (the server's runtime link runs the chain
// of the call's config).
func Compose(links ...Link) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	unary := make([]grpc.UnaryServerInterceptor, len(links))
	stream := make([]grpc.StreamServerInterceptor, len(links))
	for i, l := range links {
		unary[i], stream[i] = l.Unary, l.Stream
	}
	return composeUnary(unary), composeStream(stream)
}

// composeUnary chains interceptors the way gRPC's own
// ChainUnaryInterceptor does, with one closure per link and call.
func composeUnary(is []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	if len(is) == 0 {
		return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req)
		}
	}
	var next func(i int, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) grpc.UnaryHandler
	next = func(i int, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) grpc.UnaryHandler {
		if i == len(is)-1 {
			return h
		}
		return func(ctx context.Context, req any) (any, error) {
			return is[i+1](ctx, req, info, next(i+1, info, h))
		}
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return is[0](ctx, req, info, next(0, info, h))
	}
}

// composeStream composes the stream links once per method: the handlers
// that run link i+1 from link i are built at a method's first call and
// kept, so a call pays no closure per link (gRPC's ChainStreamInterceptor
// builds them per call). A method's chain is keyed by its name, its kind
// and its handler, which gRPC passes unchanged (the same func value) for
// every call of a registered method. At most maxComposed are kept; calls
// beyond (only possible with an unknown-service handler, which llmrelay
// does not install) are composed per call.
func composeStream(is []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	if len(is) == 0 {
		return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, ss)
		}
	}
	build := func(info *grpc.StreamServerInfo, h grpc.StreamHandler) grpc.StreamHandler {
		for i := len(is) - 1; i >= 0; i-- {
			link, next := is[i], h
			h = func(srv any, ss grpc.ServerStream) error { return link(srv, ss, info, next) }
		}
		return h
	}
	var (
		composed atomic.Pointer[map[chainKey]grpc.StreamHandler]
		mu       sync.Mutex // serialises adding to composed
	)
	composed.Store(&map[chainKey]grpc.StreamHandler{})
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		key := chainKey{method: info.FullMethod, client: info.IsClientStream, server: info.IsServerStream, handler: funcIdentity(h)}
		if c, ok := (*composed.Load())[key]; ok {
			return c(srv, ss)
		}
		// The chain keeps its own copy of info: gRPC's is the call's.
		c := build(&grpc.StreamServerInfo{FullMethod: info.FullMethod, IsClientStream: info.IsClientStream, IsServerStream: info.IsServerStream}, h)
		mu.Lock()
		if old := *composed.Load(); len(old) < maxComposed {
			m := make(map[chainKey]grpc.StreamHandler, len(old)+1)
			maps.Copy(m, old)
			m[key] = c
			composed.Store(&m)
		}
		mu.Unlock()
		return c(srv, ss)
	}
}

// chainKey identifies a method's composed chain.
type chainKey struct {
	method         string
	client, server bool
	handler        unsafe.Pointer // funcIdentity of the handler
}

// funcIdentity is the identity of a func value: the closure it points to
// (a function named at top level, as gRPC's generated handlers are, has one
// for the whole program). Two func values with the same identity run the
// same code on the same captured variables.
func funcIdentity(h grpc.StreamHandler) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&h))
}

// maxComposed bounds the methods whose chains composeStream keeps.
const maxComposed = 256

// APIOnly restricts l to llmrelay's own API: calls to the infrastructure
// services (grpc.health.v1, grpc.reflection.*) skip it, so probes and
// grpcurl work without a key and long-lived health watches get no deadline.
func APIOnly(l Link) Link {
	m := selector.MatchFunc(func(_ context.Context, c grpcmeta.CallMeta) bool { return !IsInfrastructure(c.Service) })
	return Link{
		Name:   l.Name,
		Unary:  selector.UnaryServerInterceptor(l.Unary, m),
		Stream: selector.StreamServerInterceptor(l.Stream, m),
	}
}

// IsInfrastructure reports whether service (a full service name such as
// "grpc.health.v1.Health") is gRPC health checking or server reflection.
func IsInfrastructure(service string) bool {
	return strings.HasPrefix(service, "grpc.health.v1.") || strings.HasPrefix(service, "grpc.reflection.")
}

// noop is a link that does nothing, for features that are switched off.
func noop(name string) Link {
	return Link{
		Name: name,
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, ss)
		},
	}
}

// requestCheck returns the link that runs check on the call's request once
// it has arrived (for a stream, on the handler's first receive) and fails
// the call with check's error.
func requestCheck(name string, check func(ctx context.Context, req any) error) Link {
	return Link{
		Name: name,
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(ctx, req); err != nil {
				return nil, err
			}
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			// One allocation per call: the stream carries the check and its
			// context, no closure over them.
			return h(srv, &peekStream{ServerStream: ss, check: check, ctx: ss.Context()})
		},
	}
}

// withContext returns ss with its context replaced by ctx.
func withContext(ss grpc.ServerStream, ctx context.Context) grpc.ServerStream {
	w := middleware.WrapServerStream(ss)
	w.WrappedContext = ctx
	return w
}

// peekStream hands the first request message the handler receives to
// onFirst, after every outer link has seen it, and fails that receive with
// onFirst's error. A server-streaming handler receives its one request this
// way, so links that need the request (the model) see it here.
type peekStream struct {
	grpc.ServerStream
	// onFirst, or else check with ctx, sees the first message.
	onFirst func(msg any) error
	check   func(ctx context.Context, msg any) error
	ctx     context.Context
	seen    bool
}

// RecvMsg implements grpc.ServerStream.
func (s *peekStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if s.seen {
		return nil
	}
	s.seen = true
	if s.onFirst == nil {
		return s.check(s.ctx, m)
	}
	return s.onFirst(m)
}

// The request fields the guard reads, as the generated getters.
type (
	requestIDGetter interface{ GetRequestId() string }
	metadataGetter  interface{ GetMetadata() map[string]string }
)

// Metrics records go-grpc-middleware's per-RPC server metrics (grpc_server_*,
// with the handling-time histogram) on m. A nil m records nothing.
func Metrics(m *metrics.Metrics) Link {
	if m == nil {
		return noop("metrics")
	}
	return Link{Name: "metrics", Unary: m.Server.UnaryServerInterceptor(), Stream: m.Server.StreamServerInterceptor()}
}
