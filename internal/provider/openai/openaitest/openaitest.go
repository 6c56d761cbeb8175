// Package openaitest is a fake OpenAI-compatible upstream for tests,
// benchmarks and soak runs: it serves streamed Chat Completions of a chosen
// number of chunks, fails chosen requests in chosen ways (an error status
// with headers, a dropped connection, an in-stream error, a stall), and
// counts the requests it received and the streams it has open.
//
// It listens on 127.0.0.1 only.
package openaitest

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FaultKind says how a request fails.
type FaultKind uint8

// Fault kinds.
const (
	// None serves the stream normally.
	None FaultKind = iota
	// Status answers with Fault.Status, Fault.Header and an OpenAI error
	// body before streaming anything.
	Status
	// Drop closes the connection abruptly after Fault.After content chunks.
	Drop
	// InStreamError sends `data: {"error": ...}` after Fault.After content
	// chunks and ends the response.
	InStreamError
	// Stall sends nothing more after Fault.After content chunks and holds
	// the connection until the client goes away.
	Stall
	// Malformed sends a line that is not server-sent events after
	// Fault.After content chunks and ends the response: a protocol error,
	// which llmrelay does not retry.
	Malformed
	// Cut ends the response in the middle of an event after Fault.After
	// content chunks: the body ends cleanly, the event is half there.
	Cut
)

// Busy is what a stream sends while it makes the client wait before its
// content chunks (Fault.Busy).
type Busy uint8

// Ways to be busy.
const (
	// KeepAlive sends `: keep-alive` comments, as DeepSeek does while a
	// request is queued.
	KeepAlive Busy = iota + 1
	// Thinking sends reasoning_content deltas, as a reasoning model does
	// while it thinks.
	Thinking
)

// Fault is how one request fails.
type Fault struct {
	Kind FaultKind
	// After is how many content chunks precede a Drop, InStreamError or Stall.
	After int
	// Status is the HTTP status for Status (default 500).
	Status int
	// Header holds response headers for Status, e.g. "retry-after-ms".
	Header map[string]string
	// ErrorType is the error object's type for Status and InStreamError
	// (default "server_error").
	ErrorType string
	// FirstByteDelay holds back the whole response, headers included, for
	// this long, whatever the kind (a slow first byte).
	FirstByteDelay time.Duration
	// Busy, BusyFor and BusyEvery make the stream busy after its first
	// content chunk: for BusyFor, it sends what Busy says every BusyEvery,
	// and nothing else. Text holds only the content chunks' words either
	// way.
	Busy      Busy
	BusyFor   time.Duration
	BusyEvery time.Duration
}

// Options configure a Server.
type Options struct {
	// Chunks is how many content chunks a stream carries (default 20). The
	// text of chunk i is Word(i).
	Chunks int
	// ChunkDelay paces the content chunks; zero sends them at once.
	ChunkDelay time.Duration
	// Faults says how request n (from 0) fails; requests past its end, and
	// zero Faults, are served normally.
	Faults []Fault
	// Gate, when set, holds every stream after its first content chunk
	// until Gate is closed (or the client goes away): tests start many
	// streams and know that none ends before they let it.
	Gate <-chan struct{}
	// FaultFor, when set, picks each request's fault instead of Faults. It
	// is called once per chat completion request, on the request's
	// goroutine, with the request's number (from 0) and its JSON body; it
	// must be safe for concurrent use.
	FaultFor func(n int, body []byte) Fault
	// ClientGone, when set, is told of every chat completion request whose
	// client went away (its request context ended) before the response
	// was complete, with the request's number and whether anything of the
	// response had been written. It is called on the request's goroutine
	// and must be safe for concurrent use.
	ClientGone func(n int, wrote bool)
	// Pause, when set, holds every stream after its first Pause.After
	// content chunks until Pause.Until is closed (or the client goes
	// away), as a model pausing mid-reply would: tests cut a connection at
	// a known point this way. (Gate is Pause with After 1.)
	Pause *Pause
	// TLS serves HTTPS with HTTP/2 (offered by ALPN, as the hosted APIs
	// do) on a self-signed certificate; CertificatePEM is what clients
	// trust. Without it the server speaks HTTP/1.1 in the clear.
	TLS bool
	// Format is the wire format of the streams: FormatOpenAI (the
	// default), FormatAnthropic (the Messages API's events, served at
	// /v1/messages) or FormatGemini (streamGenerateContent's server-sent
	// events, served at /v1/models/{model}:streamGenerateContent). The
	// text and the pacing are the same in all three, so a benchmark can
	// hold the same streams through each adapter. Faults other than
	// delays are OpenAI's in every format.
	Format string
}

// The formats a Server can stream in (Options.Format).
const (
	FormatOpenAI    = "openai"
	FormatAnthropic = "anthropic"
	FormatGemini    = "gemini"
)

// Pause holds streams at a point (see Options.Pause).
type Pause struct {
	After int
	Until <-chan struct{}
}

// Server is the fake upstream. Its methods are safe for concurrent use.
type Server struct {
	srv    *httptest.Server
	opts   Options
	path   func(string) bool // whether a request path is the format's
	head   []byte            // before the content chunks (OpenAI's role chunk)
	chunks [][]byte          // encoded content chunks
	tail   []byte            // finish, usage and terminator

	requests atomic.Int64
	open     atomic.Int64
	quit     chan struct{}
	once     sync.Once
}

// NewServer starts a Server. Close it when done; Start does that for a test.
func NewServer(opts Options) *Server {
	if opts.Chunks <= 0 {
		opts.Chunks = 20
	}
	s := &Server{opts: opts, quit: make(chan struct{})}
	switch opts.Format {
	case FormatAnthropic:
		s.anthropic()
	case FormatGemini:
		s.gemini()
	case "", FormatOpenAI:
		s.openAI()
	default:
		panic("openaitest: unknown format " + opts.Format)
	}
	if opts.TLS {
		s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
		s.srv.EnableHTTP2 = true
		s.srv.StartTLS()
		return s
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Start starts a Server that is closed when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	s := NewServer(opts)
	tb.Cleanup(s.Close)
	return s
}

// URL is the base URL to configure as the openai provider's base_url (it
// ends in /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// CertificatePEM is the server's certificate in PEM (with Options.TLS),
// to trust as a CA bundle; nil without TLS.
func (s *Server) CertificatePEM() []byte {
	c := s.srv.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// Requests returns how many chat completion requests arrived.
func (s *Server) Requests() int64 { return s.requests.Load() }

// OpenStreams returns how many responses are being served right now.
func (s *Server) OpenStreams() int64 { return s.open.Load() }

// Close releases stalled streams and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.quit) })
	s.srv.Close()
}

// Word is the text of content chunk i.
func Word(i int) string { return "w" + strconv.Itoa(i) + " " }

// Text is the text of a whole stream of n content chunks.
func Text(n int) string {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(Word(i))
	}
	return b.String()
}

// openAI encodes the streams as Chat Completions chunks.
func (s *Server) openAI() {
	s.path = func(p string) bool { return p == "/v1/chat/completions" }
	s.head = chunk(`{"role":"assistant","content":""}`, "null")
	for i := range s.opts.Chunks {
		s.chunks = append(s.chunks, chunk(fmt.Sprintf(`{"content":%q}`, Word(i)), "null"))
	}
	var tail bytes.Buffer
	tail.Write(chunk(`{}`, `"stop"`))
	fmt.Fprintf(&tail, "data: {\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"fake\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", 10, s.opts.Chunks, 10+s.opts.Chunks)
	tail.WriteString("data: [DONE]\n\n")
	s.tail = tail.Bytes()
}

// anthropic encodes the streams as the Messages API's events: the message
// and its text block start, one text_delta per chunk, then the block's
// stop, the stop reason with the usage, and message_stop.
func (s *Server) anthropic() {
	s.path = func(p string) bool { return p == "/v1/messages" }
	s.head = []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_fake\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"fake\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range s.opts.Chunks {
		s.chunks = append(s.chunks, fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", Word(i)))
	}
	s.tail = fmt.Appendf(nil, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":%d}}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", s.opts.Chunks)
}

// gemini encodes the streams as streamGenerateContent's chunks: one
// candidate part per chunk, the last chunk with the finish reason and the
// usage; the stream ends with the body.
func (s *Server) gemini() {
	s.path = func(p string) bool {
		return strings.HasPrefix(p, "/v1/models/") && strings.HasSuffix(p, ":streamGenerateContent")
	}
	part := func(text, finish, usage string) []byte {
		return fmt.Appendf(nil, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":%q}],\"role\":\"model\"}%s,\"index\":0}]%s,\"modelVersion\":\"fake\",\"responseId\":\"fake\"}\r\n\r\n", text, finish, usage)
	}
	for i := range s.opts.Chunks {
		s.chunks = append(s.chunks, part(Word(i), "", ""))
	}
	s.tail = part("", `,"finishReason":"STOP"`, fmt.Sprintf(`,"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":%d,"totalTokenCount":%d}`, s.opts.Chunks, 10+s.opts.Chunks))
}

func chunk(delta, finish string) []byte {
	return []byte(`data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1730000000,"model":"fake","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":null,"finish_reason":` + finish + `}]}` + "\n\n")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !s.path(r.URL.Path) {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	body, _ := io.ReadAll(r.Body)
	// Gemini's requests say nothing of streaming: the method does.
	if json.Unmarshal(body, &req) != nil || !req.Stream && s.opts.Format != FormatGemini {
		http.Error(w, `{"error":{"message":"want a JSON body with stream: true","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n := int(s.requests.Add(1) - 1)
	s.open.Add(1)
	defer s.open.Add(-1)
	// complete: the response was written whole; wrote: a byte of it was.
	var complete, wrote bool
	defer func() {
		if !complete && s.opts.ClientGone != nil && r.Context().Err() != nil {
			s.opts.ClientGone(n, wrote)
		}
	}()

	var f Fault
	switch {
	case s.opts.FaultFor != nil:
		f = s.opts.FaultFor(n, body)
	case n < len(s.opts.Faults):
		f = s.opts.Faults[n]
	}
	if f.FirstByteDelay > 0 && !s.wait(r, f.FirstByteDelay) {
		return
	}
	if f.Kind == Status {
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		for k, v := range f.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(errorObject(f.ErrorType, "injected HTTP "+strconv.Itoa(status)))
		complete = true
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher := w.(http.Flusher)
	wrote = true
	if len(s.head) > 0 {
		_, _ = w.Write(s.head)
		flusher.Flush()
	}
	for i, c := range s.chunks {
		if f.Kind != None && i == f.After {
			s.fail(w, r, f)
			return
		}
		if i == 1 && s.opts.Gate != nil && !s.await(r, s.opts.Gate) {
			return
		}
		if p := s.opts.Pause; p != nil && i == p.After && !s.await(r, p.Until) {
			return
		}
		if s.opts.ChunkDelay > 0 && !s.wait(r, s.opts.ChunkDelay) {
			return
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		flusher.Flush()
		if i == 0 && f.Busy != 0 && !s.busy(w, r, f) {
			return
		}
	}
	if f.Kind != None && f.After >= len(s.chunks) {
		s.fail(w, r, f)
		return
	}
	_, _ = w.Write(s.tail)
	complete = true
}

// busy sends f.Busy's keep-alives or reasoning every f.BusyEvery for
// f.BusyFor, and reports whether the client is still there.
func (s *Server) busy(w http.ResponseWriter, r *http.Request, f Fault) bool {
	flusher := w.(http.Flusher)
	for end := time.Now().Add(f.BusyFor); time.Now().Before(end); {
		if !s.wait(r, f.BusyEvery) {
			return false
		}
		msg := []byte(": keep-alive\n\n")
		if f.Busy == Thinking {
			msg = chunk(`{"content":null,"reasoning_content":"hmm "}`, "null")
		}
		if _, err := w.Write(msg); err != nil {
			return false
		}
		flusher.Flush()
	}
	return true
}

// wait pauses for d and reports whether the client is still there and the
// server still open.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.quit:
	}
	return false
}

// await waits until gate is closed and reports whether the client is still
// there and the server still open.
func (s *Server) await(r *http.Request, gate <-chan struct{}) bool {
	select {
	case <-gate:
		return true
	case <-r.Context().Done():
	case <-s.quit:
	}
	return false
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f.Kind {
	case Drop:
		panic(http.ErrAbortHandler) // closes the connection mid-body
	case InStreamError:
		_, _ = w.Write([]byte("data: "))
		_, _ = w.Write(bytes.TrimSpace(errorObject(f.ErrorType, "injected in-stream error")))
		_, _ = w.Write([]byte("\n\n"))
	case Malformed:
		_, _ = w.Write([]byte("this is not a server-sent event\n\n"))
	case Cut:
		c := chunk(`{"content":"cut"}`, "null")
		_, _ = w.Write(c[:len(c)/2])
	case Stall:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
	}
}

func errorObject(typ, msg string) []byte {
	if typ == "" {
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
	return append(b, '\n')
}
