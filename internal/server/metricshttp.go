package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// metricsShutdownWait bounds how long stopping the metrics endpoint waits
// for scrapes in progress.
const metricsShutdownWait = 5 * time.Second

// startMetrics serves Prometheus' /metrics on cfg.MetricsListen, if set,
// and returns the function that stops it.
func (s *Server) startMetrics() (stop func(), err error) {
	if s.cfg.MetricsListen == "" {
		return func() {}, nil
	}
	lis, err := s.listen("metrics_listen", s.cfg.MetricsListen)
	if err != nil {
		return nil, err
	}
	s.log.Info("metrics serving", "listen", lis.Addr().String(), "path", "/metrics")
	return s.serveMetrics(lis), nil
}

// serveMetrics serves /metrics on lis until the returned stop function is
// called; stop returns once the HTTP server has ended.
func (s *Server) serveMetrics(lis net.Listener) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
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
