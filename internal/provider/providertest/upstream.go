package providertest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Fault says how a Reply's stream misbehaves after Reply.After chunks.
type Fault uint8

// Faults.
const (
	// FaultNone writes the whole body.
	FaultNone Fault = iota
	// FaultDrop closes the connection abruptly, mid-body.
	FaultDrop
	// FaultStall writes nothing more and holds the connection until the
	// client goes away.
	FaultStall
)

// Reply is how an Upstream answers one request.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header holds response headers. Content-Type defaults to
	// text/event-stream for a 2xx status and application/json otherwise.
	Header http.Header
	// Body is written in chunks: each server-sent event (up to and
	// including its blank line) is one chunk, flushed on its own.
	Body []byte
	// After is how many chunks are written before Fault strikes.
	After int
	// Fault is what happens after After chunks; FaultNone for nothing.
	Fault Fault
	// Write, when not nil, writes the body instead of Body, for a body too
	// large to hold (an embeddings reply of hundreds of MiB): After and
	// Fault do not apply. An error it returns (the client went away) ends
	// the reply.
	Write func(w io.Writer) error
}

// JSON is a 200 reply of body as application/json (a request that is
// not streamed: embeddings, token counts).
func JSON(body []byte) Reply {
	return Reply{Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
}

// Recorded is a request an Upstream received.
type Recorded struct {
	Method string
	// URI is the path and query.
	URI    string
	Header http.Header
	Body   []byte
}

// Upstream is a provider stand-in on 127.0.0.1 that answers each request
// with the Reply its function returns, writing the body chunk by chunk. It
// records requests and reports when a client went away.
type Upstream struct {
	// URL is the server's base URL.
	URL string

	srv   *httptest.Server
	reply func(n int, r *http.Request) Reply
	quit  chan struct{}
	gone  chan struct{}

	mu       sync.Mutex
	requests []Recorded
	goneOnce sync.Once
}

// NewUpstream starts an Upstream whose reply returns the Reply for the
// n-th request (from 0). The server is closed when the test ends.
func NewUpstream(t testing.TB, reply func(n int, r *http.Request) Reply) *Upstream {
	t.Helper()
	u := &Upstream{reply: reply, quit: make(chan struct{}), gone: make(chan struct{})}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	u.URL = u.srv.URL
	t.Cleanup(func() {
		close(u.quit)
		u.srv.Close()
	})
	return u
}

// Replay starts an Upstream that answers every request with r.
func Replay(t testing.TB, r Reply) *Upstream {
	return NewUpstream(t, func(int, *http.Request) Reply { return r })
}

// Requests returns the requests received so far.
func (u *Upstream) Requests() []Recorded {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Recorded(nil), u.requests...)
}

// Gone is closed once a client went away (closed its connection or
// cancelled its request) while its stream was stalled.
func (u *Upstream) Gone() <-chan struct{} { return u.gone }

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	n := len(u.requests)
	u.requests = append(u.requests, Recorded{Method: r.Method, URI: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
	u.mu.Unlock()

	rep := u.reply(n, r)
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		if status/100 == 2 {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	w.WriteHeader(status)
	if rep.Write != nil {
		_ = rep.Write(w)
		return
	}
	chunks := Chunks(rep.Body)
	if rep.Fault == FaultNone || rep.After > len(chunks) {
		rep.After = len(chunks)
	}
	f := w.(http.Flusher)
	for _, c := range chunks[:rep.After] {
		if _, err := w.Write(c); err != nil {
			return
		}
		f.Flush()
	}
	switch rep.Fault {
	case FaultDrop:
		panic(http.ErrAbortHandler) // closes the connection without ending the body
	case FaultStall:
		select {
		case <-r.Context().Done():
			u.goneOnce.Do(func() { close(u.gone) })
		case <-u.quit:
		}
	}
}

// Chunks splits a stream body into its events, each with the blank line
// that ends it ("\n" or "\r\n" line ends); a final piece without one is a
// chunk too.
func Chunks(body []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(body); {
		end := bytes.IndexByte(body[i:], '\n')
		if end < 0 {
			break
		}
		line := body[i : i+end]
		i += end + 1
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			out = append(out, body[start:i])
			start = i
		}
	}
	if start < len(body) {
		out = append(out, body[start:])
	}
	return out
}
