package httpx

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

func TestDialTimeout(t *testing.T) {
	if d := dialer(provider.Transport{}); d.Timeout != provider.DefaultTransport.DialTimeout {
		t.Errorf("default dial timeout %v, want %v", d.Timeout, provider.DefaultTransport.DialTimeout)
	}
	if d := dialer(provider.Transport{DialTimeout: 1500 * time.Millisecond}); d.Timeout != 1500*time.Millisecond {
		t.Errorf("dial timeout %v, want the configured 1.5s", d.Timeout)
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://api.test/v1/x", "https://api.test/v2/y?z", true},
		{"https://api.test/v1", "https://API.test:443/v1", true},
		{"http://api.test/v1", "http://api.test:80/v1", true},
		{"https://api.test/v1", "http://api.test/v1", false},
		{"https://api.test/v1", "https://api.test:8443/v1", false},
		{"https://api.test/v1", "https://evil.test/v1", false},
		{"https://api.test/v1", "https://api.test.evil.test/v1", false},
	}
	for _, tc := range tests {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestHeldStreamHoldsNoHeadBuffer: once the first bytes of a response's
// body are read, its connection reads with its own small buffer: the
// 4 KiB buffer its head was read into has gone back to the pool, and a
// stream held open waiting for more holds none. The connection reads the
// next response's head into a head buffer again.
func TestHeldStreamHoldsNoHeadBuffer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/held" {
			<-release
		}
		_, _ = io.WriteString(w, "data: END\n\n")
	}))
	defer srv.Close()
	defer close(release)
	client, err := NewClient(provider.Transport{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.remove(client.Transport.(idleCloser))
	get := func(path string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := send(client, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	whole := get("/whole")
	if b, err := io.ReadAll(whole.Body); err != nil || string(b) != "data: one\n\ndata: END\n\n" {
		t.Fatalf("first response: %q, %v", b, err)
	}
	held := get("/held") // on the same connection
	defer held.Body.Close()
	c := held.Body.(*h1Body).c
	if !c.reused {
		t.Fatal("the second request did not reuse the first one's connection")
	}
	buf := make([]byte, 64)
	n, err := held.Body.Read(buf)
	if err != nil || string(buf[:n]) != "data: one\n\n" {
		t.Fatalf("held stream's first read: %q, %v", buf[:n], err)
	}
	// The stream now waits for more; its connection has given its head
	// buffer back.
	if c.head != nil || c.br.Size() != smallBufferSize {
		t.Errorf("a held stream's connection reads with a %d-byte buffer (head buffer kept: %t), want its own %d bytes", c.br.Size(), c.head != nil, smallBufferSize)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		if n, err := held.Body.Read(buf); (err != nil && err != io.EOF) || string(buf[:n]) != "data: END\n\n" {
			t.Errorf("held stream's second read: %q, %v", buf[:n], err)
		}
	}()
	release <- struct{}{}
	<-read
}

// TestRequestWaitingForItsAnswerHoldsNoHeadBuffer: requests whose provider
// has not begun to answer (a model's time to first token) wait with no
// head buffer taken; each takes one once its answer's bytes are there, and
// the answers arrive whole.
func TestRequestWaitingForItsAnswerHoldsNoHeadBuffer(t *testing.T) {
	const n = 20
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+r.URL.Path+"\n\n")
	}))
	defer srv.Close()
	client, err := NewClient(provider.Transport{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.remove(client.Transport.(idleCloser))

	waiting := make(chan *h1Conn, n)
	testAwaiting = func(c *h1Conn) {
		if c.head != nil || c.br.Size() != smallBufferSize {
			t.Errorf("a request waits for its answer with a %d-byte buffer (head buffer taken: %t), want its own %d bytes", c.br.Size(), c.head != nil, smallBufferSize)
		}
		waiting <- c
	}
	defer func() { testAwaiting = nil }()

	bodies := make(chan string, n)
	for i := range n {
		go func() {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, fmt.Sprintf("%s/%d", srv.URL, i), strings.NewReader("{}"))
			if err != nil {
				bodies <- err.Error()
				return
			}
			resp, err := send(client, req)
			if err != nil {
				bodies <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				bodies <- err.Error()
				return
			}
			bodies <- string(b)
		}()
	}
	seen := map[*h1Conn]bool{}
	guard := time.After(time.Minute) // wide: only a request that never waits so hits it
	for len(seen) < n {
		select {
		case c := <-waiting:
			seen[c] = true
		case b := <-bodies:
			t.Fatalf("a request ended before the upstream answered: %q", b)
		case <-guard:
			close(release)
			t.Fatalf("%d of %d requests waited for their answer without a head buffer", len(seen), n)
		}
	}
	close(release)
	want := map[string]bool{}
	for i := range n {
		want[fmt.Sprintf("data: /%d\n\n", i)] = true
	}
	for range n {
		b := <-bodies
		if !want[b] {
			t.Errorf("unexpected answer %q", b)
		}
		delete(want, b)
	}
}
