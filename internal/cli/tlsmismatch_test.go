package cli

import (
	"strings"
	"testing"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// TestCallErrorsSayWhichTLSToTry: a client command that cannot connect
// because it and the server disagree about TLS says which flag (or
// variable) to change, besides gRPC's words: a TLS server on loopback
// (dialled in plaintext by default) said only "error reading server
// preface: EOF".
func TestCallErrorsSayWhichTLSToTry(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.TLS.CertFile, cfg.TLS.KeyFile, _ = servertest.SelfSigned(t, t.TempDir())
	tlsAddr, _ := servertest.Listen(t, cfg)
	plainAddr := relay(t, false)
	// llmrelay's HTTP doors, where a user who copied the curl examples'
	// port points the command line.
	httpAddr := strings.TrimPrefix(servertest.Start(t, nil).HTTP(t), "http://")
	tests := []struct {
		name string
		args []string
		hint string
	}{
		{"plaintext to a TLS server on loopback", []string{"models", "--addr", tlsAddr},
			"\n  the server may be serving TLS: this call was in plaintext (the default for a loopback address); add --tls\n"},
		{"keys list in plaintext to a TLS server", []string{"keys", "list", "--addr", tlsAddr},
			"\n  the server may be serving TLS: this call was in plaintext (the default for a loopback address); add --tls\n"},
		{"plaintext to llmrelay's HTTP port", []string{"models", "--addr", httpAddr},
			"\n  an HTTP/1.1 server answered, not gRPC: is this an HTTP port? llmrelay serves gRPC on 127.0.0.1:50051 by default, its HTTP endpoints on 127.0.0.1:8080; a TLS server needs --tls\n"},
		{"TLS to a plaintext server", []string{"models", "--tls", "--addr", plainAddr},
			"\n  the server does not use TLS: add --plaintext\n"},
		{"a certificate this machine does not trust", []string{"generate", "--tls", "--addr", tlsAddr, "-m", "mock/echo", "hi"},
			"\n  this machine does not trust the server's certificate: name its authority's PEM file in SSL_CERT_FILE (SSL_CERT_FILE=ca.pem llmrelay ...)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t.Context(), t, tt.args, nil, "")
			if r.code != ExitFailed || !strings.Contains(r.stderr, "UNAVAILABLE") {
				t.Fatalf("exit %d, stderr %q; want exit 1 and UNAVAILABLE", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.hint) {
				t.Errorf("stderr lacks %q:\n%s", tt.hint, r.stderr)
			}
		})
	}
	// A server that is down gets no word about TLS: TLS is not why. It is
	// asked whether llmrelay runs there.
	r := runCLI(t.Context(), t, []string{"models", "--addr", "127.0.0.1:1"}, nil, "")
	if r.code != ExitFailed || strings.Contains(r.stderr, "TLS") {
		t.Errorf("a server that is down: exit %d, stderr %q; want exit 1 and no word of TLS", r.code, r.stderr)
	}
	if want := "\n  nothing listens at 127.0.0.1:1: is llmrelay running there? (--addr or LLMRELAY_ADDR names another address)\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("a server that is down: stderr lacks %q:\n%s", want, r.stderr)
	}
}
