package server

import (
	"crypto/tls"
	"fmt"

	"buf.build/go/protovalidate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/interceptors"
)

// interceptorChain returns the server's interceptor chain, outermost first.
// interceptors.Chain installs every link for unary and stream calls alike.
// TestChainOrder pins the order.
func (s *Server) interceptorChain() ([]interceptors.Link, error) {
	keys, err := auth.NewKeyring(s.cfg.Auth.Keys)
	if err != nil {
		return nil, err
	}
	validator, err := protovalidate.New()
	if err != nil {
		return nil, fmt.Errorf("protovalidate: %w", err)
	}
	maxConcurrent := make(map[string]int, len(s.cfg.Providers))
	for _, p := range s.cfg.Providers {
		maxConcurrent[p.Name] = p.MaxConcurrent
	}
	return []interceptors.Link{
		// Outermost: starts the call record (request id, key, model, the
		// resolved target, attempts) that the links, the handler and the
		// log lines below share, and guards the links themselves against
		// a panic.
		interceptors.Guard(s.log),
		// Metrics before every link that can refuse a call, so refusals are
		// counted with their code and handling time.
		interceptors.Metrics(s.metrics),
		// Logging before auth, so refused calls are logged too; the key and
		// model reach its lines through the call record.
		interceptors.Logging(s.log),
		// The auth throttle right outside auth: it refuses addresses that
		// failed authentication too often before their key is looked at,
		// counts auth's refusals, and logs them per address and interval
		// (the logging link leaves them out).
		interceptors.APIOnly(interceptors.NewAuthThrottle(interceptors.AuthThrottleOptions{
			Burst: s.cfg.Auth.Throttle.Burst, PerSecond: s.cfg.Auth.Throttle.PerSecond, LogInterval: s.cfg.Auth.Throttle.LogInterval,
		}, s.log, s.metrics).Link(keys)),
		// Auth before anything reads the request. Health and reflection
		// need no key.
		interceptors.APIOnly(interceptors.Auth(keys)),
		// Per-key rate and stream limits right after auth, when the call
		// starts: unary and stream calls are counted alike (a stream's
		// request is only read later), and floods of invalid requests are
		// throttled too.
		interceptors.NewKeyLimits(keys, s.metrics).Link(),
		// Deadline before anything that waits, so every wait and provider
		// call below is bounded. Not for health watches.
		interceptors.APIOnly(interceptors.Deadline(s.cfg.Deadlines.Default, s.cfg.Deadlines.Max)),
		// Size before validation, so oversized requests are not walked.
		interceptors.RequestSize(s.cfg.Limits.MaxRequestBytes),
		// Validation before anything interprets the request's fields.
		interceptors.Validate(validator),
		// Model access after validation, so a malformed model is
		// INVALID_ARGUMENT rather than a permission problem.
		interceptors.ModelAccess(),
		// Model resolution after model access, so a key learns nothing of
		// models it may not use; the one place the model is parsed.
		interceptors.ResolveModel(s.providers),
		// The provider queue last of the checks: only calls that will be
		// served wait for a slot of their resolved provider, within their
		// deadline.
		interceptors.NewProviderQueue(maxConcurrent, s.cfg.Limits.ProviderQueue, s.metrics).Link(),
		// Cuts off calls still running when the shutdown grace period ends.
		{Name: "drain", Unary: s.drainUnary, Stream: s.drainStream},
		// Innermost, wrapping the handler: a panic in a call becomes
		// INTERNAL where the metrics and logging links still count and log
		// it, and the server keeps serving.
		interceptors.Recovery(s.log),
	}, nil
}

// serverOptions returns the gRPC server options: the interceptor chain,
// message and stream limits, keepalive enforcement, the stream worker pool
// and, when configured, TLS.
func (s *Server) serverOptions() ([]grpc.ServerOption, error) {
	links, err := s.interceptorChain()
	if err != nil {
		return nil, err
	}
	l := s.cfg.Limits
	opts := append(interceptors.Chain(links...),
		grpc.MaxRecvMsgSize(l.MaxRecvMsgBytes),
		grpc.MaxConcurrentStreams(l.MaxConcurrentStreamsPerConn),
		// Clients may ping at most every KeepaliveMinTime, calls in flight
		// or not; faster pingers are disconnected.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: l.KeepaliveMinTime, PermitWithoutStream: true}),
		// The server pings idle connections, and drops those that do not
		// answer, so dead peers do not hold streams. Connections older than
		// MaxConnectionAge get a GOAWAY, so clients behind an L4 balancer
		// reconnect, and spread onto replicas added since.
		grpc.KeepaliveParams(s.keepaliveParams()),
	)
	if n := l.StreamWorkerCount(); n > 0 {
		// Calls run on a pool of goroutines whose stacks have already
		// grown through the interceptor chain.
		opts = append(opts, grpc.NumStreamWorkers(uint32(n)))
	}
	if s.cfg.TLS.Enabled() {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLS.CertFile, s.cfg.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
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
