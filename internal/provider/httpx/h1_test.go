package httpx_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/provider/httpx"
	pt "github.com/llmrelay/llmrelay/internal/provider/providertest"
)

// countingUpstream is a plain-HTTP upstream that counts the connections
// it accepted and closed.
type countingUpstream struct {
	*httptest.Server
	opened, closed atomic.Int32
	closedCh       chan struct{} // a value per closed connection
}

func newCountingUpstream(t *testing.T, h http.HandlerFunc, onIdle func(net.Conn)) *countingUpstream {
	t.Helper()
	u := &countingUpstream{closedCh: make(chan struct{}, 64)}
	u.Server = httptest.NewUnstartedServer(h)
	u.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			u.opened.Add(1)
		case http.StateIdle:
			if onIdle != nil {
				onIdle(c)
			}
		case http.StateClosed:
			u.closed.Add(1)
			u.closedCh <- struct{}{}
		}
	}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

// held serves "data: one", then waits for release (or the client leaving)
// before the end.
func held(started chan<- struct{}, release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: END\n\n")
	}
}

// goroutinesIn counts the goroutines whose stack names fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			count++
		}
	}
	return count
}

// TestPlainHTTPStreamsHoldNoConnectionGoroutines: streams held open on a
// plain-HTTP upstream cost no goroutine of the client's beyond their
// readers (net/http would run a read and a write loop per connection), and
// the connections are kept and reused once the streams end.
func TestPlainHTTPStreamsHoldNoConnectionGoroutines(t *testing.T) {
	const n = 8
	started, release := make(chan struct{}, n), make(chan struct{})
	up := newCountingUpstream(t, held(started, release), nil)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL})
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	var streams []provider.Stream
	for range n {
		s, err := ep.Stream(ctx, call(t, up.URL))
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
		<-started
	}
	for _, fn := range []string{"net/http.(*persistConn).readLoop", "net/http.(*persistConn).writeLoop"} {
		if got := goroutinesIn(fn); got != 0 {
			t.Errorf("%d goroutines in %s with %d streams open, want 0", got, fn, n)
		}
	}
	close(release)
	for _, s := range streams {
		if r := pt.Drain(s, nil); r.Err != nil || r.Text != "one" {
			t.Fatalf("stream: %q, %v", r.Text, r.Err)
		}
		s.Close()
	}
	for range n {
		if r := streamWithin(t, ep, up.URL, patience); r.Err != nil {
			t.Fatalf("later stream: %v", r.Err)
		}
		<-started
	}
	if got := up.opened.Load(); got != n {
		t.Errorf("the upstream accepted %d connections, want %d (the later streams reuse them)", got, n)
	}
}

// TestIdleConnectionClosedByTheUpstreamIsReplaced: a kept connection that
// the upstream closed while it was idle costs the next stream nothing: it
// is sent again on a new connection.
func TestIdleConnectionClosedByTheUpstreamIsReplaced(t *testing.T) {
	up := newCountingUpstream(t, sse, func(c net.Conn) { _ = c.Close() })
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL})
	for i := range 3 {
		if r := streamWithin(t, ep, up.URL, patience); r.Err != nil || r.Text != "ok" {
			t.Fatalf("stream %d: %q, %v", i, r.Text, r.Err)
		}
		// The upstream has closed the connection before the next stream
		// goes out on it.
		<-up.closedCh
	}
	if got := up.opened.Load(); got != 3 {
		t.Errorf("the upstream accepted %d connections, want 3", got)
	}
}

// TestStreamClosedEarlyClosesItsConnection: a stream the caller closes
// before its end closes its connection (what is left of the reply is not
// read), and the next stream gets a new one.
func TestStreamClosedEarlyClosesItsConnection(t *testing.T) {
	started, release := make(chan struct{}, 2), make(chan struct{})
	defer close(release)
	up := newCountingUpstream(t, held(started, release), nil)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL})
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	s, err := ep.Stream(ctx, call(t, up.URL))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if ev, err := s.Recv(); err != nil || ev.Text != "one" {
		t.Fatalf("first event: %v, %v", ev, err)
	}
	s.Close()
	<-up.closedCh
	s2, err := ep.Stream(ctx, call(t, up.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	<-started
	if got := up.opened.Load(); got != 2 {
		t.Errorf("the upstream accepted %d connections, want 2", got)
	}
}

// TestCancelledStreamEndsItsRead: cancelling a stream's context ends a
// read waiting on the upstream at once, with the context's error, and
// closes the connection.
func TestCancelledStreamEndsItsRead(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	up := newCountingUpstream(t, held(started, release), nil)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: up.URL})
	ctx, cancel := context.WithCancel(t.Context())
	s, err := ep.Stream(ctx, call(t, up.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	<-started
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := s.Recv() // waits: the upstream sends nothing more
		got <- err
	}()
	cancel()
	select {
	case err := <-got:
		if err == nil || !errors.Is(err, context.Canceled) {
			t.Errorf("read after the cancel: %v, want the context's error", err)
		}
	case <-time.After(guard):
		t.Fatal("the read did not end")
	}
	<-up.closedCh
}

// TestHTTPProxyCarriesPlainHTTP: HTTP_PROXY carries calls to a plain-HTTP
// provider (the proxy gets the absolute URL), NO_PROXY exempts the host.
func TestHTTPProxyCarriesPlainHTTP(t *testing.T) {
	const host = "provider.test"
	up := httptest.NewServer(http.HandlerFunc(sse))
	t.Cleanup(up.Close)
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String())
		mu.Unlock()
		sse(w, r)
	}))
	t.Cleanup(proxy.Close)
	restore := httpx.SetTestDial(func(dial httpx.DialFunc) httpx.DialFunc {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == host+":80" {
				addr = up.Listener.Addr().String()
			}
			return dial(ctx, network, addr)
		}
	})
	t.Cleanup(restore)
	base := "http://" + host + "/v1"
	for _, tc := range []struct {
		name, noProxy string
		viaProxy      bool
	}{
		{"HTTP_PROXY", "", true},
		{"NO_PROXY exempts the host", host, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"} {
				t.Setenv(k, "")
			}
			t.Setenv("HTTP_PROXY", proxy.URL)
			t.Setenv("NO_PROXY", tc.noProxy)
			mu.Lock()
			before := len(seen)
			mu.Unlock()
			ep := endpoint(t, provider.Config{Kind: "test", BaseURL: base})
			if r := streamWithin(t, ep, base, patience); r.Err != nil || r.Text != "ok" {
				t.Fatalf("stream: %q, %v", r.Text, r.Err)
			}
			mu.Lock()
			got := seen[before:]
			mu.Unlock()
			switch {
			case tc.viaProxy && (len(got) != 1 || got[0] != base):
				t.Errorf("the proxy got %q, want %s", got, base)
			case !tc.viaProxy && len(got) != 0:
				t.Errorf("the proxy got %q, want nothing", got)
			}
		})
	}
}

// rawUpstream accepts connections on loopback and answers each request
// (read up to the end of its head and its Content-Length body) by writing
// the pieces of reply in turn, pausing between them so that the client
// reads them apart, then closing the connection. The request heads it
// read go to heads.
func rawUpstream(t *testing.T, reply ...string) (url string, heads <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 16)
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // after the listener's close (cleanups run last first)
	t.Cleanup(func() { _ = ln.Close() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				var head strings.Builder
				_ = req.Header.Write(&head)
				got <- head.String()
				for _, piece := range reply {
					if _, err := io.WriteString(c, piece); err != nil {
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
	})
	return "http://" + ln.Addr().String(), got
}

// TestResponseHeadInPiecesIsRead: a response head that arrives in pieces
// (the status line alone, then the headers a few at a time) is read whole
// before the body, and so is one larger than the connection's read
// buffer, and one that follows a 100 Continue.
func TestResponseHeadInPiecesIsRead(t *testing.T) {
	// "data: a\n\ndata: END\n\n", in two chunks.
	body := "9\r\ndata: a\n\n\r\nd\r\ndata: END\n\n\r\n0\r\n\r\n"
	big := strings.Repeat("X-Filler: "+strings.Repeat("f", 90)+"\r\n", 80) // 8 KiB
	for name, reply := range map[string][]string{
		"in pieces":              {"HTTP/1.1 200 OK\r\n", "Content-Type: text/event-stream\r\n", "Transfer-Encoding: chunked\r\n", "\r", "\n" + body},
		"larger than the buffer": {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + big[:4000], big[4000:] + "Transfer-Encoding: chunked\r\n\r\n" + body},
		"after 100 Continue":     {"HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body},
	} {
		t.Run(name, func(t *testing.T) {
			url, _ := rawUpstream(t, reply...)
			ep := endpoint(t, provider.Config{Kind: "test", BaseURL: url})
			if r := streamWithin(t, ep, url, patience); r.Err != nil || r.Text != "a" {
				t.Fatalf("got %q, %v; want the text a", r.Text, r.Err)
			}
		})
	}
}

// TestResponseHeadCutShortIsATransportFailure: a connection that ends in
// the middle of the response head fails the attempt as a transport
// failure (a fresh connection: it is not sent again), without waiting.
func TestResponseHeadCutShortIsATransportFailure(t *testing.T) {
	url, _ := rawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/")
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: url})
	r := streamWithin(t, ep, url, patience)
	wantTransportFailure(t, r.Err, "unexpected EOF")
}

// TestUserInfoInTheURLIsBasicAuthentication: user info in a plain-HTTP
// provider's URL is sent as basic authentication, as net/http's client
// sends it.
func TestUserInfoInTheURLIsBasicAuthentication(t *testing.T) {
	url, heads := rawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\ndata: END\n\n")
	withUser := strings.Replace(url, "http://", "http://ann:s3cret@", 1)
	ep := endpoint(t, provider.Config{Kind: "test", BaseURL: withUser})
	if r := streamWithin(t, ep, withUser, patience); r.Err != nil {
		t.Fatal(r.Err)
	}
	if head := <-heads; !strings.Contains(head, "Authorization: Basic YW5uOnMzY3JldA==\r\n") {
		t.Errorf("the upstream got\n%s\nwant basic authentication as ann:s3cret", head)
	}
}
