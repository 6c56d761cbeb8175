// Package httpx holds what llmrelay's HTTP provider adapters share: one tuned
// http.Client for every provider, a lean server-sent-events reader that reuses
// its buffers, the plumbing that turns a streamed response into a
// provider.Stream, and the mapping of HTTP failures (status, retry hints,
// x-should-retry, dropped or malformed streams) to *provider.Error.
//
// It knows nothing of any one provider's wire format: adapters supply a
// Decoder for their events and a parser for their error bodies.
package httpx

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Transport settings. Streams are long and many run at once, so the idle
// pool per host is large, and only connection set-up and the wait for
// response headers are bounded here: the rest is bounded by the attempt's
// context (the provider's timeout, the call's deadline, and the stream idle
// timer, which also runs while the headers are awaited).
const (
	// DialTimeout bounds establishing a TCP connection.
	DialTimeout = 10 * time.Second
	// TLSHandshakeTimeout bounds the TLS handshake.
	TLSHandshakeTimeout = 10 * time.Second
	// ResponseHeaderTimeout bounds the wait for response headers once the
	// request is written. The attempt's stream idle timer (the request's
	// stream_idle_timeout, 30s by default) runs during that wait too and
	// ends it first unless it is longer than this: this bound matters only
	// to calls with a long idle timeout, such as one that waits for a local
	// server to load a model.
	ResponseHeaderTimeout = 2 * time.Minute
	// IdleConnTimeout is how long an idle keep-alive connection is kept.
	IdleConnTimeout = 90 * time.Second
	// MaxIdleConnsPerHost sizes the idle pool per provider host for
	// concurrent streams (net/http's default is 2).
	MaxIdleConnsPerHost = 256
)

// NewTransport returns an http.Transport tuned for many concurrent,
// long-lived streaming responses: keep-alive with a large idle pool per
// host, HTTP/2 where the server offers it, proxies from the environment, and
// dial, TLS-handshake and response-header timeouts.
func NewTransport() *http.Transport {
	d := &net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * MaxIdleConnsPerHost,
		MaxIdleConnsPerHost:   MaxIdleConnsPerHost,
		IdleConnTimeout:       IdleConnTimeout,
		TLSHandshakeTimeout:   TLSHandshakeTimeout,
		ResponseHeaderTimeout: ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
}

var shared = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: NewTransport()}
})

// Client returns the http.Client every adapter shares, built once with
// NewTransport. It has no overall timeout: each attempt's context bounds it.
// It is safe for concurrent use.
func Client() *http.Client { return shared() }

// CloseIdleConnections closes the shared client's idle connections. Tests
// call it so that no keep-alive goroutine outlives them.
func CloseIdleConnections() { shared().CloseIdleConnections() }
