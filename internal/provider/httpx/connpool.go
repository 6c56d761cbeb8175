package httpx

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
)

// connPool is the RoundTripper of the clients NewClientConn builds. An https
// request goes over the HTTP/2 connections it keeps per host: a request
// takes a free stream slot on one of them; when none is free, one new
// connection is dialed for the host (never more than one at a time, nor
// more than maxConns) and the requests that found none wait, bounded by
// their context, for it or for a stream to end. net/http's own pool would
// dial a connection for every request that finds the connections at the
// server's stream limit, so a ramp of streams opens thousands of
// connections with a few streams each.
//
// Every plain-http request goes to plain (h1Transport), and an https
// request to a host whose server does not negotiate HTTP/2 to base,
// net/http's Transport, with its keep-alive pool. The HTTP/2 connections
// to a host reached directly are httpx's own (h2Conn: no goroutine per
// stream), dialed with base's dialer, TLS settings and timeouts and
// keeping its HTTP/2 settings (health pings), idle and response header
// timeouts; through a proxy (or with UseNetHTTPOnly) they are net/http's
// (Transport.NewClientConn), which tunnels through it.
//
// Until a new connection has the server's SETTINGS (a fraction of a round
// trip after the handshake), it counts as having HTTP/2's default of 100
// streams; against a server with a lower limit, requests that took those
// slots wait on that connection. A request whose connection fails under it
// fails (a transport failure the attempt plan may retry); it is not sent
// again on another connection here, but for a stream the server's GOAWAY
// said it did not process, which goes again on another connection (body
// rewound), up to maxUnprocessedTries sends, as net/http's client sends it.
type connPool struct {
	base     *http.Transport
	plain    *h1Transport // its CloseIdleConnections closes base's too
	maxConns int          // 0: no bound
	// followsRedirects says the client over this pool follows same-origin
	// redirects (redirects: same_origin): its requests, plain HTTP and
	// HTTPS alike, go through http.Client, which does (see send).
	followsRedirects bool

	mu    sync.Mutex
	hosts map[string]*hostConns
}

// hostConns are one host's HTTP/2 connections and the requests waiting for
// a stream slot. Guarded by connPool.mu.
type hostConns struct {
	conns   []muxConn
	dial    *dialCall // the connection being dialed, if any
	waiting []chan struct{}
	http1   bool   // the server did not negotiate HTTP/2: use base
	gen     uint64 // counts changes: a connection added, changed or gone
}

// muxConn is an HTTP/2 connection of the pool: an h2Conn, or net/http's
// ClientConn (netHTTPConn), with http.ClientConn's meanings: Reserve takes
// a stream slot for one RoundTrip; Available and InFlight count the slots;
// Err is non-nil once no new stream may start; the state hook runs when a
// stream ends, the server's limit changes, or the connection goes away.
type muxConn interface {
	Reserve() error
	RoundTrip(*http.Request) (*http.Response, error)
	Available() int
	InFlight() int
	Close() error
	Err() error
	SetStateHook(func())
}

// netHTTPConn is net/http's HTTP/2 client connection as a muxConn.
type netHTTPConn struct{ *http.ClientConn }

func (c netHTTPConn) SetStateHook(f func()) {
	c.ClientConn.SetStateHook(func(*http.ClientConn) { f() })
}

// dialCall is one connection being dialed; done is closed when it ends.
type dialCall struct {
	done chan struct{}
	err  error
}

// errNotHTTP2 marks a host whose server chose HTTP/1.1.
var errNotHTTP2 = errors.New("server does not speak HTTP/2")

// testWaiting, set by tests, is called when a request starts waiting for a
// stream slot.
var testWaiting func()

func newConnPool(base *http.Transport, plain *h1Transport, maxConns int) *connPool {
	return &connPool{base: base, plain: plain, maxConns: maxConns, hosts: map[string]*hostConns{}}
}

// RoundTrip sends req over a stream slot of one of its host's HTTP/2
// connections, waiting for one as described on connPool, and again on
// another when a GOAWAY left its stream unprocessed.
func (p *connPool) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return p.plain.RoundTrip(req)
	}
	if netHTTPOnly {
		return p.base.RoundTrip(req)
	}
	for tries := 1; ; tries++ {
		cc, err := p.reserve(req.Context(), canonicalAddr(req.URL))
		if errors.Is(err, errNotHTTP2) {
			return p.base.RoundTrip(req)
		}
		if err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
		resp, err := cc.RoundTrip(req)
		var goAway h2GoAwayError
		if err == nil || tries == maxUnprocessedTries || !errors.As(err, &goAway) {
			return resp, err
		}
		// The server's GOAWAY said it did not process the stream (a
		// connection it closed as the request went out, idle or
		// shutting down): it goes again, on another connection, as
		// net/http's client sends it; a body goes again if it can.
		if again := rewound(req); again != nil {
			req = again
			continue
		}
		return nil, err
	}
}

// maxUnprocessedTries bounds the sends of a request whose streams a
// server's GOAWAY left unprocessed.
const maxUnprocessedTries = 3

// rewound returns req to send again, with its body from the start; nil
// when its body cannot be read again.
func rewound(req *http.Request) *http.Request {
	if req.Body == nil || req.Body == http.NoBody {
		return req
	}
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	again := *req
	again.Body = body
	return &again
}

// reserve returns a connection to addr with a stream slot reserved for the
// caller, dialing one when none has a free slot and no dial is under way.
// ClientConn.Reserve may run a connection's state hook, which takes p.mu,
// so it is called without p.mu; gen tells whether anything changed
// meanwhile.
func (p *connPool) reserve(ctx context.Context, addr string) (muxConn, error) {
	p.mu.Lock()
	h := p.hosts[addr]
	if h == nil {
		h = &hostConns{}
		p.hosts[addr] = h
	}
	for {
		if h.http1 {
			p.mu.Unlock()
			return nil, errNotHTTP2
		}
		conns, gen := slices.Clone(h.conns), h.gen
		p.mu.Unlock()
		for _, cc := range conns {
			if cc.Reserve() == nil {
				return cc, nil
			}
		}
		p.mu.Lock()
		if h.gen != gen {
			continue
		}
		if h.dial == nil && p.roomLocked(h) {
			h.dial = &dialCall{done: make(chan struct{})}
			go p.dialConn(h, addr, h.dial)
		}
		d := h.dial
		var dialDone chan struct{}
		if d != nil {
			dialDone = d.done
		}
		wake := make(chan struct{})
		h.waiting = append(h.waiting, wake)
		p.mu.Unlock()
		if testWaiting != nil {
			testWaiting()
		}
		var err error
		select {
		case <-wake:
		case <-dialDone:
			err = d.err
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
		p.mu.Lock()
		h.waiting = slices.DeleteFunc(h.waiting, func(c chan struct{}) bool { return c == wake })
		if err != nil {
			p.wakeLocked(h) // pass on a wake this caller may have been sent
			p.mu.Unlock()
			return nil, err
		}
	}
}

// roomLocked reports whether h may have one more connection.
func (p *connPool) roomLocked(h *hostConns) bool {
	return p.maxConns == 0 || len(h.conns) < p.maxConns
}

// dialConn dials a connection to addr for h and reports it through d. Its
// context is not any one request's: the requests waiting for it come and go.
// base's dial and TLS-handshake timeouts bound it.
func (p *connPool) dialConn(h *hostConns, addr string, d *dialCall) {
	cc, err := p.dial(addr)
	p.mu.Lock()
	h.dial = nil
	switch {
	case err != nil:
		d.err = err
	case cc == nil:
		h.http1 = true
	default:
		h.conns = append(h.conns, cc)
	}
	h.gen++
	close(d.done)
	p.wakeLocked(h)
	p.mu.Unlock()
	if cc != nil {
		// Outside p.mu: SetStateHook may run the hook at once.
		cc.SetStateHook(func() { p.changed(h, cc) })
	}
}

// dial opens an HTTP/2 connection to addr: httpx's own when addr is
// reached directly, net/http's through a proxy or with UseNetHTTPOnly. It
// returns nil and no error when the server chose HTTP/1.1.
func (p *connPool) dial(addr string) (muxConn, error) {
	if !netHTTPOnly && p.direct(addr) {
		cc, err := dialH2(p.base, addr)
		if cc == nil || err != nil {
			return nil, err // a nil *h2Conn is not a nil muxConn
		}
		return cc, nil
	}
	var proto string
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		TLSHandshakeDone: func(cs tls.ConnectionState, _ error) { proto = cs.NegotiatedProtocol },
	})
	cc, err := p.base.NewClientConn(ctx, "https", addr)
	if err != nil {
		return nil, err
	}
	if proto != "h2" {
		_ = cc.Close()
		return nil, nil
	}
	return netHTTPConn{cc}, nil
}

// ownConnections reports whether client sends req over httpx's own
// connections, whose response bodies are readAborters: plain HTTP without
// a proxy (h1Transport), or HTTPS without a proxy to a host not known to
// lack HTTP/2 (h2Conn). A host whose first connection turns out to speak
// only HTTP/1.1 is answered by net/http that once.
func ownConnections(client *http.Client, req *http.Request) bool {
	p, ok := client.Transport.(*connPool)
	if !ok || netHTTPOnly {
		return false
	}
	switch req.URL.Scheme {
	case "http":
		return p.plain.direct(req)
	case "https":
		addr := canonicalAddr(req.URL)
		p.mu.Lock()
		h := p.hosts[addr]
		http1 := h != nil && h.http1
		p.mu.Unlock()
		return !http1 && p.direct(addr)
	}
	return false
}

// direct reports whether base's proxy settings send https requests to
// addr directly.
func (p *connPool) direct(addr string) bool {
	if p.base.Proxy == nil {
		return true
	}
	u, err := p.base.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: addr}})
	return err == nil && u == nil
}

// changed is a connection's state hook: a stream ended, the server raised
// its limit, or the connection closed.
func (p *connPool) changed(h *hostConns, cc muxConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc.Err() != nil {
		h.conns = slices.DeleteFunc(h.conns, func(c muxConn) bool { return c == cc })
	}
	h.gen++
	p.wakeLocked(h)
}

// wakeLocked wakes as many waiting requests as there are free stream slots,
// and one more when a closed connection left room for a new dial.
func (p *connPool) wakeLocked(h *hostConns) {
	free := 0
	for _, cc := range h.conns {
		free += cc.Available()
	}
	if h.dial == nil && p.roomLocked(h) {
		free++
	}
	for ; free > 0 && len(h.waiting) > 0; free-- {
		close(h.waiting[0])
		h.waiting[0] = nil // the array keeps no woken waiter's channel
		h.waiting = h.waiting[1:]
	}
}

// CloseIdleConnections closes the connections with no request in flight,
// plain's and base's included.
func (p *connPool) CloseIdleConnections() {
	p.plain.CloseIdleConnections()
	p.mu.Lock()
	var idle []muxConn
	for _, h := range p.hosts {
		for _, cc := range h.conns {
			if cc.InFlight() == 0 {
				idle = append(idle, cc)
			}
		}
	}
	p.mu.Unlock()
	for _, cc := range idle {
		_ = cc.Close() // its state hook forgets it
	}
}
