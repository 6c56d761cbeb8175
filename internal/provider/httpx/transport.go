// Package httpx holds what llmrelay's HTTP provider adapters share: one tuned
// http.Client per configured provider, a lean server-sent-events reader that
// reuses its buffers, the plumbing that turns a streamed response into a
// provider.Stream, and the mapping of HTTP failures (status, retry hints,
// x-should-retry, dropped or malformed streams) to *provider.Error.
//
// It knows nothing of any one provider's wire format: adapters supply a
// Decoder for their events and a parser for their error bodies.
package httpx

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/llmrelay/llmrelay/internal/capool"
	"github.com/llmrelay/llmrelay/internal/provider"
)

// tcpKeepAlive is the interval of TCP keep-alive probes.
const tcpKeepAlive = 30 * time.Second

// NewClient returns the http.Client for one provider, with a connection
// pool of its own configured by t (zero settings defaulted, see
// provider.DefaultTransport): keep-alive with a large idle pool,
// HTTP/2 where the server offers it (with health pings; connections
// opened one at a time per host as streams need them, see connPool), the proxy from the
// environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, read now, with the rules
// of net/http's ProxyFromEnvironment), dial, TLS-handshake and
// response-header timeouts, the CA bundle and client certificate, and the
// redirect policy (see provider.Config.Redirects). It has no overall
// timeout: each attempt's context bounds it. It fails when a file cannot be
// read or parsed.
func NewClient(t provider.Transport, redirects string) (*http.Client, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	t = t.WithDefaults()
	if err := provider.CheckRedirects(redirects); err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(t)
	if err != nil {
		return nil, err
	}
	dial := dialer(t).DialContext
	if testDial != nil {
		dial = testDial(dial)
	}
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	tr := &http.Transport{
		Proxy:                 func(r *http.Request) (*url.URL, error) { return proxy(r.URL) },
		DialContext:           dial,
		TLSClientConfig:       tlsCfg,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          t.MaxIdleConns,
		MaxIdleConnsPerHost:   t.MaxIdleConns,
		MaxConnsPerHost:       t.MaxConns,
		IdleConnTimeout:       t.IdleConnTimeout,
		TLSHandshakeTimeout:   t.TLSHandshakeTimeout,
		ResponseHeaderTimeout: t.ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		HTTP2: &http.HTTP2Config{
			SendPingTimeout: t.PingInterval,
			PingTimeout:     t.PingTimeout,
		},
	}
	rt := &h1Transport{
		next: tr, proxy: tr.Proxy, dial: dial,
		headerTimeout: t.ResponseHeaderTimeout, idleTimeout: t.IdleConnTimeout,
		maxIdle: t.MaxIdleConns, maxConns: t.MaxConns,
		hosts: map[string]*h1Host{},
	}
	cp := newConnPool(tr, rt, t.MaxConns)
	cp.followsRedirects = redirects == provider.RedirectsSameOrigin
	pool.add(cp)
	return &http.Client{Transport: cp, CheckRedirect: redirectPolicy(redirects)}, nil
}

// dialer returns the TCP dialer for t: dial_timeout (defaulted, see
// provider.DefaultTransport) and keep-alive probes.
func dialer(t provider.Transport) *net.Dialer {
	return &net.Dialer{Timeout: t.WithDefaults().DialTimeout, KeepAlive: tcpKeepAlive}
}

// tlsConfig returns the TLS settings for t: nil (net/http's defaults)
// without a CA bundle or client certificate.
func tlsConfig(t provider.Transport) (*tls.Config, error) {
	if t.CAFile == "" && t.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pool, _, err := capool.Read(t.CAFile)
		if err != nil {
			return nil, &provider.ConfigProblem{Field: "transport.ca_file", Problem: err.Error()}
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, &provider.ConfigProblem{Field: "transport.cert_file", Problem: "with key_file: " + err.Error()}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// redirectPolicy returns the client's CheckRedirect: with
// provider.RedirectsSameOrigin it follows 307 and 308 redirects (which keep
// the method and the body) to the request's own scheme, host and port, at
// most provider.MaxRedirects in a row; otherwise, and for every other
// redirect, it stops, and the redirect response is the attempt's answer (a
// provider error with its status). A redirect that is not followed sends
// nothing to its target: no credentials, no prompt.
func redirectPolicy(policy string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if policy != provider.RedirectsSameOrigin || len(via) > provider.MaxRedirects || req.Response == nil {
			return http.ErrUseLastResponse
		}
		switch req.Response.StatusCode {
		case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return http.ErrUseLastResponse
		}
		if !sameOrigin(req.URL, via[0].URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (the scheme's default port when none is given).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// dialFunc is a transport's DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// testDial, set by tests before clients are built, wraps every client's
// dialer (to reach a made-up host name on loopback).
var testDial func(dialFunc) dialFunc

// transports are the transports of the clients NewClient built, so that
// CloseIdleConnections reaches them all.
type transports struct {
	mu  sync.Mutex
	all map[idleCloser]struct{}
}

// idleCloser is a client's transport.
type idleCloser interface{ CloseIdleConnections() }

var pool = &transports{all: map[idleCloser]struct{}{}}

func (p *transports) add(tr idleCloser) {
	p.mu.Lock()
	p.all[tr] = struct{}{}
	p.mu.Unlock()
}

func (p *transports) remove(tr idleCloser) {
	tr.CloseIdleConnections()
	p.mu.Lock()
	delete(p.all, tr)
	p.mu.Unlock()
}

// release closes the idle connections of the client's transport and forgets
// it once owner is garbage: a provider that is no longer used keeps nothing
// open.
func release(owner *Endpoint, c *http.Client) {
	if tr, ok := c.Transport.(idleCloser); ok {
		runtime.AddCleanup(owner, pool.remove, tr)
	}
}

// CloseIdleConnections closes the idle connections of every client
// NewClient built. Tests call it so that no keep-alive goroutine outlives
// them.
func CloseIdleConnections() {
	pool.mu.Lock()
	all := make([]idleCloser, 0, len(pool.all))
	for tr := range pool.all {
		all = append(all, tr)
	}
	pool.mu.Unlock()
	for _, tr := range all {
		tr.CloseIdleConnections()
	}
}
