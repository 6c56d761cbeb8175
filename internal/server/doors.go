package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/llmrelay/llmrelay/internal/engine"
	"github.com/llmrelay/llmrelay/internal/httpapi"
)

// The HTTP doors' connection settings: a client must send its headers, and
// its request body, within these; an idle keep-alive connection is closed
// after doorsIdleTimeout. Replies stream for as long as the call runs
// (the call's deadline bounds it), so there is no write timeout.
const (
	doorsHeaderTimeout = 10 * time.Second
	doorsBodyTimeout   = time.Minute
	doorsIdleTimeout   = 2 * time.Minute
)

// newDoors builds the HTTP server of the HTTP doors (internal/httpapi):
// each call starts on the current runtime's engine, and runs on a context
// that the end of the shutdown grace period cancels, as gRPC calls do.
func (s *Server) newDoors() *http.Server {
	doors := httpapi.New(httpapi.Options{
		Engine:       func() *engine.Engine { return s.current.Load().engine },
		Logger:       s.log,
		Metrics:      s.metrics,
		MaxBodyBytes: int64(s.cfg.Limits.MaxRecvMsgBytes),
		BodyTimeout:  doorsBodyTimeout,
		Tracing:      s.tracing,
	})
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, stop := s.calls.context(r.Context())
			defer stop()
			doors.ServeHTTP(w, r.WithContext(ctx))
		}),
		ReadHeaderTimeout: doorsHeaderTimeout,
		IdleTimeout:       doorsIdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          log.New(doorsErrorLog{s.log}, "", 0),
		TLSConfig: &tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.current.Load().httpCert, nil },
			MinVersion:     tls.VersionTLS12,
		},
	}
}

// ServeHTTPDoors serves the HTTP doors (OpenAI's and Anthropic's APIs,
// docs/http.md) on lis until Shutdown, with http_tls when it is set, and
// the PROXY protocol from trusted proxies as Serve has it. It returns nil
// after a shutdown.
func (s *Server) ServeHTTPDoors(lis net.Listener) error {
	if len(s.cfg.Auth.TrustedProxies) > 0 {
		lis = &proxyproto.Listener{Listener: lis, ConnPolicy: s.proxyPolicy, ReadHeaderTimeout: proxyHeaderTimeout}
	}
	var err error
	if s.cfg.HTTPTLS.Enabled() {
		err = s.doors.ServeTLS(lis, "", "")
	} else {
		err = s.doors.Serve(lis)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// doorsErrorLog writes net/http's own lines of the HTTP doors' server to
// the log: at warn, but for a failed TLS handshake, which anyone who can
// connect causes (a scanner, a client speaking plaintext), once per
// connection: at debug, as the gRPC listener's are not logged at all.
type doorsErrorLog struct{ log *slog.Logger }

func (l doorsErrorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = slog.LevelDebug
	}
	l.log.Log(context.Background(), level, msg)
	return len(p), nil
}

// stopDoors stops the HTTP doors gracefully: no new connections or
// requests, the calls in flight run on (the grace period's end cuts them
// off through their context). It returns once every call has ended, or at
// once after closeDoors.
func (s *Server) stopDoors() {
	_ = s.doors.Shutdown(context.Background())
}

// closeDoors closes every HTTP connection at once.
func (s *Server) closeDoors() { _ = s.doors.Close() }
