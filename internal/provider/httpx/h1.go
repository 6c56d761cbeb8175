package httpx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llmrelay/llmrelay/internal/offstack"
)

// h1Transport sends a provider's plain-HTTP requests (http://, no proxy)
// over HTTP/1.1 connections it keeps itself, writing each request and
// reading its response on the caller's goroutine. net/http's Transport
// gives every connection a read loop and a write loop goroutine and hands
// the request and the response between them and the caller; for a
// streamed reply held open for seconds, that is two goroutines, a 4 KiB
// write buffer and two goroutine hand-offs per stream. Here a connection
// is its socket and a small read buffer (see h1Conn); the request and the
// response headers are written and parsed by net/http itself
// (Request.Write, http.ReadResponse, on offstack's workers: see
// writeRequest and exchange), the body is read from the socket by whoever
// reads the response. Everything else (https, which negotiates HTTP/2 and
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
//
// A response's head is read into a 4 KiB buffer shared between the
// connections (headBuffers), taken once its first bytes are there, so
// that it is there whole before it is parsed (see exchange); the body,
// read by the stream's own reader in reads of its size, needs only a small
// buffer of its own (for the chunk lines). So the connection's reader, br,
// which the response's body keeps, switches between the two: a head
// buffer from the pool while one is in use (head), the connection's own
// small one once it is empty (small, the state br takes back). A request
// waiting for its answer, and a stream held open, hold no head buffer.
type h1Conn struct {
	net.Conn
	br     *bufio.Reader
	small  bufio.Reader  // br with the connection's small buffer, empty
	head   *bufio.Reader // the head buffer br reads into, nil when none
	host   *h1Host
	idleAt time.Time
	reused bool
	waiter *byteWaiter // see awaitBytes; nil until the first wait
}

// Buffer sizes of an h1Conn: a response head up to headBufferSize is
// parsed at once (a larger one as it comes), a body's chunk lines fit in
// smallBufferSize.
const (
	headBufferSize  = 4 << 10
	smallBufferSize = 256
)

// headBuffers are the readers whose buffers connections read response
// heads into.
var headBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, headBufferSize) }}

// newH1Conn returns conn as an h1Conn of h.
func newH1Conn(conn net.Conn, h *h1Host) *h1Conn {
	c := &h1Conn{Conn: conn, host: h}
	c.small = *bufio.NewReaderSize(conn, smallBufferSize)
	c.br = new(bufio.Reader)
	*c.br = c.small
	return c
}

// readHeads makes br read into a head buffer; br is empty.
func (c *h1Conn) readHeads() {
	if c.head != nil {
		return
	}
	c.head = headBuffers.Get().(*bufio.Reader)
	c.head.Reset(c.Conn)
	*c.br = *c.head
}

// readBody gives br back its small buffer once it has read everything in
// the head buffer, which goes back to the pool.
func (c *h1Conn) readBody() {
	if c.head == nil || c.br.Buffered() > 0 {
		return
	}
	c.small.Reset(c.Conn)
	*c.br = c.small
	headBuffers.Put(c.head)
	c.head = nil
}

// testAwaiting, set by tests, is called when a request starts waiting for
// its response's first byte with no head buffer (see awaitBytes).
var testAwaiting func(*h1Conn)

// netHTTPOnly sends every request through net/http's Transport.
var netHTTPOnly bool

// UseNetHTTPOnly makes the clients built after it send every request
// through net/http's Transport, plain HTTP included: the benchmark's floor
// as it was before httpx kept HTTP/1.1 connections of its own.
func UseNetHTTPOnly() { netHTTPOnly = true }

// writeBuffers serve a request's write; a connection keeps none.
var writeBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// requestBytes serve the requests serialized before they are written;
// those that grew past maxPooledRequest are not kept.
var requestBytes = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledRequest = 64 << 10

// writeRequest writes req to conn. A request whose body is in memory (no
// body, or one net/http can replay: GetBody, which http.NewRequest sets
// for a bytes.Reader, bytes.Buffer or strings.Reader) is serialized first,
// and its bytes written to conn from the caller's goroutine, the call's
// handler, which then waits for the response with the small stack it keeps
// for the stream's life. appendRequest serializes the plain ones on that
// stack; Request.Write, which needs a few KiB of stack, serializes the
// others on offstack's workers. Any other body may wait for its reader,
// so it is written by the caller through a buffer.
func writeRequest(conn net.Conn, req *http.Request) error {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		bw := writeBuffers.Get().(*bufio.Writer)
		bw.Reset(conn)
		err := req.Write(bw)
		if err == nil {
			err = bw.Flush()
		}
		bw.Reset(nil)
		writeBuffers.Put(bw)
		return err
	}
	buf := requestBytes.Get().(*bytes.Buffer)
	ok, err := appendRequest(buf, req)
	if !ok {
		offstack.Run(func() { err = req.Write(buf) })
	}
	if err == nil {
		_, err = conn.Write(buf.Bytes())
	}
	if buf.Cap() <= maxPooledRequest {
		buf.Reset()
		requestBytes.Put(buf)
	}
	return err
}

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
		if req = rewound(req); req == nil {
			return nil, err
		}
	}
}

// send sends hr with client. A client that follows no redirect (the
// default, redirects: never) sends through its connection pool directly,
// without http.Client's layers, which would stay on the stack of the
// call's handler while it waits for the response's head (about 1 KiB of
// it, part of the difference between a handler that keeps an 8 KiB stack
// for the stream's life and one that grows to 16 KiB). For such a client
// http.Client does nothing send does not: the URL's user info becomes
// basic authentication, an error is a *url.Error, and a redirect is the
// response. A client that follows redirects sends its requests itself.
func send(client *http.Client, hr *http.Request) (*http.Response, error) {
	cp, ok := client.Transport.(*connPool)
	if !ok || cp.followsRedirects {
		return client.Do(hr)
	}
	if u := hr.URL.User; u != nil && hr.Header.Get("Authorization") == "" {
		pw, _ := u.Password()
		hr.SetBasicAuth(u.Username(), pw)
	}
	resp, err := cp.RoundTrip(hr)
	if err != nil {
		return nil, &url.Error{Op: urlErrorOp(hr.Method), URL: hr.URL.String(), Err: err}
	}
	return resp, nil
}

// urlErrorOp is the Op of http.Client's *url.Error for method: "Post" for
// POST.
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
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
	if err := writeRequest(c.Conn, req); err != nil {
		return fail(err)
	}
	if t.headerTimeout > 0 {
		_ = c.SetReadDeadline(time.Now().Add(t.headerTimeout))
	}
	// The provider takes its time before the first byte of an answer
	// (a model's time to first token): the request waits for it holding
	// no head buffer, so that the buffers in use, and those the pool
	// keeps after a burst of new calls, are those of heads arriving.
	if c.br.Buffered() == 0 {
		awaitBytes(c)
	}
	c.readHeads()
	var resp *http.Response
	for {
		// The handler waits for the head with the few frames of a read;
		// the head, all there, is parsed on offstack's workers.
		var err error
		switch werr := waitHead(c.br); {
		case werr == nil:
			offstack.Run(func() { resp, err = http.ReadResponse(c.br, req) })
		case errors.Is(werr, bufio.ErrBufferFull):
			// A head larger than the read buffer: parsed as it comes.
			resp, err = http.ReadResponse(c.br, req)
		case werr == io.EOF:
			// The connection ended before a whole head (ReadResponse's
			// word for it).
			err = io.ErrUnexpectedEOF
		default:
			err = werr
		}
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
	chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
	resp.Body = &h1Body{body: resp.Body, ctx: ctx, c: c, t: t, stop: stop, keep: !resp.Close && !req.Close, chunked: chunked}
	return resp, nil
}

// The timeouts of httpx's own connections, in net/http's words, as
// net.Errors that timed out: errHeaderTimeout for a response whose headers
// did not come within the response header timeout, errTLSHandshakeTimeout
// for a TLS handshake that took longer than TLSHandshakeTimeout.
var (
	errHeaderTimeout       error = timeoutError("net/http: timeout awaiting response headers")
	errTLSHandshakeTimeout error = timeoutError("net/http: TLS handshake timeout")
)

// timeoutError is a net.Error that timed out, with its message.
type timeoutError string

func (e timeoutError) Error() string { return string(e) }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

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
	conn, err := t.dialAside(ctx, addr)
	if err != nil {
		if h.slots != nil {
			<-h.slots
		}
		return nil, err
	}
	return newH1Conn(conn, h), nil
}

// dialAside dials addr on a goroutine of its own, which ends with the
// dial: connecting goes through a dozen of the net package's frames (about
// 3 KiB of stack), which would otherwise grow the stack of the call's
// handler for the stream's life.
func (t *h1Transport) dialAside(ctx context.Context, addr string) (net.Conn, error) {
	type dialed struct {
		conn net.Conn
		err  error
	}
	ch := make(chan dialed, 1)
	go func() {
		conn, err := t.dial(ctx, "tcp", addr)
		ch <- dialed{conn, err}
	}()
	d := <-ch
	return d.conn, d.err
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
	c.readBody()
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
	// chunked: the body comes in chunks (Transfer-Encoding: chunked).
	chunked bool

	mu   sync.Mutex
	done bool
	// bounded: drainArrived limited the connection's reads to its buffer
	// (a read deadline in the past), which finish lifts.
	bounded bool
	// aborted: abortRead closed the connection before the body ended.
	aborted bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	// Before and after each read: a stream that waits for more waits
	// with its connection's small buffer.
	b.c.readBody()
	n, err := b.body.Read(p)
	b.c.readBody()
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

// awaitData waits until a Read would not wait with nothing (see
// dataAwaiter): bytes in the connection's buffer, or on its socket (where
// awaitBytes can wait for them), or the body already at its end. Bytes
// that arrived may turn out to be only the chunked framing, whose Read
// then waits for the rest in the reader's buffer.
func (b *h1Body) awaitData() bool {
	b.mu.Lock()
	done := b.done // the connection is another request's, or closed
	b.mu.Unlock()
	// An empty body (Content-Length: 0) is http.NoBody, at its end before
	// any byte: waiting for the socket waited for the next response's.
	if done || b.body == http.NoBody || b.c.br.Buffered() > 0 {
		return true
	}
	return awaitBytes(b.c)
}

// endArrived tells whether reading the body to its end needs no more
// bytes from the network (see endArriver): the body ended, or the
// connection's buffer holds exactly what a chunked body ends with, the
// last chunk's line break (if not read yet), the empty last chunk and no
// trailer.
func (b *h1Body) endArrived() bool {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if done || b.body == http.NoBody {
		return true
	}
	if !b.chunked {
		return false
	}
	rest, _ := b.c.br.Peek(b.c.br.Buffered())
	return string(rest) == "0\r\n\r\n" || string(rest) == "\r\n0\r\n\r\n"
}

// drainArrived drains r, the stream's reader of b, to b's end, if b's end
// has arrived (endArrived), with the connection's reads limited to what
// its buffer holds: bytes that only looked like the end (the rest of a
// chunk's data) fail the read at once, and the connection is dropped,
// rather than waiting for more without a time limit. False, with nothing
// read, when the end has not arrived.
func (b *h1Body) drainArrived(r *Reader) bool {
	if !b.endArrived() {
		return false
	}
	b.mu.Lock()
	if !b.done {
		b.bounded = true
		_ = b.c.SetReadDeadline(aLongTimeAgo) // no runtime timer: in the past
	}
	b.mu.Unlock()
	r.Drain(drainLimit)
	return true
}

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// abortRead closes the connection, which ends a read waiting on it; the
// body's Close then drops the connection. It may come late (the drain's
// time limit fires as the drain's read ends): once the body has ended,
// the connection is the pool's or the next request's, and it is left
// alone; before, the body is marked aborted, so that a read of bytes
// already buffered that ends the body does not give the closed
// connection back to the pool.
func (b *h1Body) abortRead() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.aborted = true
	_ = b.c.Conn.Close()
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
	if b.bounded {
		// The connection's next request reads without drainArrived's
		// limit.
		_ = b.c.SetReadDeadline(time.Time{})
	}
	// stop is false when the request's cancellation already closed the
	// connection; aborted, when abortRead did.
	if b.stop() && whole && b.keep && !b.aborted {
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

// waitHead waits until br holds a whole response head, up to its blank
// line: nil once it does, bufio.ErrBufferFull when the buffer filled
// first, else the read's error.
func waitHead(br *bufio.Reader) error {
	for seen := 0; ; {
		b, _ := br.Peek(br.Buffered()) // what is there, without a read
		// Only the bytes new since the last look, and the three before
		// them, can complete the blank line.
		from := max(seen-3, 0)
		if bytes.Contains(b[from:], []byte("\r\n\r\n")) || bytes.Contains(b[from:], []byte("\n\n")) {
			return nil
		}
		seen = len(b)
		if _, err := br.Peek(seen + 1); err != nil {
			return err
		}
	}
}
