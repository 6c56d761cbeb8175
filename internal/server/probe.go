package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/llmrelay/llmrelay/internal/config"
)

// ErrNotServing is returned by Probe when the server answers, with a status
// other than SERVING: it is draining, or shutting down.
var ErrNotServing = errors.New("not serving")

// Probe asks a running llmrelay for its health over the gRPC health service,
// the way a container health check or a Kubernetes gRPC probe does: it
// dials addr (cfg.Listen when empty; an unspecified host such as 0.0.0.0 is
// dialed on loopback) with TLS when cfg has TLS, and checks service ("" is
// the whole server). It returns nil when the answer is SERVING, an error
// wrapping ErrNotServing for any other answer, and the call's error when
// there is no answer before ctx ends.
//
// With TLS, Probe does not verify the server's certificate: it sends
// nothing secret (health needs no key) and usually dials loopback, where
// the certificate's names do not match.
func Probe(ctx context.Context, cfg *config.Config, addr, service string) error {
	if addr == "" {
		addr = probeAddr(cfg.Listen)
	}
	creds := insecure.NewCredentials()
	if cfg.TLS.Enabled() {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // see the doc comment
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("health probe %s: %w", addr, err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return fmt.Errorf("health probe %s: %w", addr, err)
	}
	if st := resp.GetStatus(); st != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health probe %s: %s: %w", addr, st, ErrNotServing)
	}
	return nil
}

// probeAddr turns a listen address into one to dial: a missing or
// unspecified host becomes loopback.
func probeAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return listen
}
