package httpx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/llmrelay/llmrelay/internal/offstack"
)

// h2Conn is one HTTP/2 client connection that llmrelay keeps itself (see
// connPool, which uses it for https requests that go direct, without a
// proxy). net/http's HTTP/2 client runs a goroutine per request for the
// whole of its stream (about 4–5 KiB of stack) and keeps some 2.3 KiB of
// heap per stream (its stream state, a 1 KiB data chunk, the response);
// with thousands of slow streams held open that is most of their cost.
// Here a held stream is an h2Stream of a few hundred bytes and no
// goroutine: the connection has one goroutine that reads frames (readLoop)
// and one that writes what the others queued (writeLoop), and each
// request's own goroutine, the call's handler, starts its stream, waits for
// the response headers and reads the body.
//
// Framing and header compression are golang.org/x/net/http2's Framer and
// hpack; the connection's state (streams, flow control, settings, pings,
// GOAWAY) is kept here. Everything that changes it happens under mu, which
// is never held across I/O: frames are written into out, under mu, and
// writeLoop sends them. Encoding a request's headers (hpack, a few KiB of
// stack) runs on offstack's workers, so the handler waits with its small
// stack; a request's body (in memory for llmrelay's requests) is framed by
// the handler. The socket is written by writeLoop alone: a TLS write from
// the handler would grow its stack for the stream's life, and a socket
// that does not drain would hold whichever caller wrote.
//
// Like h1Transport, it asks for no compression (no Accept-Encoding unless
// the request sets one) and so decompresses nothing. A RoundTrip needs a
// slot from Reserve (connPool always takes one first); without one it
// fails at the server's limit instead of waiting.
//
// It satisfies muxConn with http.ClientConn's meanings: Reserve, then
// RoundTrip; Available, InFlight and Err; a state hook when a stream ends,
// the server's stream limit changes, or the connection goes away.
type h2Conn struct {
	conn net.Conn
	fr   *http2.Framer // reads: readLoop only; writes: under mu, into out

	pingInterval  time.Duration // a PING after this long without a frame (0: none)
	pingTimeout   time.Duration // no frame that long after the PING: closed
	idleTimeout   time.Duration // closed after this long without a stream (0: never)
	headerTimeout time.Duration // a request's wait for its response headers (0: none)

	framesRead atomic.Uint64 // counts the frames read, for the health check
	hookMu     sync.Mutex
	hook       func()
	kick       chan struct{} // wakes writeLoop; capacity 1

	mu       sync.Mutex
	streams  map[uint32]*h2Stream // open streams (a slot each)
	reserved int                  // slots reserved by Reserve, not yet used
	nextID   uint32
	// maxStreams is the server's SETTINGS_MAX_CONCURRENT_STREAMS: 100
	// until its first SETTINGS (RFC 9113 recommends at least 100), 1000
	// when that names none, as net/http's client assumes.
	maxStreams  int
	gotSettings bool
	err         error // why no new stream may start (GOAWAY, closed)
	closed      bool
	hbuf        bytes.Buffer // a request's encoded header block
	henc        *hpack.Encoder
	out         []byte // frames queued for writeLoop
	spare       []byte // writeLoop's last buffer, reused
	// Send side of flow control: the connection's window and the
	// server's initial stream window and frame size; sendWake is closed
	// (and replaced) whenever a window grows.
	sendWin      int64
	peerInitWin  int64
	peerMaxFrame int
	sendWake     chan struct{}
	// Receive side: bytes the server may still send on the connection,
	// and bytes read by the streams (or dropped) not yet given back.
	recvWin     int64
	recvUnacked int64
	// health and idleness timers (time.AfterFunc; no goroutine waits).
	health    *time.Timer
	pingSeen  uint64 // framesRead at the last health check
	pinging   bool
	idle      *time.Timer
	idleArmed bool
	idleSince time.Time
}

// Flow-control windows, sized for server-sent events. A streamed reply is a
// few hundred bytes every few tens of milliseconds: the stream window only
// needs to cover the largest burst (a long final chunk, a tool call's
// arguments) so that it never waits a round trip for credit, and 256 KiB
// does with room to spare. What the windows allow is not allocated: a
// stream holds buffered data only while its reader is behind, in pooled
// chunks. The connection's window bounds what all of its streams may have
// unread at once (at most h2ConnWindow of memory per connection when every
// reader stalls) while letting hundreds of streams flow without waiting for
// each other's credit. Credit goes back once a quarter of a window is read,
// so a typical stream never sends a WINDOW_UPDATE at all.
const (
	h2StreamWindow  = 256 << 10
	h2ConnWindow    = 8 << 20
	h2MaxFrame      = 16 << 10 // the default SETTINGS_MAX_FRAME_SIZE, which we keep
	h2MaxHeaderList = 1 << 20  // the response header list we accept
	h2ChunkSize     = 2 << 10
)

// h2Chunk is a piece of a stream's unread data; chunks come from a pool and
// go back as they are read. An event of a streamed reply is a few hundred
// bytes, so a stream between an event's arrival and its reader's read
// holds 2 KiB, and a large body takes several.
type h2Chunk struct {
	b    [h2ChunkSize]byte
	r, w int
}

var h2Chunks = sync.Pool{New: func() any { return new(h2Chunk) }}

// h2Frames are the buffers a request body is read into before framing.
var h2Frames = sync.Pool{New: func() any { return new([h2MaxFrame]byte) }}

// h2Stream is one request and its response; the response's Body is the
// stream itself. Fields below mu are guarded by its connection's mu.
type h2Stream struct {
	cc  *h2Conn
	req *http.Request // until the response headers come
	// ctx is the request's context; its end aborts the stream when the
	// stream's user next waits on it (see wait).
	ctx  context.Context
	wake chan struct{} // capacity 1: the state below changed
	tmr  *time.Timer   // the response header timeout, if any

	resp    *http.Response // until RoundTrip returns it
	err     error          // what reads return once the data is read
	chunks  []*h2Chunk     // unread data; nil when none
	unread  int
	sendWin int64
	recvWin int64 // bytes the server may still send on the stream
	unacked int64 // bytes read, not yet given back as stream credit
	id      uint32
	open    bool // in cc.streams, holding a slot
	headers bool // the response headers came
	sentEnd bool // our END_STREAM (or reset) went out
	recvEnd bool // the server's END_STREAM came
	closed  bool // Body.Close was called
}

// Errors of h2Conn. Each is a transport failure for httpx (TransportError);
// NetFailureOf sees what net/http's HTTP/2 client gave: a dropped connection
// wraps io.ErrUnexpectedEOF or the read's own error, a reset stream is an
// http2.StreamError.
var (
	errH2Closed    = errors.New("httpx: HTTP/2 connection closed")
	errH2NoSlot    = errors.New("httpx: HTTP/2 connection has no free stream")
	errH2IDs       = errors.New("httpx: HTTP/2 connection ran out of stream IDs")
	errH2PingLost  = errors.New("httpx: HTTP/2 connection lost: no answer to a PING")
	errH2BodyClose = errors.New("http: read on closed response body")
	// errH2ReadAborted ends a stream whose drain after the terminator ran
	// out of time (Stream.drain).
	errH2ReadAborted = errors.New("httpx: HTTP/2 stream reset: the reply went on after its terminator")
)

// h2GoAwayError is the error of a stream the server did not process
// before its GOAWAY (it may be sent again), or of a new stream on a
// connection that received one.
type h2GoAwayError struct {
	code http2.ErrCode
	last uint32
}

func (e h2GoAwayError) Error() string {
	return fmt.Sprintf("httpx: the server sent GOAWAY (%v, last stream %d): stream not processed", e.code, e.last)
}

// connLost is the error of the streams of a connection whose read failed.
func connLost(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("httpx: HTTP/2 connection lost: %w", err)
}

// dialH2 dials addr with base's dialer and TLS settings, offering h2 and
// http/1.1. It returns a nil connection and no error when the server chose
// HTTP/1.1. base's dial timeout and TLSHandshakeTimeout bound it.
func dialH2(base *http.Transport, addr string) (*h2Conn, error) {
	ctx := context.Background()
	dial := base.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	raw, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cfg := base.TLSClientConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"h2", "http/1.1"}
	tc := tls.Client(raw, cfg)
	hctx := ctx
	if base.TLSHandshakeTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, base.TLSHandshakeTimeout)
		defer cancel()
	}
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		if errors.Is(hctx.Err(), context.DeadlineExceeded) {
			return nil, errTLSHandshakeTimeout
		}
		return nil, err
	}
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		_ = tc.Close()
		return nil, nil
	}
	var ping, pingTimeout time.Duration
	if base.HTTP2 != nil {
		ping, pingTimeout = base.HTTP2.SendPingTimeout, base.HTTP2.PingTimeout
	}
	return newH2Conn(tc, ping, pingTimeout, base.IdleConnTimeout, base.ResponseHeaderTimeout), nil
}

// newH2Conn starts the HTTP/2 client connection over conn, whose TLS
// handshake chose h2: it queues the preface, its SETTINGS and the
// connection's window, and starts readLoop and writeLoop.
func newH2Conn(conn net.Conn, ping, pingTimeout, idle, header time.Duration) *h2Conn {
	if pingTimeout <= 0 {
		pingTimeout = 15 * time.Second // net/http's default
	}
	cc := &h2Conn{
		conn: conn, pingInterval: ping, pingTimeout: pingTimeout, idleTimeout: idle, headerTimeout: header,
		kick:    make(chan struct{}, 1),
		streams: map[uint32]*h2Stream{}, nextID: 1, maxStreams: 100,
		sendWin: 65535, peerInitWin: 65535, peerMaxFrame: h2MaxFrame, sendWake: make(chan struct{}),
		recvWin: h2ConnWindow,
	}
	cc.fr = http2.NewFramer((*h2Out)(cc), conn)
	cc.fr.SetMaxReadFrameSize(h2MaxFrame)
	cc.fr.MaxHeaderListSize = h2MaxHeaderList
	cc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	cc.fr.SetReuseFrames()
	cc.henc = hpack.NewEncoder(&cc.hbuf)

	cc.mu.Lock()
	cc.out = append(cc.out, http2.ClientPreface...)
	_ = cc.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: h2MaxHeaderList},
	)
	_ = cc.fr.WriteWindowUpdate(0, h2ConnWindow-65535)
	if cc.pingInterval > 0 {
		cc.health = time.AfterFunc(cc.pingInterval, cc.healthCheck)
	}
	cc.goIdleLocked()
	cc.mu.Unlock()
	go cc.writeLoop()
	go cc.readLoop()
	cc.flush()
	return cc
}

// h2Out is the Framer's writer: frames are appended to out (under mu) for
// writeLoop.
type h2Out h2Conn

func (o *h2Out) Write(p []byte) (int, error) {
	o.out = append(o.out, p...)
	return len(p), nil
}

// unlockFlush unlocks mu and wakes writeLoop when frames are queued.
func (cc *h2Conn) unlockFlush() {
	queued := len(cc.out) > 0
	cc.mu.Unlock()
	if queued {
		cc.flush()
	}
}

// unlockWake is unlockFlush, then it wakes cs's waiter and, when changed
// (a slot freed), runs the state hook.
func (cc *h2Conn) unlockWake(cs *h2Stream, changed bool) {
	cc.unlockFlush()
	cs.signal()
	if changed {
		cc.notify()
	}
}

// flush wakes writeLoop for what was queued.
func (cc *h2Conn) flush() {
	select {
	case cc.kick <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued frames to the connection until it closes.
func (cc *h2Conn) writeLoop() {
	for range cc.kick {
		cc.mu.Lock()
		if cc.closed {
			cc.mu.Unlock()
			return
		}
		buf := cc.out
		cc.out, cc.spare = cc.spare[:0], nil
		cc.mu.Unlock()
		if len(buf) == 0 {
			continue
		}
		_, err := cc.conn.Write(buf)
		if err != nil {
			cc.closeWith(connLost(err))
			return
		}
		cc.mu.Lock()
		if cap(buf) <= 64<<10 {
			cc.spare = buf[:0]
		}
		cc.mu.Unlock()
	}
}

// notify runs the state hook (without mu).
func (cc *h2Conn) notify() {
	cc.hookMu.Lock()
	f := cc.hook
	cc.hookMu.Unlock()
	if f != nil {
		f()
	}
}

// SetStateHook sets the function called when Available or InFlight may
// have changed or the connection became unusable, and calls it once. Calls
// may overlap; the pool's hook takes its own lock.
func (cc *h2Conn) SetStateHook(f func()) {
	cc.hookMu.Lock()
	cc.hook = f
	cc.hookMu.Unlock()
	if f != nil {
		f()
	}
}

// Reserve takes a stream slot for one RoundTrip, or fails when the
// connection is unusable or at the server's limit.
func (cc *h2Conn) Reserve() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.err != nil {
		return cc.err
	}
	if len(cc.streams)+cc.reserved >= cc.maxStreams {
		return errH2NoSlot
	}
	cc.reserved++
	return nil
}

// Available is the number of streams that may still start.
func (cc *h2Conn) Available() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.err != nil {
		return 0
	}
	return max(0, cc.maxStreams-len(cc.streams)-cc.reserved)
}

// InFlight is the number of open streams and reserved slots; 0 once closed.
func (cc *h2Conn) InFlight() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed {
		return 0
	}
	return len(cc.streams) + cc.reserved
}

// Err says why no new stream may start on the connection (a GOAWAY, a
// failure, Close); nil while it is usable.
func (cc *h2Conn) Err() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err
}

// Close closes the connection; its open streams fail.
func (cc *h2Conn) Close() error {
	cc.closeWith(errH2Closed)
	return nil
}

// closeWith closes the connection, failing its open streams with err.
func (cc *h2Conn) closeWith(err error) {
	cc.mu.Lock()
	if cc.closed {
		cc.mu.Unlock()
		return
	}
	cc.closed = true
	if cc.err == nil {
		cc.err = err
	}
	for _, cs := range cc.streams {
		cs.open = false
		if cs.err == nil {
			cs.err = err
		}
		cs.signal()
	}
	clear(cc.streams)
	cc.reserved = 0
	if cc.health != nil {
		cc.health.Stop()
	}
	if cc.idle != nil {
		cc.idle.Stop()
	}
	close(cc.sendWake)
	cc.sendWake = make(chan struct{})
	cc.mu.Unlock()
	_ = cc.conn.Close()
	cc.flush() // writeLoop sees closed and ends
	cc.notify()
}

// goIdleLocked arms the idle timer when no stream is open or reserved.
func (cc *h2Conn) goIdleLocked() {
	if cc.idleTimeout <= 0 || len(cc.streams)+cc.reserved > 0 || cc.closed {
		return
	}
	cc.idleSince = time.Now()
	if cc.idleArmed {
		return
	}
	cc.idleArmed = true
	if cc.idle == nil {
		cc.idle = time.AfterFunc(cc.idleTimeout, cc.closeIfIdle)
	} else {
		cc.idle.Reset(cc.idleTimeout)
	}
}

// closeIfIdle is the idle timer: it closes a connection that has had no
// stream for idleTimeout.
func (cc *h2Conn) closeIfIdle() {
	cc.mu.Lock()
	cc.idleArmed = false
	if cc.closed || len(cc.streams)+cc.reserved > 0 {
		cc.mu.Unlock()
		return
	}
	if left := cc.idleTimeout - time.Since(cc.idleSince); left > 0 {
		cc.idleArmed = true
		cc.idle.Reset(left)
		cc.mu.Unlock()
		return
	}
	cc.mu.Unlock()
	cc.closeWith(errH2Closed)
}

// healthCheck is the health timer: every pingInterval it looks whether a
// frame arrived since its last look; when none did it sends a PING, and
// when still none arrived pingTimeout later, it closes the connection. So
// a PING goes out after one to two intervals of silence.
func (cc *h2Conn) healthCheck() {
	n := cc.framesRead.Load()
	cc.mu.Lock()
	if cc.closed {
		cc.mu.Unlock()
		return
	}
	switch {
	case n != cc.pingSeen:
		cc.pingSeen, cc.pinging = n, false
		cc.health.Reset(cc.pingInterval)
	case cc.pinging:
		cc.mu.Unlock()
		cc.closeWith(errH2PingLost)
		return
	default:
		cc.pinging = true
		_ = cc.fr.WritePing(false, [8]byte{'l', 'l', 'm', 'r', 'e', 'l', 'a', 'y'})
		cc.health.Reset(cc.pingTimeout)
	}
	cc.unlockFlush()
}

// RoundTrip sends req on a new stream (taking the slot Reserve reserved)
// and returns its response once the headers come. The response's body is
// read by its reader's goroutine; no goroutine is started for the stream.
func (cc *h2Conn) RoundTrip(req *http.Request) (*http.Response, error) {
	body := req.Body
	if body == http.NoBody {
		body = nil
	}
	closeBody := func() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
	}
	cs := &h2Stream{cc: cc, req: req, ctx: req.Context(), wake: make(chan struct{}, 1)}
	var err error
	var changed bool
	// hpack and the framer need a few KiB of stack: offstack's.
	offstack.Run(func() { changed, err = cc.start(cs, req, body == nil) })
	if changed {
		cc.notify()
	}
	if err != nil {
		closeBody()
		return nil, err
	}
	cc.flush()
	if cc.headerTimeout > 0 {
		cs.tmr = time.AfterFunc(cc.headerTimeout, func() { cs.headerTimeout() })
	}
	if body != nil {
		err = cs.sendBody(body, req.ContentLength)
		closeBody()
		if err != nil {
			cs.abort(err)
		}
	}
	for {
		cc.mu.Lock()
		resp, err := cs.resp, cs.err
		cs.resp = nil // the stream keeps no response
		cc.mu.Unlock()
		if resp != nil {
			if cs.tmr != nil {
				cs.tmr.Stop()
			}
			return resp, nil
		}
		if err != nil {
			if cs.tmr != nil {
				cs.tmr.Stop()
			}
			return nil, err
		}
		cs.wait(nil)
	}
}

// start opens cs's stream for req: it takes the reserved slot, an ID, and
// queues the HEADERS (and CONTINUATION) frames, with END_STREAM when there
// is no body. changed says the pool's view changed (a slot given back).
func (cc *h2Conn) start(cs *h2Stream, req *http.Request, endStream bool) (changed bool, err error) {
	if err := checkH2Header(req.Header); err != nil {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return cc.releaseLocked(), err
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.err != nil {
		return cc.releaseLocked(), cc.err
	}
	switch {
	case cc.reserved > 0:
		cc.reserved--
	case len(cc.streams) >= cc.maxStreams:
		return false, errH2NoSlot
	}
	if cc.nextID >= 1<<31 {
		cc.err = errH2IDs
		return true, cc.err
	}
	cs.id = cc.nextID
	cc.nextID += 2
	cs.sendWin, cs.recvWin, cs.open, cs.sentEnd = cc.peerInitWin, h2StreamWindow, true, endStream
	cc.streams[cs.id] = cs
	cc.encodeHeaders(req, endStream)
	block := cc.hbuf.Bytes()
	first := block[:min(len(block), cc.peerMaxFrame)]
	block = block[len(first):]
	_ = cc.fr.WriteHeaders(http2.HeadersFrameParam{
		StreamID: cs.id, BlockFragment: first, EndStream: endStream, EndHeaders: len(block) == 0,
	})
	for len(block) > 0 {
		frag := block[:min(len(block), cc.peerMaxFrame)]
		block = block[len(frag):]
		_ = cc.fr.WriteContinuation(cs.id, len(block) == 0, frag)
	}
	return false, nil
}

// releaseLocked gives back a reserved slot that will not be used.
func (cc *h2Conn) releaseLocked() bool {
	if cc.reserved == 0 {
		return false
	}
	cc.reserved--
	cc.goIdleLocked()
	return true
}

// checkH2Header fails for a header field that cannot go into HTTP/2.
func checkH2Header(h http.Header) error {
	for k, vv := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("httpx: invalid HTTP/2 header field name %q", k)
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("httpx: invalid HTTP/2 header field value for %q", k)
			}
		}
	}
	return nil
}

// encodeHeaders encodes req's header block into hbuf: the pseudo-headers,
// then its fields in lower case without HTTP/1.1's connection-specific
// ones, a content-length when known, and net/http's User-Agent when it
// sets none.
func (cc *h2Conn) encodeHeaders(req *http.Request, noBody bool) {
	cc.hbuf.Reset()
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	write := func(name, value string) { _ = cc.henc.WriteField(hpack.HeaderField{Name: name, Value: value}) }
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	write(":authority", host)
	write(":method", method)
	write(":path", req.URL.RequestURI())
	write(":scheme", "https")
	agent := false
	for k, vv := range req.Header {
		name := strings.ToLower(k)
		switch name {
		case "host", "connection", "proxy-connection", "transfer-encoding", "upgrade", "keep-alive", "content-length":
			continue
		case "te":
			// Only "trailers" is allowed in HTTP/2.
			for _, v := range vv {
				if strings.EqualFold(v, "trailers") {
					write("te", "trailers")
				}
			}
			continue
		case "user-agent":
			agent = true
		}
		for _, v := range vv {
			write(name, v)
		}
	}
	if !agent {
		write("user-agent", "Go-http-client/2.0")
	}
	switch n := req.ContentLength; {
	case n > 0:
		write("content-length", strconv.FormatInt(n, 10))
	case noBody && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch):
		write("content-length", "0")
	}
}

// sendBody sends body as DATA frames within the server's frame size and
// flow-control windows, waiting for credit when they are short, and ends
// the stream. size is the body's length when known (> 0), so that the last
// frame carries END_STREAM; otherwise an empty frame ends it.
func (cs *h2Stream) sendBody(body io.Reader, size int64) error {
	buf := h2Frames.Get().(*[h2MaxFrame]byte)
	defer h2Frames.Put(buf)
	sent := int64(0)
	for {
		n, rerr := io.ReadFull(body, buf[:])
		if rerr == io.ErrUnexpectedEOF {
			rerr = io.EOF
		}
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		sent += int64(n)
		last := rerr == io.EOF || (size > 0 && sent >= size)
		if err := cs.sendData(buf[:n], last); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// sendData queues data on cs's stream, as the windows allow, with
// END_STREAM on its last frame when end.
func (cs *h2Stream) sendData(data []byte, end bool) error {
	cc := cs.cc
	for {
		cc.mu.Lock()
		if cs.err != nil {
			cc.mu.Unlock()
			return cs.err
		}
		if cs.sentEnd {
			// The server answered whole (or reset the stream) before the
			// body was sent: the rest is not needed.
			cc.mu.Unlock()
			return nil
		}
		n := min(int64(len(data)), cs.sendWin, cc.sendWin, int64(cc.peerMaxFrame))
		if n <= 0 && len(data) > 0 {
			wake := cc.sendWake
			cc.mu.Unlock()
			cs.wait(wake)
			continue
		}
		done := int(n) == len(data)
		cs.sendWin -= n
		cc.sendWin -= n
		_ = cc.fr.WriteData(cs.id, end && done, data[:n])
		var changed bool
		if end && done {
			cs.sentEnd = true
			if cs.recvEnd {
				changed = cc.endLocked(cs)
			}
		}
		cc.unlockFlush()
		if changed {
			cc.notify()
		}
		data = data[n:]
		if done {
			return nil
		}
	}
}

// wait waits until cs's state changed (signal), or also is ready (nil:
// never). The end of the request's context aborts the stream (RST_STREAM
// CANCEL, its unread data dropped, reads failing with the context's cause)
// here, in the wait of whoever uses the stream, rather than through a
// context.AfterFunc: a held stream so keeps no context of its own nor a
// place in its request context's children (about 350 bytes). Every wait on
// a stream is in this function, and its user closes it when done, so a
// cancelled stream is reset at once when its reader waits on it, and when
// its user comes back to it (to read or close) otherwise.
func (cs *h2Stream) wait(also <-chan struct{}) {
	select {
	case <-cs.wake:
	case <-also:
	case <-cs.ctx.Done():
		cs.abort(context.Cause(cs.ctx))
	}
}

// signal wakes whoever waits on the stream.
func (cs *h2Stream) signal() {
	select {
	case cs.wake <- struct{}{}:
	default:
	}
}

// endLocked removes cs from the open streams, giving its slot back; it
// reports whether it did.
func (cc *h2Conn) endLocked(cs *h2Stream) bool {
	if !cs.open {
		return false
	}
	cs.open = false
	delete(cc.streams, cs.id)
	cc.goIdleLocked()
	if cc.err != nil && len(cc.streams) == 0 && !cc.closed {
		// After a GOAWAY, the last stream's end closes the connection.
		go cc.closeWith(cc.err)
	}
	return true
}

// remoteEndLocked takes the server's END_STREAM on cs: the stream ends,
// reset (NO_ERROR) when the server answered whole before the request's
// body was all sent. It reports whether a slot was freed.
func (cc *h2Conn) remoteEndLocked(cs *h2Stream) bool {
	cs.recvEnd = true
	if cs.sentEnd {
		return cc.endLocked(cs)
	}
	return cc.resetLocked(cs, http2.ErrCodeNo)
}

// resetLocked ends cs with RST_STREAM(code) when it is still open.
func (cc *h2Conn) resetLocked(cs *h2Stream, code http2.ErrCode) bool {
	if !cs.open {
		return false
	}
	cs.sentEnd = true
	if !cc.closed {
		_ = cc.fr.WriteRSTStream(cs.id, code)
	}
	return cc.endLocked(cs)
}

// dropLocked discards cs's unread data, giving its connection credit back.
func (cc *h2Conn) dropLocked(cs *h2Stream) {
	for _, c := range cs.chunks {
		c.r, c.w = 0, 0
		h2Chunks.Put(c)
	}
	cs.chunks = nil
	cc.creditConnLocked(int64(cs.unread))
	cs.unread = 0
}

// creditConnLocked counts n bytes of the connection's window as free
// again, and sends them back once they are a quarter of the window.
func (cc *h2Conn) creditConnLocked(n int64) {
	cc.recvUnacked += n
	if cc.recvUnacked >= h2ConnWindow/4 && !cc.closed {
		_ = cc.fr.WriteWindowUpdate(0, uint32(cc.recvUnacked))
		cc.recvWin += cc.recvUnacked
		cc.recvUnacked = 0
	}
}

// abort ends cs with err (a cancelled request, a failed body): its stream
// is reset and its unread data dropped. Reads return err.
func (cs *h2Stream) abort(err error) { cs.abortIf(err, false) }

// abortIf is abort, or nothing when beforeHeaders and the response
// headers came.
func (cs *h2Stream) abortIf(err error, beforeHeaders bool) {
	cc := cs.cc
	cc.mu.Lock()
	if beforeHeaders && cs.headers {
		cc.mu.Unlock()
		return
	}
	if cs.err == nil {
		cs.err = err
	}
	changed := cc.resetLocked(cs, http2.ErrCodeCancel)
	cc.dropLocked(cs)
	cc.unlockWake(cs, changed)
}

// headerTimeout is the response header timer: it aborts cs unless its
// headers came meanwhile.
func (cs *h2Stream) headerTimeout() {
	cs.abortIf(errHeaderTimeout, true)
}

// Read reads the response body: the data the server sent, then io.EOF at
// its END_STREAM, or the error that ended the stream (a reset, the
// connection's failure, the request's cancellation).
func (cs *h2Stream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	cc := cs.cc
	for {
		cc.mu.Lock()
		if cs.unread > 0 {
			n := cs.take(p)
			cc.unlockFlush()
			return n, nil
		}
		if cs.err != nil {
			err := cs.err
			cc.mu.Unlock()
			return 0, err
		}
		if cs.recvEnd {
			cs.err = io.EOF
			cc.mu.Unlock()
			return 0, io.EOF
		}
		cc.mu.Unlock()
		cs.wait(nil)
	}
}

// endArrived tells whether reading the stream to its end needs nothing
// more from the server (see endArriver): its END_STREAM or its error came.
func (cs *h2Stream) endArrived() bool {
	cs.cc.mu.Lock()
	defer cs.cc.mu.Unlock()
	return cs.recvEnd || cs.err != nil
}

// drainArrived drains r, the stream's reader of cs, to cs's end, if its
// end has arrived (endArrived): reading what is buffered never waits.
// False, with nothing read, when it has not.
func (cs *h2Stream) drainArrived(r *Reader) bool {
	if !cs.endArrived() {
		return false
	}
	r.Drain(drainLimit)
	return true
}

// awaitData waits, as Read does, until the stream has unread data, its
// end or its error, and reads none of it (see dataAwaiter).
func (cs *h2Stream) awaitData() bool {
	cc := cs.cc
	for {
		cc.mu.Lock()
		ready := cs.unread > 0 || cs.err != nil || cs.recvEnd
		cc.mu.Unlock()
		if ready {
			return true
		}
		if testStreamAwaiting != nil {
			testStreamAwaiting(cs)
		}
		cs.wait(nil)
	}
}

// testStreamAwaiting, set by tests, is called when a stream's reader
// starts waiting for its data with no buffer (see awaitData).
var testStreamAwaiting func(*h2Stream)

// take copies unread data into p, returns the chunks it empties to the
// pool and counts the bytes as read for flow control. Under mu.
func (cs *h2Stream) take(p []byte) int {
	cc := cs.cc
	n := 0
	for n < len(p) && len(cs.chunks) > 0 {
		c := cs.chunks[0]
		k := copy(p[n:], c.b[c.r:c.w])
		c.r += k
		n += k
		if c.r == c.w {
			c.r, c.w = 0, 0
			h2Chunks.Put(c)
			cs.chunks[0] = nil
			cs.chunks = cs.chunks[1:]
		}
	}
	if len(cs.chunks) == 0 {
		cs.chunks = nil // a stream with nothing unread holds no buffer
	}
	cs.unread -= n
	cc.creditConnLocked(int64(n))
	cs.unacked += int64(n)
	if cs.unacked >= h2StreamWindow/4 && cs.open && !cs.recvEnd && !cc.closed {
		_ = cc.fr.WriteWindowUpdate(cs.id, uint32(cs.unacked))
		cs.recvWin += cs.unacked
		cs.unacked = 0
	}
	return n
}

// abortRead resets the stream, which ends a read waiting on it.
func (cs *h2Stream) abortRead() { cs.abort(errH2ReadAborted) }

// Close ends the body: a stream the server has not ended is reset
// (RST_STREAM CANCEL), its slot freed and its unread data dropped.
func (cs *h2Stream) Close() error {
	cc := cs.cc
	cc.mu.Lock()
	if cs.closed {
		cc.mu.Unlock()
		return nil
	}
	cs.closed = true
	changed := cc.resetLocked(cs, http2.ErrCodeCancel)
	cc.dropLocked(cs)
	if cs.err == nil || cs.err == io.EOF {
		cs.err = errH2BodyClose
	}
	cc.unlockWake(cs, changed)
	return nil
}

// readLoop reads the connection's frames until it fails, then fails its
// streams.
func (cc *h2Conn) readLoop() {
	for {
		f, err := cc.fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				// A malformed header block: that stream fails.
				cc.streamFailed(se.StreamID, se)
				continue
			}
			cc.closeWith(connLost(err))
			return
		}
		cc.framesRead.Add(1)
		if err := cc.handle(f); err != nil {
			cc.mu.Lock()
			if !cc.closed {
				var ce http2.ConnectionError
				code := http2.ErrCodeProtocol
				if errors.As(err, &ce) {
					code = http2.ErrCode(ce)
				}
				_ = cc.fr.WriteGoAway(0, code, nil)
			}
			cc.unlockFlush()
			cc.closeWith(connLost(err))
			return
		}
	}
}

// streamFailed ends stream id with err.
func (cc *h2Conn) streamFailed(id uint32, err error) {
	cc.mu.Lock()
	cs := cc.streams[id]
	if cs == nil {
		cc.mu.Unlock()
		return
	}
	if cs.err == nil {
		cs.err = err
	}
	changed := cc.resetLocked(cs, http2.ErrCodeProtocol)
	cc.unlockWake(cs, changed)
}

// handle applies one frame read from the server.
func (cc *h2Conn) handle(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		return cc.onHeaders(f)
	case *http2.DataFrame:
		return cc.onData(f)
	case *http2.RSTStreamFrame:
		cc.mu.Lock()
		cs := cc.streams[f.StreamID]
		var changed bool
		if cs != nil {
			if cs.err == nil {
				cs.err = http2.StreamError{StreamID: f.StreamID, Code: f.ErrCode}
			}
			cs.sentEnd = true
			changed = cc.endLocked(cs)
		}
		cc.mu.Unlock()
		if cs != nil {
			cs.signal()
		}
		if changed {
			cc.notify()
		}
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		return cc.onSettings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			cc.mu.Lock()
			_ = cc.fr.WritePing(true, f.Data)
			cc.unlockFlush()
		}
	case *http2.WindowUpdateFrame:
		cc.mu.Lock()
		if f.StreamID == 0 {
			cc.sendWin += int64(f.Increment)
		} else if cs := cc.streams[f.StreamID]; cs != nil {
			cs.sendWin += int64(f.Increment)
		}
		close(cc.sendWake)
		cc.sendWake = make(chan struct{})
		cc.mu.Unlock()
	case *http2.GoAwayFrame:
		cc.onGoAway(f)
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol) // push is off
	}
	return nil
}

// onHeaders takes a stream's response headers (skipping interim 1xx
// responses) or its trailers, which end it.
func (cc *h2Conn) onHeaders(f *http2.MetaHeadersFrame) error {
	cc.mu.Lock()
	cs := cc.streams[f.StreamID]
	if cs == nil {
		cc.mu.Unlock()
		return nil // a stream we reset
	}
	if !cs.headers {
		status := f.PseudoValue("status")
		code, err := strconv.Atoi(status)
		if err != nil || len(status) != 3 || code < 100 {
			cc.mu.Unlock()
			cc.streamFailed(f.StreamID, fmt.Errorf("httpx: malformed HTTP/2 response status %q", status))
			return nil
		}
		if code < 200 && code != http.StatusSwitchingProtocols {
			cc.mu.Unlock()
			return nil // interim: the response follows
		}
		cs.resp, cs.headers = newH2Response(cs, f, status, code), true
		cs.req = nil // the response has it; the stream keeps neither
	}
	changed := f.StreamEnded() && cc.remoteEndLocked(cs)
	cc.unlockWake(cs, changed)
	return nil
}

// newH2Response is cs's response from its headers.
func newH2Response(cs *h2Stream, f *http2.MetaHeadersFrame, status string, code int) *http.Response {
	fields := f.RegularFields()
	h := make(http.Header, len(fields))
	for _, hf := range fields {
		k := http.CanonicalHeaderKey(hf.Name)
		h[k] = append(h[k], hf.Value)
	}
	resp := &http.Response{
		Status: status + " " + http.StatusText(code), StatusCode: code,
		Proto: "HTTP/2.0", ProtoMajor: 2,
		Header: h, Request: cs.req, Body: cs, ContentLength: -1,
	}
	if cl := h["Content-Length"]; len(cl) == 1 {
		if n, err := strconv.ParseInt(cl[0], 10, 64); err == nil && n >= 0 {
			resp.ContentLength = n
		}
	} else if f.StreamEnded() {
		resp.ContentLength = 0
	}
	return resp
}

// onData buffers a DATA frame's data for its stream's reader.
func (cc *h2Conn) onData(f *http2.DataFrame) error {
	n := int64(f.Length) // flow control counts the padding too
	data := f.Data()
	cc.mu.Lock()
	if n > cc.recvWin {
		cc.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeFlowControl)
	}
	cc.recvWin -= n
	cs := cc.streams[f.StreamID]
	if cs == nil || cs.err != nil || !cs.headers {
		// A stream we reset or closed (or DATA before headers): the
		// connection's credit comes back at once.
		cc.creditConnLocked(n)
		var changed bool
		if cs != nil && !cs.headers {
			if cs.err == nil {
				cs.err = fmt.Errorf("httpx: HTTP/2 DATA before the response headers on stream %d", cs.id)
			}
			changed = cc.resetLocked(cs, http2.ErrCodeProtocol)
		}
		cc.unlockFlush()
		if cs != nil {
			cs.signal()
		}
		if changed {
			cc.notify()
		}
		return nil
	}
	if n > cs.recvWin {
		cc.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeFlowControl)
	}
	cs.recvWin -= n
	cs.unacked += n - int64(len(data)) // padding is read at once
	cc.creditConnLocked(n - int64(len(data)))
	for len(data) > 0 {
		var c *h2Chunk
		if k := len(cs.chunks); k > 0 && cs.chunks[k-1].w < h2ChunkSize {
			c = cs.chunks[k-1]
		} else {
			c = h2Chunks.Get().(*h2Chunk)
			cs.chunks = append(cs.chunks, c)
		}
		k := copy(c.b[c.w:], data)
		c.w += k
		data = data[k:]
		cs.unread += k
	}
	changed := f.StreamEnded() && cc.remoteEndLocked(cs)
	cc.unlockWake(cs, changed)
	return nil
}

// onSettings applies the server's SETTINGS and acknowledges them.
func (cc *h2Conn) onSettings(f *http2.SettingsFrame) error {
	cc.mu.Lock()
	first := !cc.gotSettings
	cc.gotSettings = true
	old := cc.maxStreams
	if first {
		cc.maxStreams = 1000
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			cc.maxStreams = int(min(s.Val, 1<<20))
		case http2.SettingInitialWindowSize:
			if s.Val > 1<<31-1 {
				return http2.ConnectionError(http2.ErrCodeFlowControl)
			}
			delta := int64(s.Val) - cc.peerInitWin
			cc.peerInitWin = int64(s.Val)
			for _, cs := range cc.streams {
				cs.sendWin += delta
			}
		case http2.SettingMaxFrameSize:
			cc.peerMaxFrame = int(min(s.Val, h2MaxFrame)) // we send no larger frames
		case http2.SettingHeaderTableSize:
			cc.henc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	if err == nil {
		_ = cc.fr.WriteSettingsAck()
		close(cc.sendWake)
		cc.sendWake = make(chan struct{})
	}
	changed := cc.maxStreams != old
	cc.unlockFlush()
	if changed {
		cc.notify()
	}
	return err
}

// onGoAway stops new streams on the connection and fails those the server
// did not process (they may be sent again); the others go on.
func (cc *h2Conn) onGoAway(f *http2.GoAwayFrame) {
	gerr := h2GoAwayError{code: f.ErrCode, last: f.LastStreamID}
	cc.mu.Lock()
	if cc.err == nil {
		cc.err = gerr
	}
	var failed []*h2Stream
	for id, cs := range cc.streams {
		if id > f.LastStreamID {
			if cs.err == nil {
				cs.err = gerr
			}
			cs.sentEnd = true
			cc.endLocked(cs)
			failed = append(failed, cs)
		}
	}
	idle := len(cc.streams) == 0
	cc.mu.Unlock()
	for _, cs := range failed {
		cs.signal()
	}
	if idle {
		cc.closeWith(gerr)
		return
	}
	cc.notify()
}
