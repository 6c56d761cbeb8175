package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/llmrelay/llmrelay/client"
	llmrelayv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/v1"
	"github.com/llmrelay/llmrelay/internal/apierr"
	"github.com/llmrelay/llmrelay/internal/auth"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/internal/freeport"
	"github.com/llmrelay/llmrelay/internal/interceptors"
	"github.com/llmrelay/llmrelay/internal/server/servertest"
)

// haproxyInFront starts HAProxy, with its default buffers and an h2c
// frontend and backend, in front of a real llmrelay listening on loopback,
// and returns a client connected through it.
func haproxyInFront(t *testing.T, cfg *config.Config) llmrelayv1.LLMServiceClient {
	t.Helper()
	client, _ := haproxyWith(t, cfg, haproxyH2)
	return client
}

// HAProxy configurations for haproxyWith, given the frontend's port and
// the backend's address.
var (
	// haproxyH2 proxies HTTP/2 (h2c) at layer 7.
	haproxyH2 = haproxyHTTP("")
	// haproxyForwardedFor proxies HTTP/2 at layer 7 and names each client
	// in X-Forwarded-For.
	haproxyForwardedFor = haproxyHTTP("    option forwardfor\n")
)

func haproxyHTTP(defaults string) func(front int, backend string) string {
	return func(front int, backend string) string {
		return fmt.Sprintf(`global
    log stderr format raw local0 warning
defaults
    mode http
    log global
    timeout connect 10s
    timeout client 60s
    timeout server 60s
%sfrontend grpc_in
    bind 127.0.0.1:%d proto h2
    default_backend llmrelay
backend llmrelay
    server relay %s proto h2
`, defaults, front, backend)
	}
}

// haproxyProxyProtocol proxies TCP at layer 4 and opens each connection
// to llmrelay with a PROXY protocol v2 header naming the client.
func haproxyProxyProtocol(front int, backend string) string {
	return fmt.Sprintf(`global
    log stderr format raw local0 warning
defaults
    mode tcp
    log global
    timeout connect 10s
    timeout client 60s
    timeout server 60s
frontend grpc_in
    bind 127.0.0.1:%d
    default_backend llmrelay
backend llmrelay
    server relay %s send-proxy-v2
`, front, backend)
}

// haproxyWith starts HAProxy with the configuration conf makes in front of
// a real llmrelay listening on loopback, and returns a client connected
// through it and the frontend's address.
func haproxyWith(t *testing.T, cfg *config.Config, conf func(front int, backend string) string) (llmrelayv1.LLMServiceClient, string) {
	t.Helper()
	bin := servertest.Program(t, "haproxy", "haproxy")
	_, backend := serveTCP(t, cfg)

	front := freeport.For(t)
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf(front, backend)), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs servertest.LockedBuffer
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	return proxyClient(t, cmd, front, logs.String), fmt.Sprintf("127.0.0.1:%d", front)
}

// dialFrom returns a client of addr whose connection comes from the
// loopback address from (any of 127.0.0.0/8), as a distinct client host.
func dialFrom(t *testing.T, addr, from string) llmrelayv1.LLMServiceClient {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return llmrelayv1.NewLLMServiceClient(conn)
}

// TestUnknownKeyBehindHAProxyLocksNobodyOut (issue 23 item 9): behind a
// real HAProxy that names each client (in X-Forwarded-For at layer 7, or
// in a PROXY protocol header at layer 4), one client hammering with an
// unknown key is throttled on its own address, while every call of another
// client with a valid key succeeds, and a third client's first failure is
// counted, not throttled. Every call reaches llmrelay from HAProxy's one
// address.
func TestUnknownKeyBehindHAProxyLocksNobodyOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		conf func(front int, backend string) string
	}{
		{"x-forwarded-for", haproxyForwardedFor},
		{"proxy protocol", haproxyProxyProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) { unknownKeyLocksNobodyOut(t, tc.conf) })
	}
}

func unknownKeyLocksNobodyOut(t *testing.T, conf func(front int, backend string) string) {
	const goodKey = "good-key-0123456789abcdef"
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "good", SHA256: auth.HashKey(goodKey), Scopes: []string{"generate"}, Models: []string{"*"}}}
	cfg.Auth.Throttle = config.AuthThrottle{Burst: 5, PerSecond: 0.001, LogInterval: time.Minute}
	cfg.Auth.TrustedProxies = []string{"127.0.0.1"}
	_, front := haproxyWith(t, cfg, conf)
	attacker, victim, other := dialFrom(t, front, "127.0.0.2"), dialFrom(t, front, "127.0.0.3"), dialFrom(t, front, "127.0.0.4")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	call := func(c llmrelayv1.LLMServiceClient, key string) error {
		_, err := servertest.Collect(keyed(ctx, key), c, echoRequest("hello"))
		return err
	}

	// The attacker hammers from four goroutines until the victim is done.
	stop := make(chan struct{})
	throttled := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var attempts, refused atomic.Int64
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				attempts.Add(1)
				if client.FromError(call(attacker, "revoked-key")).Reason == interceptors.ReasonAuthThrottled {
					refused.Add(1)
					once.Do(func() { close(throttled) })
				}
			}
		})
	}
	select {
	case <-throttled:
	case <-ctx.Done():
		t.Fatal("the attacker was never throttled")
	}
	for i := range 100 {
		if err := call(victim, goodKey); err != nil {
			t.Fatalf("the valid key's call %d failed while another client hammered: %v", i+1, err)
		}
	}
	if r := client.FromError(call(other, "typo-key")).Reason; r != interceptors.ReasonAPIKeyUnknown {
		t.Errorf("a third client's first failure: %s, want %s (the throttle falls on the offender, not the proxy)", r, interceptors.ReasonAPIKeyUnknown)
	}
	close(stop)
	wg.Wait()
	t.Logf("the attacker made %d calls, %d refused as throttled; the valid key's 100 calls all succeeded", attempts.Load(), refused.Load())
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

// TestForwardedForFromAClientIsIgnored: only a trusted proxy's
// X-Forwarded-For names the client. A client that sends one itself, with
// another address on every call, is throttled on its own address all the
// same.
func TestForwardedForFromAClientIsIgnored(t *testing.T) {
	cfg := config.Default()
	cfg.MetricsListen = ""
	cfg.Providers = config.DefaultProviders()
	cfg.Auth.Keys = []config.APIKey{{Name: "good", SHA256: auth.HashKey("good-key-0123456789abcdef"), Scopes: []string{"generate"}, Models: []string{"*"}}}
	cfg.Auth.Throttle = config.AuthThrottle{Burst: 3, PerSecond: 0.001, LogInterval: time.Minute}
	cfg.Auth.TrustedProxies = []string{"192.0.2.1"} // not this test's clients
	_, addr := serveTCP(t, cfg)
	spoofer := dialFrom(t, addr, "127.0.0.2")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var reasons []string
	for i := range 5 {
		ctx := metadata.AppendToOutgoingContext(keyed(ctx, "guess"), "x-forwarded-for", fmt.Sprintf("203.0.113.%d", i+1))
		_, err := servertest.Collect(ctx, spoofer, echoRequest("hello"))
		reasons = append(reasons, client.FromError(err).Reason)
	}
	want := []string{interceptors.ReasonAPIKeyUnknown, interceptors.ReasonAPIKeyUnknown, interceptors.ReasonAPIKeyUnknown,
		interceptors.ReasonAuthThrottled, interceptors.ReasonAuthThrottled}
	if !slices.Equal(reasons, want) {
		t.Errorf("a client naming a new address in each call's X-Forwarded-For got %v, want %v", reasons, want)
	}
}
