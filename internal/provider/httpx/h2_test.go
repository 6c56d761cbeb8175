package httpx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// h2Wait bounds every wait of these tests: far above what any step takes,
// so that a broken client fails instead of hanging.
const h2Wait = 20 * time.Second

// h2Server is an HTTPS upstream speaking HTTP/2 (net/http's server), and a
// connPool that trusts it.
type h2Server struct {
	srv  *httptest.Server
	pool *connPool
	mu   sync.Mutex
	acc  []net.Conn // accepted, in order
}

func newH2Server(t *testing.T, h http.HandlerFunc, cfg func(*http.Server)) *h2Server {
	t.Helper()
	s := &h2Server{}
	s.srv = httptest.NewUnstartedServer(h)
	s.srv.EnableHTTP2 = true
	s.srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.acc = append(s.acc, c)
			s.mu.Unlock()
		}
	}
	if cfg != nil {
		cfg(s.srv.Config)
	}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.pool = s.newPool(nil)
	return s
}

// newPool returns a connPool to s whose net/http Transport is edited by
// cfg; its connections are closed when the test ends.
func (s *h2Server) newPool(cfg func(*http.Transport)) *connPool {
	tr := &http.Transport{
		TLSClientConfig:   s.srv.Client().Transport.(*http.Transport).TLSClientConfig,
		ForceAttemptHTTP2: true,
		HTTP2:             &http.HTTP2Config{},
	}
	if cfg != nil {
		cfg(tr)
	}
	p := newConnPool(tr, &h1Transport{next: tr, hosts: map[string]*h1Host{}}, 0)
	return p
}

func (s *h2Server) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acc)
}

// closeAll closes every connection the server accepted, under it.
func (s *h2Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.acc {
		_ = c.Close()
	}
}

// conns are p's connections to s.
func (s *h2Server) conns(p *connPool) []muxConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.hosts {
		return append([]muxConn(nil), h.conns...)
	}
	return nil
}

// do sends a request through p with the given body and context.
func (s *h2Server) do(ctx context.Context, t *testing.T, p *connPool, body []byte) (*http.Response, error) {
	t.Helper()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		method, rd = http.MethodPost, bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.srv.URL+"/v1/x?y=1", rd)
	if err != nil {
		t.Fatal(err)
	}
	return p.RoundTrip(req)
}

// mustDo is do for a request that must get a response.
func (s *h2Server) mustDo(t *testing.T, p *connPool, body []byte) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), h2Wait)
	t.Cleanup(cancel)
	resp, err := s.do(ctx, t, p, body)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// sseOne sends one event and holds the stream until the client leaves.
func sseOne(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, "data: one\n\n")
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// readFirst reads the first event of a sseOne stream.
func readFirst(t *testing.T, resp *http.Response) {
	t.Helper()
	buf := make([]byte, len("data: one\n\n"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: one\n\n" {
		t.Fatalf("first event %q, %v", buf, err)
	}
}

// clientGoroutines counts the goroutines of HTTP/2 clients: httpx's and
// net/http's.
func clientGoroutines() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("provider/httpx.(*h2")) || bytes.Contains(g, []byte("net/http.(*http2client")) ||
			bytes.Contains(g, []byte("net/http.(*http2ClientConn)")) {
			n++
		}
	}
	return n
}

// TestH2StreamsShareOneConnectionWithoutAGoroutineEach: 50 streams held
// open at once go over one connection, and the client runs no goroutine
// per stream (net/http's runs one, in clientStream.doRequest, for each).
func TestH2StreamsShareOneConnectionWithoutAGoroutineEach(t *testing.T) {
	s := newH2Server(t, sseOne, nil)
	before := clientGoroutines()
	const n = 50
	resps := make([]*http.Response, 0, n)
	for range n {
		resp := s.mustDo(t, s.pool, []byte(`{"stream":true}`))
		readFirst(t, resp)
		resps = append(resps, resp)
	}
	if got := s.accepted(); got != 1 {
		t.Errorf("%d streams opened %d connections, want 1", n, got)
	}
	if grew := clientGoroutines() - before; grew >= n/5 {
		t.Errorf("%d held streams added %d client goroutines, want a few per connection", n, grew)
	}
	for _, r := range resps {
		if r.ProtoMajor != 2 {
			t.Fatalf("response over HTTP/%d", r.ProtoMajor)
		}
		_ = r.Body.Close()
	}
}

// TestH2RequestBodyBeyondTheWindow: a request body larger than the
// server's 65,535-byte windows arrives whole (the client waits for
// WINDOW_UPDATE).
func TestH2RequestBodyBeyondTheWindow(t *testing.T) {
	got := make(chan []byte, 1)
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
		_, _ = io.WriteString(w, "ok")
	}, func(srv *http.Server) {
		srv.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 65535, MaxReceiveBufferPerConnection: 65535}
	})
	body := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16)
	resp := s.mustDo(t, s.pool, body)
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
		t.Fatalf("response %q, %v", b, err)
	}
	if b := <-got; !bytes.Equal(b, body) {
		t.Fatalf("the server read %d bytes, want the %d sent", len(b), len(body))
	}
}

// TestH2ResponseBeyondTheWindow: a response larger than the client's
// stream window arrives whole (the client gives credit back as it reads).
func TestH2ResponseBeyondTheWindow(t *testing.T) {
	body := bytes.Repeat([]byte("abcdefghijklmnop"), 4*h2StreamWindow/16)
	s := newH2Server(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }, nil)
	resp := s.mustDo(t, s.pool, nil)
	b, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(b, body) {
		t.Fatalf("read %d bytes, %v; want the %d sent", len(b), err, len(body))
	}
	// The connection's window came back too: a second one arrives.
	resp = s.mustDo(t, s.pool, nil)
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != len(body) {
		t.Fatalf("second response: %d bytes, %v", len(b), err)
	}
}

// TestH2ResetStreamIsATransportFailure: a stream the server resets in the
// middle of its body fails the read with an HTTP/2 stream error, a
// transport failure for httpx; the connection serves the next request.
func TestH2ResetStreamIsATransportFailure(t *testing.T) {
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("reset") == "" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}, nil)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.srv.URL+"/?reset=1", nil)
	resp, err := s.pool.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	var se http2.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("read error %v, want an HTTP/2 stream error", err)
	}
	if pe := TransportError("reading the stream failed", err); pe.Kind != provider.KindTransport {
		t.Fatalf("kind %v", pe.Kind)
	}
	if b, err := io.ReadAll(s.mustDo(t, s.pool, nil).Body); err != nil || string(b) != "ok" {
		t.Fatalf("next request: %q, %v", b, err)
	}
	if s.accepted() != 1 {
		t.Errorf("%d connections, want the first one reused", s.accepted())
	}
}

// TestH2DroppedConnectionFailsTheStream: a connection closed under an open
// stream fails its read as a reset connection (provider.NetReset, as a cut
// HTTP/1.1 stream), and the pool forgets the connection.
func TestH2DroppedConnectionFailsTheStream(t *testing.T) {
	s := newH2Server(t, sseOne, nil)
	resp := s.mustDo(t, s.pool, nil)
	readFirst(t, resp)
	s.closeAll()
	_, err := io.ReadAll(resp.Body)
	if err == nil || NetFailureOf(err) != provider.NetReset {
		t.Fatalf("read error %v (%v), want a reset connection", err, NetFailureOf(err))
	}
	deadline := time.Now().Add(h2Wait)
	for len(s.conns(s.pool)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the pool kept the dead connection")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestH2BodyCloseCancelsTheStream: closing a body before its end cancels
// the server's request (RST_STREAM) and frees the slot; the connection
// carries on.
func TestH2BodyCloseCancelsTheStream(t *testing.T) {
	gone := make(chan struct{}, 1)
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		sseOne(w, r)
		gone <- struct{}{}
	}, nil)
	resp := s.mustDo(t, s.pool, nil)
	readFirst(t, resp)
	_ = resp.Body.Close()
	select {
	case <-gone:
	case <-time.After(h2Wait):
		t.Fatal("the server's request was not cancelled")
	}
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("a read after Close succeeded")
	}
	readFirst(t, s.mustDo(t, s.pool, nil))
	if s.accepted() != 1 {
		t.Errorf("%d connections, want the first one reused", s.accepted())
	}
	if c := s.conns(s.pool); len(c) != 1 || c[0].InFlight() != 1 {
		t.Errorf("connections %v, want one with the one open stream", c)
	}
}

// TestH2CancelBeforeHeaders: a request cancelled while it waits for the
// response headers returns the context's error and cancels the server's
// request.
func TestH2CancelBeforeHeaders(t *testing.T) {
	arrived, gone := make(chan struct{}, 1), make(chan struct{}, 1)
	s := newH2Server(t, func(_ http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := s.do(ctx, t, s.pool, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the context's", err)
	}
	select {
	case <-gone:
	case <-time.After(h2Wait):
		t.Fatal("the server's request was not cancelled")
	}
}

// TestH2CancelWhileStreaming: the end of a streaming request's context
// ends the stream when its reader waits on it: a read waiting for data when
// the context is cancelled returns the context's cause, and so does the
// next read of a stream cancelled while nobody read it; either way the
// server's request is cancelled (RST_STREAM) and the connection serves on.
func TestH2CancelWhileStreaming(t *testing.T) {
	for _, waiting := range []bool{true, false} {
		name := "cancelled with nobody reading"
		if waiting {
			name = "cancelled under a waiting read"
		}
		t.Run(name, func(t *testing.T) {
			gone := make(chan struct{}, 1)
			s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
				sseOne(w, r)
				gone <- struct{}{}
			}, nil)
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			why := errors.New("the attempt was cancelled")
			resp, err := s.do(ctx, t, s.pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			readFirst(t, resp)
			read := make(chan error, 1)
			if waiting {
				testStreamAwaiting = func(*h2Stream) { cancel(why) }
				defer func() { testStreamAwaiting = nil }()
				go func() {
					resp.Body.(dataAwaiter).awaitData()
					_, err := resp.Body.Read(make([]byte, 1))
					read <- err
				}()
			} else {
				cancel(why)
				go func() {
					_, err := resp.Body.Read(make([]byte, 1))
					read <- err
				}()
			}
			select {
			case err := <-read:
				if !errors.Is(err, why) {
					t.Fatalf("read returned %v, want the context's cause", err)
				}
			case <-time.After(h2Wait):
				t.Fatal("the read went on waiting after its context ended")
			}
			select {
			case <-gone:
			case <-time.After(h2Wait):
				t.Fatal("the server's request was not cancelled")
			}
			readFirst(t, s.mustDo(t, s.pool, nil))
			if s.accepted() != 1 {
				t.Errorf("%d connections, want the first one reused", s.accepted())
			}
		})
	}
}

// TestH2ResponseHeaderTimeout: without response headers within
// ResponseHeaderTimeout, the request fails with net/http's timeout error.
func TestH2ResponseHeaderTimeout(t *testing.T) {
	s := newH2Server(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, nil)
	p := s.newPool(func(tr *http.Transport) { tr.ResponseHeaderTimeout = 50 * time.Millisecond })
	ctx, cancel := context.WithTimeout(t.Context(), h2Wait)
	defer cancel()
	_, err := s.do(ctx, t, p, nil)
	if !errors.Is(err, errHeaderTimeout) || NetFailureOf(err) != provider.NetTimeout {
		t.Fatalf("error %v, want the response header timeout", err)
	}
}

// TestH2LargeResponseHeader: a header block larger than a frame comes in
// HEADERS and CONTINUATION frames, decoded whole.
func TestH2LargeResponseHeader(t *testing.T) {
	big := strings.Repeat("x", 40<<10)
	s := newH2Server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Big", big)
		w.Header().Set("Content-Length", "2")
		_, _ = io.WriteString(w, "ok")
	}, nil)
	resp := s.mustDo(t, s.pool, nil)
	if resp.Header.Get("X-Big") != big || resp.ContentLength != 2 || resp.StatusCode != 200 {
		t.Fatalf("status %d, content length %d, X-Big of %d bytes", resp.StatusCode, resp.ContentLength, len(resp.Header.Get("X-Big")))
	}
}

// TestH2GoAway: after the server's GOAWAY, a stream it processed goes on
// to its end, and the connection takes no new stream: the pool drops it
// and the next request goes over a new connection.
func TestH2GoAway(t *testing.T) {
	more := make(chan struct{})
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Query().Get("y") != "" {
			<-more
			_, _ = io.WriteString(w, "data: two\n\n")
		}
	}, nil)
	resp := s.mustDo(t, s.pool, nil)
	readFirst(t, resp)
	conns := s.conns(s.pool)
	if len(conns) != 1 {
		t.Fatalf("%d connections", len(conns))
	}
	// The server's graceful shutdown sends GOAWAY and waits for the stream.
	shut := make(chan error, 1)
	go func() { shut <- s.srv.Config.Shutdown(context.Background()) }()
	deadline := time.Now().Add(h2Wait)
	for conns[0].Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no GOAWAY came")
		}
		time.Sleep(time.Millisecond)
	}
	if c := s.conns(s.pool); len(c) != 0 {
		t.Errorf("the pool kept the connection after its GOAWAY")
	}
	if err := conns[0].Reserve(); err == nil {
		t.Error("a stream slot was reserved after the GOAWAY")
	}
	close(more)
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "data: two\n\n" {
		t.Fatalf("the stream's rest: %q, %v", b, err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

// TestH2IdleGoAwayGoesToANewConnection: a connection the server closed
// with GOAWAY while idle is dropped, and the next request dials anew. (On
// a loaded machine the server's 20 ms idle timeout can also end a new
// connection before its first stream: that stream, unprocessed, goes
// again on another, so the requests succeed all the same.)
func TestH2IdleGoAwayGoesToANewConnection(t *testing.T) {
	s := newH2Server(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") },
		func(srv *http.Server) { srv.IdleTimeout = 20 * time.Millisecond })
	_, _ = io.ReadAll(s.mustDo(t, s.pool, nil).Body)
	deadline := time.Now().Add(h2Wait)
	for len(s.conns(s.pool)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection's GOAWAY did not drop it")
		}
		time.Sleep(time.Millisecond)
	}
	before := s.accepted()
	if b, err := io.ReadAll(s.mustDo(t, s.pool, nil).Body); err != nil || string(b) != "ok" {
		t.Fatalf("%q, %v", b, err)
	}
	if s.accepted() == before {
		t.Errorf("the request after the GOAWAY dialed no new connection")
	}
}

// TestH2UnprocessedStreamGoesAgain: a stream the server's GOAWAY says it
// did not process (its ID above the GOAWAY's last stream) is sent again
// on another connection, body and all, as net/http's client does: the
// server promised it did nothing with it.
func TestH2UnprocessedStreamGoesAgain(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	srv.EnableHTTP2 = true
	raw := &goAwayFirst{Listener: srv.Listener, srv: srv}
	srv.Listener = raw
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s := &h2Server{srv: srv}
	p := s.newPool(nil)
	ctx, cancel := context.WithTimeout(t.Context(), h2Wait)
	defer cancel()
	resp, err := s.do(ctx, t, p, []byte("the body"))
	if err != nil {
		t.Fatalf("the request failed on the GOAWAY: %v", err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
		t.Fatalf("%q, %v", b, err)
	}
	<-raw.done
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "the body" {
		t.Errorf("the server that answered read %q, want the body once", got)
	}
}

// goAwayFirst is a listener whose first connection, speaking HTTP/2 over
// TLS itself, answers the first stream's HEADERS with GOAWAY (last stream
// 0: nothing processed); the others go to the server.
type goAwayFirst struct {
	net.Listener
	srv  *httptest.Server
	once sync.Once
	done chan struct{}
}

func (l *goAwayFirst) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	first := false
	l.once.Do(func() { first, l.done = true, make(chan struct{}) })
	if !first {
		return c, nil
	}
	cfg := l.srv.TLS.Clone()
	cfg.NextProtos = []string{"h2"}
	go func() {
		defer close(l.done)
		defer c.Close()
		tc := tls.Server(c, cfg)
		if tc.Handshake() != nil {
			return
		}
		if _, err := io.ReadFull(tc, make([]byte, len(http2.ClientPreface))); err != nil {
			return
		}
		fr := http2.NewFramer(tc, tc)
		if fr.WriteSettings() != nil {
			return
		}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if _, ok := f.(*http2.HeadersFrame); ok {
				_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
				// Read on until the client leaves.
				for {
					if _, err := fr.ReadFrame(); err != nil {
						return
					}
				}
			}
		}
	}()
	return l.Accept()
}

// TestH2NotOfferedFallsBack: a server whose ALPN chooses http/1.1 gets no
// h2Conn: dialH2 returns none and no error.
func TestH2NotOfferedFallsBack(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	srv.TLS = &tls.Config{NextProtos: []string{"http/1.1"}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := &http.Transport{TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig}
	cc, err := dialH2(tr, srv.Listener.Addr().String())
	if cc != nil || err != nil {
		t.Fatalf("dialH2: %v, %v; want neither", cc, err)
	}
}

// TestH2IdleConnectionIsClosed: a connection without a stream for
// IdleConnTimeout is closed, and the pool forgets it.
func TestH2IdleConnectionIsClosed(t *testing.T) {
	s := newH2Server(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }, nil)
	p := s.newPool(func(tr *http.Transport) { tr.IdleConnTimeout = 20 * time.Millisecond })
	_, _ = io.ReadAll(s.mustDo(t, p, nil).Body)
	deadline := time.Now().Add(h2Wait)
	for len(s.conns(p)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection was kept")
		}
		time.Sleep(time.Millisecond)
	}
}
