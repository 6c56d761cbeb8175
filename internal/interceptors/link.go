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
	"slices"
	"strings"
	"time"

	grpcmeta "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"

	"github.com/llmrelay/llmrelay/internal/metrics"
)

// Link is one link of the interceptor chain: what it does to a unary call
// (Unary, an interceptor that wraps the next) and to a stream call (Steps,
// run by the flat chain: see flat.go).
type Link struct {
	// Name names the link in tests and in the chain's order check.
	Name  string
	Unary grpc.UnaryServerInterceptor
	Steps Steps
	// Stream, when set instead of Steps (Skip aside), is the link as a
	// gRPC stream interceptor (another library's, say): the flat chain
	// nests it, running the links after it and the handler inside it.
	Stream grpc.StreamServerInterceptor
}

// Chain returns the server options that install links in order, the first
// outermost, for unary and stream calls alike.
func Chain(links ...Link) []grpc.ServerOption {
	unary, stream := Compose(links...)
	return []grpc.ServerOption{grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(stream)}
}

// Compose returns links composed into one unary and one stream
// interceptor, the first outermost: what Chain installs, as values, for a
// chain that is chosen per call (the server's runtime link runs the chain
// of the call's config). Unary calls go through the links' interceptors
// nested as gRPC's ChainUnaryInterceptor nests them; stream calls through
// the flat chain (flat.go).
func Compose(links ...Link) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	unary := make([]grpc.UnaryServerInterceptor, len(links))
	for i, l := range links {
		unary[i] = l.Unary
	}
	return composeUnary(unary), composeFlat(slices.Clone(links))
}

// StreamInterceptor returns l alone as a stream interceptor (a flat chain
// of one link).
func (l Link) StreamInterceptor() grpc.StreamServerInterceptor {
	return composeFlat([]Link{l})
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

// APIOnly restricts l to llmrelay's own API: calls to the infrastructure
// services (grpc.health.v1, grpc.reflection.*) skip it, so probes and
// grpcurl work without a key and long-lived health watches get no deadline.
func APIOnly(l Link) Link {
	m := selector.MatchFunc(func(_ context.Context, c grpcmeta.CallMeta) bool { return !IsInfrastructure(c.Service) })
	l.Unary = selector.UnaryServerInterceptor(l.Unary, m)
	l.Steps.Skip = orSkip(l.Steps.Skip, func(service string) bool { return IsInfrastructure(service + "/") })
	return l
}

// orSkip returns a Skip that skips what either skips.
func orSkip(a, b func(string) bool) func(string) bool {
	if a == nil {
		return b
	}
	return func(s string) bool { return a(s) || b(s) }
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
	}
}

// requestCheck returns the link that runs check on the call's request once
// it has arrived (for a stream, on the handler's first receive) and fails
// the call with check's error.
func requestCheck(name string, check func(ctx context.Context, req any) error, cpuOnly bool) Link {
	var rc RequestCheck = CheckFunc(check)
	if cpuOnly {
		rc = CPUOnly(rc)
	}
	return checkLink(name, check, rc)
}

// shallowCheck is requestCheck for a CPUOnly check that answers most
// requests in little stack with shallow (a ShallowCheck): on a stream,
// shallow runs on the handler's goroutine and check on offstack's workers
// for what it does not answer.
func shallowCheck(name string, check func(ctx context.Context, req any) error, shallow func(ctx context.Context, req any) (bool, error)) Link {
	return checkLink(name, check, CPUOnly(shallowFuncs{CheckFunc(check), shallow}))
}

// shallowFuncs is a check and its shallow answer as a ShallowCheck.
type shallowFuncs struct {
	CheckFunc
	shallow func(ctx context.Context, req any) (bool, error)
}

// CheckShallow implements ShallowCheck.
func (f shallowFuncs) CheckShallow(ctx context.Context, req any) (bool, error) {
	return f.shallow(ctx, req)
}

// checkLink returns the link that runs check on a unary call's request and
// adds rc, the same check, to a stream call's request checks.
func checkLink(name string, check func(ctx context.Context, req any) error, rc RequestCheck) Link {
	return Link{
		Name: name,
		Unary: func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(ctx, req); err != nil {
				return nil, err
			}
			return h(ctx, req)
		},
		Steps: Steps{Enter: func(c *Call) error {
			c.OnRequest(rc)
			return nil
		}},
	}
}

// The request fields the guard reads, as the generated getters.
type (
	requestIDGetter interface{ GetRequestId() string }
	metadataGetter  interface{ GetMetadata() map[string]string }
)

// Metrics records go-grpc-middleware's per-RPC server metrics (grpc_server_*,
// with the handling-time histogram) on m: its interceptor for unary calls
// and, for stream calls, the same reporter (started, each message received
// and sent, handled with its code and handling time). A nil m records
// nothing.
func Metrics(m *metrics.Metrics) Link {
	if m == nil {
		return noop("metrics")
	}
	return Link{
		Name:  "metrics",
		Unary: m.Server.UnaryServerInterceptor(),
		Steps: Steps{
			Enter: func(c *Call) error {
				r, _ := m.Server.ServerReporter(c.Context(), grpcmeta.NewServerCallMeta(c.Info.FullMethod, c.Info, nil))
				ms := &monitoredStream{ServerStream: c.Stream(), reporter: r, start: time.Now()}
				c.Wrap(ms)
				c.Set(ms)
				return nil
			},
			Exit: func(c *Call, err error) error {
				ms := c.Value().(*monitoredStream)
				ms.reporter.PostCall(err, time.Since(ms.start))
				return err
			},
		},
	}
}

// monitoredStream reports each message of a stream call to the call's
// metrics reporter. (The reporter counts messages; it has no use for how
// long each took, so that is not measured.)
type monitoredStream struct {
	grpc.ServerStream
	reporter grpcmeta.Reporter
	start    time.Time
}

// SendMsg implements grpc.ServerStream.
func (s *monitoredStream) SendMsg(m any) error {
	err := s.ServerStream.SendMsg(m)
	s.reporter.PostMsgSend(m, err, 0)
	return err
}

// RecvMsg implements grpc.ServerStream.
func (s *monitoredStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	s.reporter.PostMsgReceive(m, err, 0)
	return err
}
