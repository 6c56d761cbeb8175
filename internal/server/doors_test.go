package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// chatBody is a Chat Completions request for mock/lorem: words words,
// paced by delay milliseconds a word.
func chatBody(stream bool, words, delay int) string {
	s := "false"
	if stream {
		s = "true"
	}
	return `{"model":"mock/lorem","stream":` + s + `,"messages":[{"role":"user","content":"hi"}],` +
		`"llmrelay":{"provider_options":{"words":` + strconv.Itoa(words) + `,"chunk_delay_ms":` + strconv.Itoa(delay) + `}}}`
}

// TestHTTPDoorsTLS: with http_tls, the HTTP doors speak HTTPS (HTTP/2 when
// the client offers it) with their own certificate, and a plaintext
// client gets no answer.
func TestHTTPDoorsTLS(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	var cert *x509.Certificate
	cfg.HTTPTLS.CertFile, cfg.HTTPTLS.KeyFile, cert = servertest.SelfSigned(t, t.TempDir())
	base := strings.Replace(servertest.Start(t, cfg).HTTP(t), "http://127.0.0.1", "https://localhost", 1)

	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(false, 3, 0)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || !strings.Contains(string(body), `"finish_reason":"stop"`) {
		t.Errorf("HTTPS: %s %d %s", resp.Proto, resp.StatusCode, body)
	}
	plain := strings.Replace(base, "https://", "http://", 1)
	if resp, err := http.Post(plain+"/v1/models", "application/json", nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest { // net/http answers plaintext on a TLS port with 400
			t.Errorf("plaintext on the TLS port: %d", resp.StatusCode)
		}
	}
}

// TestHTTPDoorsDrain: a streamed reply still running when the shutdown
// grace period ends is cut off with the format's error event
// (SERVER_SHUTTING_DOWN), as a gRPC call is with UNAVAILABLE; the doors
// refuse new connections once the grace period began.
func TestHTTPDoorsDrain(t *testing.T) {
	cfg := config.Default()
	cfg.Providers = config.DefaultProviders()
	cfg.ShutdownGrace = 100 * time.Millisecond
	in := servertest.Start(t, cfg)
	base := in.HTTP(t)

	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(true, 10000, 50)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first line %q: %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		in.Server.Shutdown(ctx)
		close(stopped)
	}()
	rest, _ := io.ReadAll(r)
	if !strings.Contains(string(rest), `"reason":"SERVER_SHUTTING_DOWN"`) || strings.Contains(string(rest), "[DONE]") {
		t.Errorf("the stream's end: %q", lastLines(string(rest), 2))
	}
	<-stopped
	if _, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(false, 1, 0))); err == nil {
		t.Error("the doors still accept calls after the shutdown")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
