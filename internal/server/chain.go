package server

import (
	"crypto/tls"
	"fmt"

	"buf.build/go/protovalidate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/llmrelay/llmrelay/internal/interceptors"
)

// interceptorChain returns the interceptor chain of runtime rt, outermost
// first: the links that depend on the config (keys, limits, providers,
// routes) are built from rt's. interceptors.Compose makes one interceptor of them
// for unary and stream calls alike, which the runtime link runs for each
// call that starts on rt. TestChainOrder pins the order.
func (s *Server) interceptorChain(rt *runtime) ([]interceptors.Link, error) {
	adm := rt.engine.Admission()
	return []interceptors.Link{
		// Outermost: starts the call record (request id, key, model, the
		// resolved targets, attempts) that the links, the handler and the
		// log lines below share, and guards the links themselves against
		// a panic.
		interceptors.Guard(s.log),
		// Pushback right inside the guard, outside every link that can
		// fail a call, so that every failure tells a client's retry policy
		// whether to retry it (gRFC A6's grpc-retry-pushback-ms).
		interceptors.APIOnly(interceptors.Pushback()),
		// Metrics before every link that can refuse a call, so refusals are
		// counted with their code and handling time.
		interceptors.Metrics(s.metrics),
		// Logging before auth, so refused calls are logged too; the key and
		// model reach its lines through the call record.
		interceptors.Logging(s.log),
		// From here to the provider queue, the engine's admission, one link
		// per step in engine.Order (TestChainOrder checks it).
		// Auth before anything reads the request: the key first, then the
		// failed-authentication throttle per client address, which logs
		// failures per address and interval (the logging link leaves them
		// out). Health and reflection need no key.
		interceptors.APIOnly(interceptors.Auth(adm.Auth)),
		// Per-key rate and stream limits right after auth, when the call
		// starts: unary and stream calls are counted alike (a stream's
		// request is only read later), and floods of invalid requests are
		// throttled too. Kept in the state store, so they hold across
		// replicas when it is shared; a key's Resume streams too.
		interceptors.KeyLimits(adm.Limits),
		// Deadline before anything that waits, so every wait and provider
		// call below is bounded. Not for health watches.
		interceptors.APIOnly(interceptors.Deadline(adm.Deadlines.Default, adm.Deadlines.Max)),
		// Size before validation, so oversized requests are not walked.
		interceptors.RequestSize(int(adm.Size)),
		// Validation before anything interprets the request's fields.
		interceptors.Validate(adm.Validator.V),
		// Model access after validation, so a malformed model is
		// INVALID_ARGUMENT rather than a permission problem.
		interceptors.ModelAccess(),
		// Model resolution after model access, so a key learns nothing of
		// models it may not use; the one place the model and its
		// fallback_models become the call's targets.
		interceptors.ResolveModel(adm.Resolver.Routes),
		// Attach after resolution and before the steps that charge a
		// call for what it runs: a repeated Generate of a resumable call
		// still kept runs nothing, and is charged no budget and no
		// provider slot; one store read, only for requests that name their
		// id and are resumable (they ask to be, or their route's default).
		interceptors.Attach(adm.Attach),
		// Budgets after resolution, which prices the reservation at the
		// call's targets, and before the provider queue, so a call its
		// budget refuses waits for no slot; one store round trip, only for
		// keys and teams with budgets.
		interceptors.Budget(adm.Budget),
		// The provider queue last of the checks: only calls that will be
		// served wait for a slot of their resolved provider, within their
		// deadline.
		interceptors.ProviderQueue(adm.Queue),
		// Cuts off calls still running when the shutdown grace period ends.
		{Name: "drain", Unary: s.drainUnary, Steps: interceptors.Steps{Enter: s.drainEnter, Exit: drainExit}},
		// Innermost, wrapping the handler: a panic in a call becomes
		// INTERNAL where the metrics and logging links still count and log
		// it, and the server keeps serving.
		interceptors.Recovery(s.log),
	}, nil
}

// validator returns the protovalidate validator every runtime's chain
// shares (built once: it caches compiled rules).
func (s *Server) validator() (protovalidate.Validator, error) {
	if s.protoValidator == nil {
		v, err := protovalidate.New()
		if err != nil {
			return nil, fmt.Errorf("protovalidate: %w", err)
		}
		s.protoValidator = v
	}
	return s.protoValidator, nil
}

// MaxHeaderListBytes bounds the metadata of one gRPC call (its HTTP/2
// header list, uncompressed), as the server advertises it in its HTTP/2
// SETTINGS: gRPC clients refuse to send more, and a stream that carries
// more is reset (FRAME_SIZE) before it is authenticated. 64 KiB is eight
// times grpc-java's own bound (8 KiB), which every portable client fits.
const MaxHeaderListBytes = 64 << 10

// serverOptions returns the gRPC server options: the runtime link (which
// runs the interceptor chain of each call's runtime), the server span when
// tracing is on, message and stream limits, keepalive enforcement, the
// stream worker pool and, when configured, TLS. These are fixed for the
// server's life: a reload does not change them.
func (s *Server) serverOptions() ([]grpc.ServerOption, error) {
	l := s.cfg.Limits
	opts := []grpc.ServerOption{
		// The one installed interceptor: it picks the call's runtime and
		// runs that runtime's chain.
		grpc.UnaryInterceptor(s.runtimeUnary),
		grpc.StreamInterceptor(s.runtimeStream),
		// An llmrelay request that does not decode is refused by the
		// validate link, typed as any invalid request, not by gRPC.
		grpc.ForceServerCodecV2(interceptors.RequestCodec()),
		grpc.MaxRecvMsgSize(l.MaxRecvMsgBytes),
		grpc.MaxConcurrentStreams(l.MaxConcurrentStreamsPerConn),
		// A call's metadata is bounded before any link sees it: grpc-go's
		// own bound is 16 MiB a stream, which HPACK lets a client send in
		// a few KiB and hold, stream by stream, without a key.
		grpc.MaxHeaderListSize(MaxHeaderListBytes),
		// Clients may ping at most every KeepaliveMinTime, calls in flight
		// or not; faster pingers are disconnected.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: l.KeepaliveMinTime, PermitWithoutStream: true}),
		// The server pings idle connections, and drops those that do not
		// answer, so dead peers do not hold streams. Connections older than
		// MaxConnectionAge get a GOAWAY, so clients behind an L4 balancer
		// reconnect, and spread onto replicas added since.
		grpc.KeepaliveParams(s.keepaliveParams()),
	}
	if h := s.tracing.ServerHandler(); h != nil {
		// The server span of each call, continuing the client's trace.
		opts = append(opts, grpc.StatsHandler(h))
	}
	if n := l.StreamWorkerCount(); n > 0 {
		// Calls run on a pool of goroutines whose stacks have already
		// grown through the interceptor chain.
		opts = append(opts, grpc.NumStreamWorkers(uint32(n)))
	}
	if s.cfg.TLS.Enabled() {
		// The certificate of the current runtime: a reload rotates it.
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.current.Load().cert, nil },
			MinVersion:     tls.VersionTLS12,
		})))
	}
	return opts, nil
}

// keepaliveParams returns the server's keepalive and connection-age
// settings from limits.
func (s *Server) keepaliveParams() keepalive.ServerParameters {
	l := s.cfg.Limits
	p := keepalive.ServerParameters{Time: l.KeepaliveTime, Timeout: l.KeepaliveTimeout}
	if l.MaxConnectionAge > 0 {
		p.MaxConnectionAge = l.MaxConnectionAge
		p.MaxConnectionAgeGrace = s.cfg.ConnectionAgeGrace()
	}
	return p
}
