package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// into a temporary directory and returns the config's TLS section.
func selfSigned(t *testing.T) config.TLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "llmrelay test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := config.TLS{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	for path, block := range map[string]*pem.Block{c.CertFile: {Type: "CERTIFICATE", Bytes: der}, c.KeyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestCallErrorsSayWhichTLSToTry: a client command that cannot connect
// because it and the server disagree about TLS says which flag (or
// variable) to change, besides gRPC's words: a TLS server on loopback
// (dialled in plaintext by default) said only "error reading server
// preface: EOF".
func TestCallErrorsSayWhichTLSToTry(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.TLS = selfSigned(t)
	tlsAddr, _ := servertest.Listen(t, cfg)
	plainAddr := relay(t, false)
	tests := []struct {
		name string
		args []string
		hint string
	}{
		{"plaintext to a TLS server on loopback", []string{"models", "--addr", tlsAddr},
			"\n  the server may be serving TLS: this call was in plaintext (the default for a loopback address); add --tls\n"},
		{"keys list in plaintext to a TLS server", []string{"keys", "list", "--addr", tlsAddr},
			"\n  the server may be serving TLS: this call was in plaintext (the default for a loopback address); add --tls\n"},
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
