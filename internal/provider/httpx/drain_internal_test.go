package httpx

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// endDecoder relays each event's data as text and ends at "END".
type endDecoder struct{}

func (endDecoder) Decode(ev Event, out *[]provider.Event) (bool, error) {
	if string(ev.Data) == "END" {
		return true, nil
	}
	*out = append(*out, provider.Event{Kind: provider.EventText, Text: string(ev.Data)})
	return false, nil
}

func (endDecoder) EndsAtEOF() bool { return false }

// TestDrainAfterTheTerminatorIsCutShort: over httpx's own connections
// (HTTP/1.1 in the clear, HTTP/2 over TLS) a stream's request has no
// context of its own, and yet a reply that goes on after its terminator
// does not hold the stream's end: the drain's time limit ends the
// request (the connection closed, the stream reset), and the upstream
// sees its client go.
func TestDrainAfterTheTerminatorIsCutShort(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"HTTP/1.1", false}, {"HTTP/2", true}} {
		t.Run(tc.name, func(t *testing.T) {
			gone := make(chan struct{}, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: one\n\ndata: END\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				gone <- struct{}{}
			}))
			client := startDrainTest(t, srv, tc.tls)

			ctx := t.Context()
			s, err := open(ctx, client, request{url: srv.URL, header: http.Header{}, body: []byte("{}")}, endDecoder{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.attempt != ctx {
				t.Error("the stream's request has a context of its own")
			}
			if ev, err := s.Recv(); err != nil || ev.Text != "one" {
				t.Fatalf("first event: %+v, %v", ev, err)
			}
			// The terminator's io.EOF, then Close: the stream drains what
			// follows the terminator (in the first, or else in Close).
			ended := make(chan error, 1)
			go func() {
				_, err := s.Recv()
				_ = s.Close()
				ended <- err
			}()
			select {
			case err := <-ended:
				if err != io.EOF {
					t.Errorf("after the terminator: %v, want io.EOF", err)
				}
			case <-time.After(time.Minute): // wide: only a drain nothing cuts short waits this long
				srv.CloseClientConnections() // so that the test ends
				t.Fatal("the stream waits for a reply that goes on after its terminator")
			}
			select {
			case <-gone:
			case <-time.After(time.Minute):
				t.Fatal("the upstream's request did not end")
			}
		})
	}
}

func TestEndArrivedWhenTheChunkedEndIsBuffered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		buffered string
		chunked  bool
		want     bool
	}{
		{"the empty last chunk", "0\r\n\r\n", true, true},
		{"the last data chunk's line break and the empty last chunk", "\r\n0\r\n\r\n", true, true},
		{"the empty last chunk's line only", "0\r\n", true, false},
		{"nothing yet", "", true, false},
		{"another chunk", "\r\n5\r\nhello\r\n0\r\n\r\n", true, false},
		{"a trailer", "0\r\nX-Usage: 1\r\n\r\n", true, false},
		{"a body not in chunks", "0\r\n\r\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(strings.NewReader(tc.buffered))
			_, _ = br.Peek(len(tc.buffered)) // what has arrived, in the buffer
			b := &h1Body{c: &h1Conn{br: br}, chunked: tc.chunked}
			if got := b.endArrived(); got != tc.want {
				t.Errorf("endArrived with %q buffered: %v, want %v", tc.buffered, got, tc.want)
			}
		})
	}
	if !(&h1Body{done: true}).endArrived() {
		t.Error("a body that ended: its end has not arrived")
	}
}

// TestDrainOfAnEndThatArrivedWaitsWithoutATimer: when what follows the
// terminator has arrived with it (the usual case), the stream's end reads
// it without setting the drain's time limit, and an HTTP/1.1 connection
// still goes back to the pool.
func TestDrainOfAnEndThatArrivedWaitsWithoutATimer(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"HTTP/1.1", false}, {"HTTP/2", true}} {
		t.Run(tc.name, func(t *testing.T) {
			served := make(chan struct{}, 2)
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: one\n\ndata: END\n\n")
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				switch s {
				case http.StateNew:
					conns.Add(1)
				case http.StateIdle: // the whole response written, its end included
					select {
					case served <- struct{}{}:
					default: // HTTP/2's, which the test does not wait for
					}
				}
			}
			client := startDrainTest(t, srv, tc.tls)
			timed := make(chan struct{}, 2)
			testDrainTimed = func() { timed <- struct{}{} }
			defer func() { testDrainTimed = nil }()

			for i := range 2 {
				s, err := open(t.Context(), client, request{url: srv.URL, header: http.Header{}, body: []byte("{}")}, endDecoder{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.tls {
					<-served
				}
				for {
					if _, err := s.Recv(); err != nil {
						if err != io.EOF {
							t.Fatalf("stream %d: %v", i, err)
						}
						break
					}
				}
				if tc.tls {
					// The server's END_STREAM is read by the connection's
					// reader, after the terminator's DATA frame.
					deadline := time.Now().Add(time.Minute)
					for !s.body.(endArriver).endArrived() {
						if time.Now().After(deadline) {
							t.Fatal("the stream's END_STREAM did not come")
						}
						time.Sleep(time.Millisecond)
					}
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-timed:
				t.Error("a drain whose end had arrived set its time limit")
			default:
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections for two streams one after the other, want 1", n)
			}
		})
	}
}

// startDrainTest starts srv, in the clear or over TLS with HTTP/2, and
// returns httpx's client of it: its own HTTP/1.1 connections, or its
// HTTP/2 connections.
func startDrainTest(t *testing.T, srv *httptest.Server, tls bool) *http.Client {
	t.Helper()
	t.Cleanup(srv.Close)
	if tls {
		srv.EnableHTTP2 = true
		srv.StartTLS()
		tr := &http.Transport{
			TLSClientConfig:   srv.Client().Transport.(*http.Transport).TLSClientConfig,
			ForceAttemptHTTP2: true,
			HTTP2:             &http.HTTP2Config{},
		}
		cp := newConnPool(tr, &h1Transport{next: tr, hosts: map[string]*h1Host{}}, 0)
		t.Cleanup(cp.CloseIdleConnections)
		return &http.Client{Transport: cp}
	}
	srv.Start()
	c, err := NewClient(provider.Transport{}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.remove(c.Transport.(idleCloser)) })
	return c
}

// TestDrainOfBytesThatOnlyLookLikeTheEndDoesNotWait: chunk data that looks
// like a chunked body's end (a hostile or broken upstream) sends the drain
// without a time limit; the connection's reads are limited to what its
// buffer holds, so the drain fails at once instead of waiting for the rest
// of the chunk.
func TestDrainOfBytesThatOnlyLookLikeTheEndDoesNotWait(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	defer client.Close()
	// A chunk of 0x40 bytes of which 16 have come: an event, then five
	// bytes of data that read like the empty last chunk.
	go func() {
		_, _ = io.WriteString(server, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\ndata: END\n\n0\r\n\r\n")
	}()
	br := bufio.NewReader(client)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	event := make([]byte, len("data: END\n\n"))
	if _, err := io.ReadFull(resp.Body, event); err != nil {
		t.Fatal(err)
	}
	for br.Buffered() < len("0\r\n\r\n") { // the rest of the write, in the buffer
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			t.Fatal(err)
		}
	}
	b := &h1Body{body: resp.Body, ctx: t.Context(), c: &h1Conn{Conn: client, br: br}, chunked: true}
	if !b.endArrived() {
		t.Fatal("the bytes do not look like the end: the test tests nothing")
	}
	r := GetReader(b, "")
	defer PutReader(r)
	drained := make(chan bool, 1)
	go func() { drained <- b.drainArrived(r) }()
	select {
	case <-drained:
	case <-time.After(time.Minute): // wide: only a read with no limit waits this long
		_ = client.Close()
		t.Fatal("the drain waits for the rest of a chunk")
	}
	if !b.bounded {
		t.Error("the connection's reads were not limited to its buffer")
	}
}

// TestReadAbortAfterTheBodyEndedSparesTheConnection: the drain's time
// limit (abortRead) may fire as its read ends, under load after it. An
// abort that comes once the body has ended must leave the connection
// alone, back in the pool or carrying the next request; one that comes
// before the body's end is read (its bytes already buffered) must keep the
// connection it closed out of the pool. Either way the next request on the
// host succeeds, where it failed with "use of closed network connection"
// (the soak's calls that failed both attempts without reaching the
// upstream).
func TestReadAbortAfterTheBodyEndedSparesTheConnection(t *testing.T) {
	const reply = "data: one\n\ndata: END\n\n"
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		// Not flushed: one write of the head and a body of known length,
		// all in the connection's buffer with the head.
		_, _ = io.WriteString(w, reply)
	}))
	client := startDrainTest(t, srv, false)
	do := func() *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := send(client, req)
		if err != nil {
			t.Fatalf("a request after a late abort: %v", err)
		}
		return resp
	}
	abort := func(resp *http.Response) {
		a, ok := resp.Body.(readAborter)
		if !ok {
			t.Fatalf("body %T: not httpx's HTTP/1.1 body", resp.Body)
		}
		a.abortRead()
	}

	resp := do()
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != reply {
		t.Fatalf("body %q, %v", b, err)
	}
	abort(resp) // after its end: the connection is the pool's
	resp = do()
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != reply {
		t.Fatalf("the next request's body %q, %v", b, err)
	}

	resp = do()
	if _, err := io.ReadFull(resp.Body, make([]byte, len(reply)-1)); err != nil {
		t.Fatal(err)
	}
	abort(resp) // before the read that ends the body, from the buffer
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != reply[len(reply)-1:] {
		t.Fatalf("the body's last byte %q, %v", b, err)
	}
	_ = resp.Body.Close()
	resp = do()
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != reply {
		t.Fatalf("the next request's body %q, %v", b, err)
	}
	_ = resp.Body.Close()
}
