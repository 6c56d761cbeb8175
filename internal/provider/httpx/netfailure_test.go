package httpx_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// TestUnreachableProviderSaysWhy: each way a provider cannot be reached
// reaches the attempt's error as its kind of network failure, from the
// errors net/http really returns.
func TestUnreachableProviderSaysWhy(t *testing.T) {
	closed := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr
	}
	untrusted := func(t *testing.T) string {
		srv := httptest.NewTLSServer(http.HandlerFunc(sse)) // its certificate is in no pool the client trusts
		t.Cleanup(srv.Close)
		return srv.URL
	}
	silent := func(t *testing.T) string {
		srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	hangUp := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				// Read the request, then reset the connection without an answer.
				_, _ = c.Read(make([]byte, 4096))
				_ = c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
		}()
		return "http://" + ln.Addr().String()
	}
	tests := []struct {
		name      string
		upstream  func(t *testing.T) string
		transport provider.Transport
		want      provider.NetFailure
	}{
		{"nothing listens", closed, provider.Transport{}, provider.NetRefused},
		{"certificate not trusted", untrusted, provider.Transport{}, provider.NetTLS},
		{"no response headers in time", silent, provider.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}, provider.NetTimeout},
		{"connection reset", hangUp, provider.Transport{}, provider.NetReset},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.upstream(t)
			ep := endpoint(t, provider.Config{Kind: "test", BaseURL: base, Transport: tt.transport})
			r := streamWithin(t, ep, base, guard)
			pe := pt.ProviderError(r.Err)
			if pe == nil || pe.Kind != provider.KindTransport {
				t.Fatalf("error %v, want a transport failure", r.Err)
			}
			if pe.Net != tt.want {
				t.Errorf("kind of failure = %v, want %v (error: %v)", pe.Net, tt.want, r.Err)
			}
		})
	}
}

// TestNetFailureOf: the error chains net/http builds for each kind of
// failure, including those a test cannot provoke on loopback (a name that
// does not resolve).
func TestNetFailureOf(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://provider.example/v1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	tests := []struct {
		name string
		err  error
		want provider.NetFailure
	}{
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "provider.example", IsNotFound: true}), provider.NetDNS},
		{"lookup timed out", dial(&net.DNSError{Err: "i/o timeout", Name: "provider.example", IsTimeout: true}), provider.NetDNS},
		{"refused", dial(&net.OpError{Op: "connect", Err: syscall.ECONNREFUSED}), provider.NetRefused},
		{"unknown authority", dial(x509.UnknownAuthorityError{}), provider.NetTLS},
		{"wrong host", dial(x509.HostnameError{Host: "provider.example"}), provider.NetTLS},
		{"reset", dial(syscall.ECONNRESET), provider.NetReset},
		{"attempt timeout", fmt.Errorf("x: %w", httpx.ErrAttemptTimeout), provider.NetTimeout},
		{"deadline of a dial", dial(context.DeadlineExceeded), provider.NetTimeout},
		{"cut mid-event", fmt.Errorf("%w: x", httpx.ErrCut), provider.NetCut},
		{"no terminator", httpx.ErrNoTerminator, provider.NetCut},
		{"anything else", errors.New("mystery"), provider.NetUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := httpx.NetFailureOf(tt.err); got != tt.want {
				t.Errorf("NetFailureOf(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
