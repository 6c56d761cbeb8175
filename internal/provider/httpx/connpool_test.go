package httpx_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
)

// h2Upstream is an HTTPS upstream speaking HTTP/2 with a low stream limit,
// whose streams send one event and stay open until the client ends them.
type h2Upstream struct {
	srv       *httptest.Server
	transport provider.Transport // trusts the upstream's certificate
	mu        sync.Mutex
	conns     []net.Conn // accepted, in order
}

func newH2Upstream(t *testing.T, limit uint32) *h2Upstream {
	t.Helper()
	ca := newPKI(t)
	cert, _, _ := ca.issue("upstream", "127.0.0.1")
	u := &h2Upstream{transport: provider.Transport{CAFile: ca.CAFile}}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	u.srv.EnableHTTP2 = true
	u.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	u.srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: int(limit)}
	u.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.mu.Lock()
			u.conns = append(u.conns, c)
			u.mu.Unlock()
		}
	}
	u.srv.StartTLS()
	t.Cleanup(u.srv.Close)
	return u
}

// accepted is the number of connections the upstream accepted.
func (u *h2Upstream) accepted() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.conns)
}

// open starts a stream and reads its first event: the stream holds a slot
// on one of the client's connections until it is closed.
func (u *h2Upstream) open(ctx context.Context, t *testing.T, ep *httpx.Endpoint) (provider.Stream, error) {
	s, err := ep.Stream(ctx, call(t, u.srv.URL))
	if err != nil {
		return nil, err
	}
	if ev, err := s.Recv(); err != nil || ev.Text != "one" {
		_ = s.Close()
		return nil, fmt.Errorf("first event: %v, %v", ev, err)
	}
	return s, nil
}

// mustOpen is open for a stream that must succeed.
func (u *h2Upstream) mustOpen(t *testing.T, ep *httpx.Endpoint) provider.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	t.Cleanup(cancel)
	s, err := u.open(ctx, t, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waits returns a function that returns once a request has started
// waiting for a stream slot (failing the test when none does).
func waits(t *testing.T) func() {
	t.Helper()
	ch := make(chan struct{}, 100)
	t.Cleanup(httpx.SetTestWaiting(func() { ch <- struct{}{} }))
	return func() {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(guard):
			t.Fatal("no request waited for a stream slot")
		}
	}
}

// TestHTTP2OneDialAtATime: requests that find no connection to an HTTP/2
// upstream wait for the one being dialed instead of each dialing their own,
// and a ramp of streams fills each connection to the server's limit before
// the next is opened: ceil(streams / limit) connections.
func TestHTTP2OneDialAtATime(t *testing.T) {
	const limit, streams = 3, 7
	u := newH2Upstream(t, limit)
	var dials atomic.Int32
	gate := make(chan struct{})
	t.Cleanup(httpx.SetTestDial(func(d httpx.DialFunc) httpx.DialFunc {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				<-gate
			}
			return d(ctx, network, addr)
		}
	}))
	waiting := waits(t)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.srv.URL, Transport: u.transport})

	// limit requests at once while the first dial is held: all wait for it.
	opened := make(chan provider.Stream, limit)
	for range limit {
		go func() { opened <- u.mustOpenAsync(t, ep) }()
	}
	for range limit {
		waiting()
	}
	close(gate)
	for range limit {
		if s := <-opened; s != nil {
			t.Cleanup(func() { _ = s.Close() })
		}
	}
	if d, a := dials.Load(), u.accepted(); d != 1 || a != 1 {
		t.Fatalf("%d requests at once: %d dials, %d connections accepted; want 1 and 1", limit, d, a)
	}
	// The rest one after another (each after the one before has its
	// headers, so the client knows the server's limit).
	for range streams - limit {
		u.mustOpen(t, ep)
	}
	if a, want := u.accepted(), (streams+limit-1)/limit; a != want {
		t.Errorf("%d streams with a limit of %d per connection opened %d connections, want %d", streams, limit, a, want)
	}
}

// mustOpenAsync is mustOpen for a goroutine: it reports a failure with
// t.Error and returns nil. The stream's context ends with the test.
func (u *h2Upstream) mustOpenAsync(t *testing.T, ep *httpx.Endpoint) provider.Stream {
	s, err := u.open(t.Context(), t, ep)
	if err != nil {
		t.Error(err)
	}
	return s
}

// TestHTTP2RequestsWaitForAFreeStream: with max_conns 1 and the
// connection's streams all in use, a request waits for a stream to end and
// then proceeds on the same connection; a waiting request whose context
// ends gives up with its context's error and leaves the queue working.
func TestHTTP2RequestsWaitForAFreeStream(t *testing.T) {
	const limit = 2
	u := newH2Upstream(t, limit)
	waiting := waits(t)
	tr := u.transport
	tr.MaxConns = 1
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.srv.URL, Transport: tr})
	first := u.mustOpen(t, ep)
	u.mustOpen(t, ep)

	// A request whose caller gives up while it waits.
	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := u.open(ctx, t, ep)
		gaveUp <- err
	}()
	waiting()
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a waiting request whose context was canceled: %v, want context.Canceled", err)
	}

	third := make(chan provider.Stream, 1)
	go func() { third <- u.mustOpenAsync(t, ep) }()
	waiting()
	_ = first.Close()
	if s := <-third; s != nil {
		_ = s.Close()
	}
	if a := u.accepted(); a != 1 {
		t.Errorf("%d connections accepted, want 1", a)
	}
}

// TestHTTP2DeadConnectionIsReplaced: when the upstream drops a connection,
// its streams fail and the next request dials a new one.
func TestHTTP2DeadConnectionIsReplaced(t *testing.T) {
	u := newH2Upstream(t, 2)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: u.srv.URL, Transport: u.transport})
	s := u.mustOpen(t, ep)
	u.mu.Lock()
	_ = u.conns[0].Close()
	u.mu.Unlock()
	if _, err := s.Recv(); err == nil {
		t.Fatal("a stream on a dropped connection went on")
	}
	u.mustOpen(t, ep)
	if a := u.accepted(); a != 2 {
		t.Errorf("%d connections accepted, want 2", a)
	}
}

// TestHTTPSWithoutHTTP2: an HTTPS upstream that speaks only HTTP/1.1 is
// reached over HTTP/1.1, and its connections are reused.
func TestHTTPSWithoutHTTP2(t *testing.T) {
	ca := newPKI(t)
	cert, _, _ := ca.issue("upstream", "127.0.0.1")
	var protos []int
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.ProtoMajor)
		mu.Unlock()
		sse(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: srv.URL, Transport: provider.Transport{CAFile: ca.CAFile}})
	for range 3 {
		if r := streamWithin(t, ep, srv.URL, patience); r.Err != nil || r.Text != "ok" {
			t.Fatalf("stream: %q, %v", r.Text, r.Err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range protos {
		if p != 1 {
			t.Errorf("request over HTTP/%d, want HTTP/1.1", p)
		}
	}
	// One connection learned that the server has no HTTP/2; one carried
	// the three streams.
	if c := conns.Load(); c > 2 {
		t.Errorf("%d connections for 3 streams one after another, want at most 2", c)
	}
}
