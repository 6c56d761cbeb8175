package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

func TestTLS(t *testing.T) {
	cfg := securedConfig()
	var cert *x509.Certificate
	cfg.TLS.CertFile, cfg.TLS.KeyFile, cert = servertest.SelfSigned(t, t.TempDir())
	in := servertest.Start(t, cfg)

	pool := x509.NewCertPool()
	pool.AddCert(cert)
	conn := in.Dial(t, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost"})))
	if _, err := servertest.Collect(bearer(t.Context(), keyFull), llmrelayv1.NewLLMServiceClient(conn), echoRequest("over tls")); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	// in.Client speaks plaintext: the TLS server does not talk to it.
	_, err := servertest.Collect(bearer(t.Context(), keyFull), in.Client, echoRequest("plaintext"))
	if status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext client: %v, want Unavailable", err)
	}
}

func TestTLSBadFiles(t *testing.T) {
	cfg := config.Default()
	cfg.TLS.CertFile = filepath.Join(t.TempDir(), "missing.pem")
	cfg.TLS.KeyFile = cfg.TLS.CertFile
	if _, err := server.New(cfg); err == nil {
		t.Fatal("server.New accepted missing TLS files")
	}
}

// TestTLSCertificateRotation: a reload with new certificate files serves
// the new certificate to new connections; a reload whose files do not load
// is refused and the old certificate stays.
func TestTLSCertificateRotation(t *testing.T) {
	cfg := securedConfig()
	var first *x509.Certificate
	cfg.TLS.CertFile, cfg.TLS.KeyFile, first = servertest.SelfSigned(t, t.TempDir())
	in := servertest.Start(t, cfg)

	// served returns the certificate a new TLS connection is given.
	served := func() *x509.Certificate {
		t.Helper()
		var got *x509.Certificate
		conn := in.Dial(t, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
			ServerName:         "localhost",
			InsecureSkipVerify: true, // the test compares the certificate itself
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				var err error
				got, err = x509.ParseCertificate(raw[0])
				return err
			},
		})))
		if _, err := servertest.Collect(bearer(t.Context(), keyFull), llmrelayv1.NewLLMServiceClient(conn), echoRequest("hi")); err != nil {
			t.Fatalf("TLS call: %v", err)
		}
		return got
	}
	if got := served(); !got.Equal(first) {
		t.Fatal("the server does not serve its configured certificate")
	}

	next := securedConfig()
	var second *x509.Certificate
	next.TLS.CertFile, next.TLS.KeyFile, second = servertest.SelfSigned(t, t.TempDir())
	if _, err := in.Server.Reload(next); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := served(); !got.Equal(second) {
		t.Error("after the reload, a new connection does not get the new certificate")
	}

	broken := securedConfig()
	broken.TLS.CertFile = filepath.Join(t.TempDir(), "missing.pem")
	broken.TLS.KeyFile = broken.TLS.CertFile
	if _, err := in.Server.Reload(broken); err == nil {
		t.Fatal("a reload with missing certificate files was applied")
	}
	if got := served(); !got.Equal(second) {
		t.Error("a refused reload changed the certificate")
	}
}

// TestFailedTLSHandshakesOnTheDoorsAreNotWarnings: anyone who can connect
// can fail a TLS handshake on the HTTP endpoints (a scanner, a client
// speaking plaintext); each failure wrote a warning, so a flood of them
// was a flood of warnings, where the gRPC listener says nothing and failed
// authentications are logged once per address and interval. They are
// debug lines now.
func TestFailedTLSHandshakesOnTheDoorsAreNotWarnings(t *testing.T) {
	cfg := config.Default()
	cfg.HTTPTLS.CertFile, cfg.HTTPTLS.KeyFile, _ = servertest.SelfSigned(t, t.TempDir())
	var logs servertest.LockedBuffer
	in := servertest.Start(t, cfg, server.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	base := in.HTTP(t)
	const n = 5
	for range n {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
		_, _ = io.ReadAll(c) // the server's 400, then its close
		_ = c.Close()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for strings.Count(logs.String(), "TLS handshake error") < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d failed handshakes logged, want %d:\n%s", strings.Count(logs.String(), "TLS handshake error"), n, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, "TLS handshake error") && !strings.Contains(line, "level=DEBUG") {
			t.Errorf("a failed handshake logged above debug: %s", line)
		}
	}
}
