package server

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// ErrStoppedAtOnce is returned by RunWithSignals when a second SIGINT or
// SIGTERM arrived during a shutdown: the server stopped without waiting for
// the drain delay or the calls in flight, which were cut off.
var ErrStoppedAtOnce = errors.New("stopped at once on a second signal: calls still running were cut off")

// RunWithSignals is Run for a process: it serves until ctx ends or SIGINT or
// SIGTERM arrives, then shuts down (Shutdown: the drain delay, then the
// grace period). A second SIGINT or SIGTERM during the shutdown stops the
// server at once and RunWithSignals returns ErrStoppedAtOnce. SIGHUP
// reloads the config (reload, in reload.go); it never stops the server.
//
// All of the server's signal handling is here, in RunWithSignals and the
// two loops below (the command line's generate has its own Ctrl-C, in
// internal/cli).
func (s *Server) RunWithSignals(ctx context.Context) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	return s.run(ctx, sigs)
}

// serveUntilStop waits while the server serves. It returns stop true when
// ctx ends or a stop signal arrives, and false with Serve's result if
// serving ended first (failed, or Shutdown was called from elsewhere).
func (s *Server) serveUntilStop(ctx context.Context, sigs <-chan os.Signal, served <-chan error) (stop bool, err error) {
	for {
		select {
		case err := <-served:
			return false, err
		case <-ctx.Done():
			return true, nil
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				_ = s.reload("SIGHUP")
				continue
			}
			s.log.Info("signal received: shutting down (send it again to stop at once)", "signal", sig.String())
			return true, nil
		}
	}
}

// shutdownUntilDone waits for the shutdown to finish (done closes). A
// second stop signal cuts it short: every call is cut off, every
// connection closed, and it returns ErrStoppedAtOnce.
func (s *Server) shutdownUntilDone(sigs <-chan os.Signal, done <-chan struct{}) error {
	for {
		select {
		case <-done:
			return nil
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				s.log.Warn("SIGHUP during shutdown: ignored")
				continue
			}
			s.log.Warn("second signal: stopping at once, cutting off calls still running", "signal", sig.String())
			s.stopNow()
			return ErrStoppedAtOnce
		}
	}
}
