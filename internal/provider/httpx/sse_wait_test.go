package httpx

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmrelay/llmrelay/internal/provider"
)

// heldReader is a stream's Reader in TestWaitingReadersHoldNoBuffer, and
// how many events it returned. Only the goroutine reading it, and the
// hooks that goroutine runs while it waits, touch either.
type heldReader struct {
	r      *Reader
	events int
}

// readerWait is what a Reader held when it began to wait for its body.
type readerWait struct {
	h      *heldReader
	events int
	read   bool // a read buffer (pooled or small)
	event  bool // an event buffer
}

// TestWaitingReadersHoldNoBuffer: streams over httpx's own connections,
// HTTP/2 over TLS and HTTP/1.1, wait for their next event holding no read
// buffer, and between events none of their last event's either; an event
// begun is kept while its reader waits for the rest. The events after the
// waits arrive whole: one split at a line end across a wait, one split
// inside a line, a line longer than the read buffer.
func TestWaitingReadersHoldNoBuffer(t *testing.T) {
	const n = 20
	long := strings.Repeat("x", 3*readerBufferSize/2)
	want := []string{"first:one", ":two\n2b", ":three", ":" + long, ":END"}
	for _, proto := range []string{"HTTP/2.0", "HTTP/1.1"} {
		t.Run(proto, func(t *testing.T) {
			// The upstream's streams go on one step at a time, each once
			// every reader waits as the step before left it.
			var steps [3]chan struct{}
			for i := range steps {
				steps[i] = make(chan struct{})
			}
			var once sync.Once
			release := func() {
				once.Do(func() {
					for _, s := range steps {
						select {
						case <-s:
						default:
							close(s)
						}
					}
				})
			}
			defer release()
			h := func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				send := func(s string) {
					_, _ = io.WriteString(w, s)
					w.(http.Flusher).Flush()
				}
				next := func(step chan struct{}) bool {
					select {
					case <-step:
						return true
					case <-r.Context().Done():
						return false
					}
				}
				send("event: first\ndata: one\n\n")
				if !next(steps[0]) {
					return
				}
				send("data: two\n")
				if !next(steps[1]) {
					return
				}
				send("data: 2b\n\ndata: thr")
				send("ee\n\n")
				if !next(steps[2]) {
					return
				}
				send("data: " + long + "\n\n")
				send("data: END\n\n")
			}

			var mu sync.Mutex
			held := map[any]*heldReader{} // by connection (HTTP/1.1) or stream
			waits := make(chan readerWait, 100*n)
			hook := func(key any) {
				mu.Lock()
				hr := held[key]
				mu.Unlock()
				if hr == nil {
					return // a request waiting for its response's head
				}
				waits <- readerWait{h: hr, events: hr.events, read: hr.r.buf != nil || hr.r.big != nil || hr.r.wait != nil, event: hr.r.ev != nil}
			}
			var get func() *http.Response
			if proto == "HTTP/2.0" {
				s := newH2Server(t, h, nil)
				testStreamAwaiting = func(cs *h2Stream) { hook(cs) }
				get = func() *http.Response { return s.mustDo(t, s.pool, []byte("{}")) }
			} else {
				srv := httptest.NewServer(http.HandlerFunc(h))
				t.Cleanup(srv.Close) // after release
				client, err := NewClient(provider.Transport{}, "")
				if err != nil {
					t.Fatal(err)
				}
				defer pool.remove(client.Transport.(idleCloser))
				testAwaiting = func(c *h1Conn) { hook(c) }
				get = func() *http.Response {
					req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("{}"))
					if err != nil {
						t.Fatal(err)
					}
					resp, err := send(client, req)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = resp.Body.Close() })
					return resp
				}
			}
			defer func() { testStreamAwaiting, testAwaiting = nil, nil }()

			type result struct {
				events []string
				err    error
			}
			results := make(chan result, n)
			for range n {
				resp := get()
				var key any
				switch b := resp.Body.(type) {
				case *h2Stream:
					key = b
				case *h1Body:
					key = b.c
				}
				if key == nil || resp.Proto != proto {
					t.Fatalf("a %s response with a %T body, want %s over httpx's own connection", resp.Proto, resp.Body, proto)
				}
				// As Endpoint reads it: through the attempt's activity.
				hr := &heldReader{r: GetReader(&activityReader{r: resp.Body, act: new(provider.Activity)}, "")}
				mu.Lock()
				held[key] = hr
				mu.Unlock()
				go func() {
					defer PutReader(hr.r)
					var got []string
					for {
						ev, err := hr.r.Next()
						if err != nil {
							results <- result{got, err}
							return
						}
						got = append(got, string(ev.Name)+":"+string(ev.Data))
						hr.events++
					}
				}()
			}

			// expect waits until every reader waited, after events events,
			// holding no read buffer and an event buffer only when begun.
			expect := func(step string, events int, begun bool) {
				t.Helper()
				seen := map[*heldReader]bool{}
				guard := time.After(h2Wait) // wide: only a reader that never waits so hits it
				for len(seen) < n {
					select {
					case w := <-waits:
						if w.read {
							t.Fatalf("%s: a reader waits for its body holding a read buffer", step)
						}
						if w.events != events {
							break // a wait of the step before, woken early
						}
						switch {
						case w.event == begun:
							seen[w.h] = true
						case w.event:
							t.Fatalf("%s: a reader waits between events holding its last event", step)
						}
					case res := <-results:
						t.Fatalf("%s: a stream ended early, after %d events: %v", step, len(res.events), res.err)
					case <-guard:
						t.Fatalf("%s: %d of %d readers waited for their body holding no buffer", step, len(seen), n)
					}
				}
			}
			expect("after the first event", 1, false)
			close(steps[0])
			expect("with an event begun", 1, true)
			close(steps[1])
			expect("after three events", 3, false)
			close(steps[2])
			for range n {
				res := <-results
				if !errors.Is(res.err, io.EOF) || !slices.Equal(res.events, want) {
					t.Errorf("a stream's events (%d, ending in %v) are not the %d sent", len(res.events), res.err, len(want))
					for i := range min(len(res.events), len(want)) {
						if res.events[i] != want[i] {
							t.Errorf("event %d: %.80q, want %.80q", i, res.events[i], want[i])
						}
					}
				}
			}
			close(waits) // the readers have ended
			for w := range waits {
				if w.read {
					t.Errorf("a reader waited for its body's end holding a read buffer")
				}
			}
		})
	}
}
