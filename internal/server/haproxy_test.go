package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	llmrelayv1 "github.com/llmrelay/llmrelay/gen/go/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// haproxyInFront starts HAProxy, with its default buffers and an h2c
// frontend and backend, in front of a real llmrelay listening on loopback,
// and returns a client connected through it.
func haproxyInFront(t *testing.T, cfg *config.Config) llmrelayv1.LLMServiceClient {
	t.Helper()
	bin := servertest.Program(t, "haproxy", "haproxy")
	_, backend := serveTCP(t, cfg)

	front := freePort(t)
	conf := fmt.Sprintf(`global
    log stderr format raw local0 warning
defaults
    mode http
    log global
    timeout connect 10s
    timeout client 60s
    timeout server 60s
frontend grpc_in
    bind 127.0.0.1:%d proto h2
    default_backend llmrelay
backend llmrelay
    server relay %s proto h2
`, front, backend)
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs servertest.LockedBuffer
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	return proxyClient(t, cmd, front, logs.String)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestManyViolationsThroughHAProxy: a request with 500 validation
// violations gets its INVALID_ARGUMENT through HAProxy 2.6 with default
// buffers. Unbounded, the trailers (each violation listed in grpc-message
// and in grpc-status-details-bin) exceed what HAProxy accepts, and the
// client sees UNAVAILABLE, which the shipped service config retries.
func TestManyViolationsThroughHAProxy(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	client := haproxyInFront(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	// The proxy itself works: an ordinary call goes through.
	if _, err := servertest.Collect(ctx, client, echoRequest("through the proxy")); err != nil {
		t.Fatalf("a valid call through haproxy: %v", err)
	}
	req := echoRequest("x")
	req.Messages = nil
	for range 500 {
		req.Messages = append(req.Messages, &llmrelayv1.Message{Content: "a message without a role " + strings.Repeat("z", 40)})
	}
	_, err := servertest.Collect(ctx, client, req)
	st := wantError(t, err, codes.InvalidArgument, apierr.ReasonInvalidRequest)
	md := detail[*errdetails.ErrorInfo](st).GetMetadata()
	if md[apierr.MetaViolations] != "500" || md[apierr.MetaViolationsListed] == "" {
		t.Errorf("ErrorInfo metadata %v, want the 500 violations counted and how many are listed", md)
	}
	t.Logf("status through haproxy: %d-byte message, violations %s listed of %s", len(st.Message()), md[apierr.MetaViolationsListed], md[apierr.MetaViolations])
}
