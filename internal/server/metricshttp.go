package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// metricsShutdownWait bounds how long stopping the metrics endpoint waits
// for scrapes in progress.
const metricsShutdownWait = 5 * time.Second

// startMetrics serves Prometheus' /metrics and the HTTP probes /readyz and
// /livez on cfg.MetricsListen, if set, and returns the function that stops
// it.
func (s *Server) startMetrics() (stop func(), err error) {
	if s.cfg.MetricsListen == "" {
		return func() {}, nil
	}
	lis, err := s.listen("metrics_listen", s.cfg.MetricsListen)
	if err != nil {
		return nil, err
	}
	s.log.Info("metrics serving", "listen", lis.Addr().String(), "path", "/metrics", "probes", "/readyz /livez")
	return s.serveMetrics(lis), nil
}

// serveMetrics serves /metrics, /readyz and /livez on lis until the
// returned stop function is called; stop returns once the HTTP server has
// ended. It serves through a shutdown, so that the probes say it.
func (s *Server) serveMetrics(lis net.Listener) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.Handle("GET /readyz", s.probe(ReadinessService))
	mux.Handle("GET /livez", s.probe(""))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics endpoint failed", "error", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), metricsShutdownWait)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
	}
}

// probe answers an HTTP health check (a proxy's or a kubelet's) with the
// gRPC health of service, as a gRPC health check of it would: 200 and
// "SERVING" while it serves, 503 and its status otherwise. So /readyz
// (the readiness service, llmrelay.v1.LLMService) turns 503 at the first
// moment of a shutdown, through the drain delay, and while a fail_closed
// state store is unreachable; /livez (the whole server, "") only at
// shutdown.
func (s *Server) probe(service string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := healthpb.HealthCheckResponse_SERVICE_UNKNOWN
		if resp, err := s.health.Check(r.Context(), &healthpb.HealthCheckRequest{Service: service}); err == nil {
			st = resp.GetStatus()
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if st != healthpb.HealthCheckResponse_SERVING {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = io.WriteString(w, st.String()+"\n")
	})
}
