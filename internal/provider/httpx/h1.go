package httpx

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"
	"time"
)

// h1Transport sends a provider's plain-HTTP requests (http://, no proxy)
// over HTTP/1.1 connections it keeps itself, writing each request and
// reading its response on the caller's goroutine. net/http's Transport
// gives every connection a read loop and a write loop goroutine and hands
// the request and the response between them and the caller; for a
// streamed reply held open for seconds, that is two goroutines, a 4 KiB
// write buffer and two goroutine hand-offs per stream. Here a connection
// is its socket and a 4 KiB read buffer; the request and the response
// headers are written and parsed by net/http itself (Request.Write,
// http.ReadResponse), the body is read from the socket by whoever reads
// the response. Everything else (https, which negotiates HTTP/2 and
// multiplexes; a proxy; an upgrade) goes to next, net/http's Transport.
type h1Transport struct {
	next  *http.Transport
	proxy func(*http.Request) (*url.URL, error)
	dial  dialFunc
	// headerTimeout bounds the wait for the response headers (0: none);
	// idleTimeout closes a connection idle that long; maxIdle is the
	// idle connections kept per host; maxConns bounds a host's
	// connections (0: no bound).
	headerTimeout time.Duration
	idleTimeout   time.Duration
	maxIdle       int
	maxConns      int

	mu    sync.Mutex
	hosts map[string]*h1Host // by host:port
}

// h1Host is one upstream address's connections.
type h1Host struct {
	idle  []*h1Conn     // most recently used last
	slots chan struct{} // a token per open connection, when maxConns > 0
	reap  *time.Timer   // closes idle connections past the idle timeout
}

// h1Conn is one HTTP/1.1 connection: the socket and its read buffer.
type h1Conn struct {
	net.Conn
	br     *bufio.Reader
	host   *h1Host
	idleAt time.Time
	reused bool
}

// netHTTPOnly sends every request through net/http's Transport.
var netHTTPOnly bool

// UseNetHTTPOnly makes the clients built after it send every request
// through net/http's Transport, plain HTTP included: the benchmark's floor
// as it was before httpx kept HTTP/1.1 connections of its own.
func UseNetHTTPOnly() { netHTTPOnly = true }

// writeBuffers serve a request's write; a connection keeps none.
var writeBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// direct reports whether req goes over a connection of t's own: plain
// HTTP, no proxy for its URL, no upgrade.
func (t *h1Transport) direct(req *http.Request) bool {
	if netHTTPOnly || req.URL.Scheme != "http" || req.Method == http.MethodConnect || req.Header.Get("Upgrade") != "" {
		return false
	}
	if t.proxy != nil {
		if u, err := t.proxy(req); err != nil || u != nil {
			return false
		}
	}
	return true
}

// RoundTrip implements http.RoundTripper. A request that fails on a reused
// connection before any byte of its response arrived (the upstream closed
// the idle connection as the request went out: it never read it) is sent
// once more on a new connection, as net/http does.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.direct(req) {
		return t.next.RoundTrip(req)
	}
	addr := canonicalAddr(req.URL)
	for fresh := false; ; fresh = true {
		c, err := t.get(req.Context(), addr, fresh)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(c, req)
		if err == nil {
			return resp, nil
		}
		if fresh || !c.reused || !closedUnderUs(err) || req.Context().Err() != nil {
			return nil, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// exchange writes req on c and reads the response's headers. The response
// body owns c from then on; on an error c is closed.
func (t *h1Transport) exchange(c *h1Conn, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// A cancelled request closes its connection, which ends any read or
	// write on it; no goroutine waits for that meanwhile.
	stop := context.AfterFunc(ctx, func() { _ = c.Conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		t.drop(c)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	bw := writeBuffers.Get().(*bufio.Writer)
	bw.Reset(c.Conn)
	err := req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writeBuffers.Put(bw)
	if err != nil {
		return fail(err)
	}
	if t.headerTimeout > 0 {
		_ = c.SetReadDeadline(time.Now().Add(t.headerTimeout))
	}
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(c.br, req)
		if err != nil {
			if t.headerTimeout > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				err = errHeaderTimeout
			}
			return fail(err)
		}
		// An informational answer (100 Continue, 103 Early Hints) comes
		// before the response.
		if resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		break
	}
	if t.headerTimeout > 0 {
		_ = c.SetReadDeadline(time.Time{})
	}
	resp.Body = &h1Body{body: resp.Body, ctx: ctx, c: c, t: t, stop: stop, keep: !resp.Close && !req.Close}
	return resp, nil
}

// errHeaderTimeout is the error of a response whose headers did not come
// within the response header timeout (net/http's words, a net.Error that
// timed out).
var errHeaderTimeout error = headerTimeoutError{}

type headerTimeoutError struct{}

func (headerTimeoutError) Error() string   { return "net/http: timeout awaiting response headers" }
func (headerTimeoutError) Timeout() bool   { return true }
func (headerTimeoutError) Temporary() bool { return true }

// closedUnderUs reports whether err says the connection was closed or
// reset by the other side.
func closedUnderUs(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// get returns an idle connection to addr (unless fresh) or a new one.
func (t *h1Transport) get(ctx context.Context, addr string, fresh bool) (*h1Conn, error) {
	h := t.host(addr)
	if h.slots != nil {
		select {
		case h.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if !fresh {
		t.mu.Lock()
		for n := len(h.idle); n > 0; n = len(h.idle) {
			c := h.idle[n-1]
			h.idle = h.idle[:n-1]
			if time.Since(c.idleAt) < t.idleTimeout {
				t.mu.Unlock()
				c.reused = true
				return c, nil
			}
			_ = c.Conn.Close()
		}
		t.mu.Unlock()
	}
	conn, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		if h.slots != nil {
			<-h.slots
		}
		return nil, err
	}
	return &h1Conn{Conn: conn, br: bufio.NewReaderSize(conn, 4<<10), host: h}, nil
}

// host returns addr's connections, made on first use.
func (t *h1Transport) host(addr string) *h1Host {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[addr]
	if h == nil {
		h = &h1Host{}
		if t.maxConns > 0 {
			h.slots = make(chan struct{}, t.maxConns)
		}
		t.hosts[addr] = h
	}
	return h
}

// put keeps c for the next request to its host, or closes it when the
// host already keeps maxIdle.
func (t *h1Transport) put(c *h1Conn) {
	h := c.host
	c.idleAt = time.Now()
	t.mu.Lock()
	keep := len(h.idle) < t.maxIdle && c.br.Buffered() == 0
	if keep {
		h.idle = append(h.idle, c)
		if h.reap == nil {
			h.reap = time.AfterFunc(t.idleTimeout, func() { t.reapIdle(h) })
		}
	}
	t.mu.Unlock()
	if h.slots != nil {
		<-h.slots
	}
	if !keep {
		_ = c.Conn.Close()
	}
}

// drop closes c, which is not kept.
func (t *h1Transport) drop(c *h1Conn) {
	_ = c.Conn.Close()
	if c.host.slots != nil {
		<-c.host.slots
	}
}

// reapIdle closes h's connections idle past the idle timeout, and comes
// back while some are left.
func (t *h1Transport) reapIdle(h *h1Host) {
	var old []*h1Conn
	t.mu.Lock()
	kept := h.idle[:0]
	for _, c := range h.idle {
		if time.Since(c.idleAt) >= t.idleTimeout {
			old = append(old, c)
		} else {
			kept = append(kept, c)
		}
	}
	clear(h.idle[len(kept):])
	h.idle = kept
	h.reap = nil
	if len(kept) > 0 {
		h.reap = time.AfterFunc(t.idleTimeout, func() { t.reapIdle(h) })
	}
	t.mu.Unlock()
	for _, c := range old {
		_ = c.Conn.Close()
	}
}

// CloseIdleConnections closes the idle connections, net/http's included.
func (t *h1Transport) CloseIdleConnections() {
	var idle []*h1Conn
	t.mu.Lock()
	for _, h := range t.hosts {
		idle = append(idle, h.idle...)
		h.idle = nil
		if h.reap != nil {
			h.reap.Stop()
			h.reap = nil
		}
	}
	t.mu.Unlock()
	for _, c := range idle {
		_ = c.Conn.Close()
	}
	t.next.CloseIdleConnections()
}

// h1Body is a response body on an h1Conn: read to its end, the connection
// goes back to the pool (unless the response or the request asked to
// close it); closed before, the connection is closed.
type h1Body struct {
	body io.ReadCloser
	ctx  context.Context // the request's
	c    *h1Conn
	t    *h1Transport
	stop func() bool // the cancellation's AfterFunc
	keep bool

	mu   sync.Mutex
	done bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		// A read the request's cancellation cut says so, as net/http's do.
		if cerr := b.ctx.Err(); cerr != nil {
			err = cerr
		}
	}
	return n, err
}

func (b *h1Body) Close() error {
	b.finish(false)
	return nil
}

// finish gives the connection back (whole: the body was read to its end)
// or closes it, once.
func (b *h1Body) finish(whole bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	// stop is false when the request's cancellation already closed the
	// connection.
	if b.stop() && whole && b.keep {
		b.t.put(b.c)
		return
	}
	b.t.drop(b.c)
}

// canonicalAddr is u's host:port, the scheme's default port (port) when u
// names none: the key of a host's connections.
func canonicalAddr(u *url.URL) string {
	return net.JoinHostPort(u.Hostname(), port(u))
}
