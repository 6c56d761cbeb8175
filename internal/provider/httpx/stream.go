package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmrelay/llmrelay/internal/provider"
	"github.com/llmrelay/llmrelay/internal/telemetry"
)

// Decoder turns one provider's server-sent events into provider events. A
// Decoder holds one stream's state (open tool calls, counters) and is used
// by one goroutine.
type Decoder interface {
	// Decode handles one event, appending what it produced to out. It
	// returns done when the event is the provider's terminator, and a
	// *provider.Error for an in-stream error or an event it cannot decode
	// or that does not fit the provider's schema (ProtocolError).
	Decode(ev Event, out *[]provider.Event) (done bool, err error)
	// EndsAtEOF reports whether the end of the body is itself the
	// terminator at this point of the stream (Gemini's streams end so once a
	// finish reason arrived). When it returns false, a clean end of the body
	// is a truncated stream.
	EndsAtEOF() bool
}

// request is one attempt's HTTP request.
type request struct {
	url      string
	header   http.Header
	body     []byte
	timeout  time.Duration
	extra    string
	activity *provider.Activity
	// redact, when not nil, takes the credentials the request carries out
	// of what the provider's errors quote (see redactError).
	redact func(string) string
}

// open sends req with client and, once a 2xx response's headers arrive,
// returns the Stream that decodes its body with dec. A non-2xx status is a
// KindHTTP *provider.Error built by ResponseError with parse; a failure to
// connect or send is KindTransport; a cancelled ctx returns ctx's error.
func open(ctx context.Context, client *http.Client, req request, dec Decoder, parse ErrorBodyParser) (*Stream, error) {
	// The request's context is the attempt's own only where something
	// needs to end the request apart from the caller's ctx: the
	// provider's timeout, or the drain's time limit (see Stream.drain) on
	// a body that cannot cut its own reads short (net/http's). A held
	// stream over httpx's own connections so keeps no context of its own
	// (a cancel context and the children map it adds to ctx, about half a
	// KiB).
	attempt, release := ctx, context.CancelFunc(noRelease)
	if req.timeout > 0 {
		attempt, release = context.WithTimeoutCause(ctx, req.timeout, ErrAttemptTimeout)
	}
	hr, err := http.NewRequestWithContext(attempt, http.MethodPost, req.url, bytes.NewReader(req.body))
	if err != nil {
		release()
		return nil, fmt.Errorf("httpx: building the request: %w", err)
	}
	if req.timeout <= 0 && !ownConnections(client, hr) {
		attempt, release = context.WithCancel(ctx)
		hr = hr.WithContext(attempt)
	}
	hr.Header = req.header
	// The attempt's span (when the call is traced) goes upstream as W3C
	// trace context, so the provider's side of the trace joins it.
	if trace.SpanContextFromContext(ctx).IsValid() {
		telemetry.UpstreamPropagator.Inject(ctx, propagation.HeaderCarrier(hr.Header))
	}
	if hr.Header.Get("Content-Type") == "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if hr.Header.Get("Accept") == "" {
		hr.Header.Set("Accept", "text/event-stream")
	}
	resp, err := send(client, hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = loggableURL(ue.URL)
		}
		err = failure(ctx, attempt, "sending the request failed", err)
		release()
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := ResponseError(resp, time.Now(), redacting(parse, req.redact))
		redactError(e, req.redact)
		release()
		return nil, e
	}
	if e := notAStream(resp, parse); e != nil {
		redactError(e, req.redact)
		release()
		return nil, e
	}
	// The stream keeps the body only. A chunked body keeps its response
	// (for the trailers), and so the response's headers and the request
	// with its encoded body, for as long as the reply streams; none of
	// them is read again.
	resp.Header, resp.Request = nil, nil
	var body io.Reader = resp.Body
	if req.activity != nil {
		body = &activityReader{r: resp.Body, act: req.activity}
	}
	s := newStream(ctx, resp.Body, body, req.extra, dec)
	s.attempt, s.release, s.redact = attempt, release, req.redact
	return s, nil
}

// notAStream returns the error for a 2xx response that is a document,
// not an event stream: a JSON body of a known length (some
// OpenAI-compatible servers answer an error so, with status 200) or an
// HTML page (a proxy's). Read as events, either was a stream cut short,
// its content unsaid. It is a protocol error (not retried) that says so;
// nil for anything else, which the stream reads (a JSON-labelled body of
// unknown length may be a mislabelled stream).
func notAStream(resp *http.Response, parse ErrorBodyParser) *provider.Error {
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !(media == "application/json" && resp.ContentLength >= 0 || media == "text/html") {
		return nil
	}
	e := ResponseError(resp, time.Now(), parse)
	// The document's own words stay in Raw, for the debug log: as for any
	// failure but a rejected request, clients are not shown the provider's
	// text (it may hold account details).
	e.Kind, e.Class, e.Type, e.Code = provider.KindProtocol, provider.ClassProtocol, "", ""
	e.Message = "answered with " + media + " instead of an event stream"
	return e
}

// noRelease is the release of a stream whose request has no context of
// its own.
func noRelease() {}

// readAborter is a response body of httpx's own connections (h1Body,
// h2Stream): abortRead ends a read waiting on it, and the request with it.
type readAborter interface{ abortRead() }

// testDrainTimed, set by tests, is called when a drain waits with its
// time limit.
var testDrainTimed func()

// endArriver is a response body of httpx's own connections that can tell
// whether its end has arrived (reading it to its end would not wait), and
// then drain the stream's reader of it without a wait.
type endArriver interface {
	endArrived() bool
	drainArrived(r *Reader) bool
}

// activityReader touches an attempt's Activity for every read of the
// response body that returned bytes: every byte from the provider is a
// sign of life, whatever it turns out to be (a comment, a ping, an event
// the adapter does not relay).
type activityReader struct {
	r   io.Reader
	act *provider.Activity
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.act.Touch()
	}
	return n, err
}

// awaitData waits for the body's data when it can (see dataAwaiter).
func (a *activityReader) awaitData() bool {
	w, ok := a.r.(dataAwaiter)
	return ok && w.awaitData()
}

// NewStream returns the Stream that decodes body with dec: the events of
// the body's server-sent events, then io.EOF after the terminator. ctx is
// the attempt's context, whose end ends the stream with ctx's error. extra
// names a non-standard line field to accept as an event (see GetReader).
// Adapters get their streams from Endpoint.Stream; NewStream serves tests
// and benchmarks of a decoder.
func NewStream(ctx context.Context, body io.ReadCloser, extra string, dec Decoder) *Stream {
	return newStream(ctx, body, body, extra, dec)
}

// newStream returns the Stream that reads events from r and closes body.
func newStream(ctx context.Context, body io.ReadCloser, r io.Reader, extra string, dec Decoder) *Stream {
	return &Stream{
		ctx:     ctx,
		attempt: ctx,
		release: func() {},
		body:    body,
		r:       GetReader(r, extra),
		dec:     dec,
	}
}

// failure maps an error from sending a request or reading a body: ctx's
// error when the caller gave up, KindTransport wrapping ErrAttemptTimeout
// when the attempt outlived its timeout, else KindTransport wrapping err.
func failure(ctx, attempt context.Context, msg string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(attempt), ErrAttemptTimeout) {
		return TransportError("the attempt outlived the provider's timeout", ErrAttemptTimeout)
	}
	return TransportError(msg, err)
}

// drainLimit bounds how much is read after a terminator so the connection
// can be reused; drainTimeout bounds how long.
const (
	drainLimit   = 64 << 10
	drainTimeout = 100 * time.Millisecond
)

// Stream is a provider.Stream over a streamed HTTP response. It is used by
// one goroutine; Close may be called any number of times.
type Stream struct {
	ctx     context.Context
	attempt context.Context
	release context.CancelFunc
	body    io.ReadCloser
	r       *Reader
	dec     Decoder
	redact  func(string) string
	events  []provider.Event
	next    int
	err     error
	// terminated says the provider's terminator arrived and what follows
	// it is not drained yet.
	terminated bool
}

// ErrClosed is returned by Recv after Close.
var ErrClosed = errors.New("httpx: stream closed")

// Recv implements provider.Stream: it returns the decoded events in order,
// then io.EOF after the provider's terminator, or the stream's error. The
// error is sticky.
//
// What arrived intact but does not decode (a complete line that is not
// server-sent events, a complete event the decoder refuses) is a protocol
// error (provider.KindProtocol, not retried); a body that ends in the middle
// of a line or of an event that does not decode was cut short, a transport
// error (retried), as is one that ends without the provider's terminator.
func (s *Stream) Recv() (provider.Event, error) {
	var ev provider.Event
	err := s.RecvInto(&ev)
	return ev, err
}

// RecvInto implements provider.IntoStream: Recv into *ev.
func (s *Stream) RecvInto(ev *provider.Event) error {
	for {
		if s.next < len(s.events) {
			*ev = s.events[s.next]
			s.next++
			return nil
		}
		if s.err != nil {
			s.drain()
			return s.err
		}
		s.read()
	}
}

// RecvBuffered implements provider.BufferedStream: Recv, for as long as
// what it returns is already read from the body (decoded events not yet
// returned, server-sent events whole in the Reader's buffer, the stream's
// error); ok false, at once, when the next event would have to wait for
// the provider.
func (s *Stream) RecvBuffered() (ev provider.Event, ok bool, err error) {
	for {
		if s.next < len(s.events) || s.err != nil {
			// Whatever follows the terminator is drained by the next Recv
			// or by Close, not here: this must not wait.
			ev, err := s.recvReady()
			return ev, true, err
		}
		if s.r == nil || !s.r.Ready() {
			return provider.Event{}, false, nil
		}
		s.read()
	}
}

// Await implements provider.AwaitStream: it returns once RecvInto and
// RecvBuffered would not wait (an event decoded, or the stream's error).
// While it waits for the provider it holds no decoded events' buffer: a
// stream spends most of its life here, tens of thousands of them at once
// on a busy replica.
func (s *Stream) Await() {
	for s.next >= len(s.events) && s.err == nil {
		s.releaseEvents()
		s.read()
	}
}

// releaseEvents gives the decoded events' array back to decodedArrays
// (one an append outgrew is left to the collector); read takes one again.
func (s *Stream) releaseEvents() {
	if cap(s.events) == len(decodedArray{}) {
		a := (*decodedArray)(s.events[:cap(s.events)])
		clear(a[:])
		decodedArrays.Put(a)
	}
	s.events, s.next = nil, 0
}

// decodedArrays hold the events decoded from one server-sent event while
// they are returned; one server-sent event is one or two events, rarely
// more (an appended slice grows past the array, which then is not kept).
type decodedArray [4]provider.Event

var decodedArrays = sync.Pool{New: func() any { return new(decodedArray) }}

// recvReady returns the next decoded event, or the stream's error.
func (s *Stream) recvReady() (provider.Event, error) {
	if s.next < len(s.events) {
		ev := s.events[s.next]
		s.next++
		return ev, nil
	}
	return provider.Event{}, s.err
}

// read reads the next server-sent event and decodes it into s.events,
// or sets the stream's error.
func (s *Stream) read() {
	s.events, s.next = s.events[:0], 0
	ev, err := s.r.Next()
	switch {
	case errors.Is(err, io.EOF):
		if s.dec.EndsAtEOF() {
			s.err = io.EOF
		} else {
			s.err = TransportError("the stream ended early", ErrNoTerminator)
		}
	case errors.Is(err, ErrCut):
		s.err = TransportError("the stream was cut in the middle of a line", err)
	case errors.Is(err, ErrMalformed):
		s.err = &provider.Error{Kind: provider.KindProtocol, Class: provider.ClassProtocol, Message: "a line that is not server-sent events", Err: err, Raw: string(s.r.bad)}
	case err != nil:
		s.err = failure(s.ctx, s.attempt, "reading the stream failed", err)
	default:
		if s.events == nil {
			s.events = decodedArrays.Get().(*decodedArray)[:0]
		}
		done, derr := s.dec.Decode(ev, &s.events)
		switch {
		case derr != nil:
			s.err = decodeError(ev, derr)
			if pe := (*provider.Error)(nil); s.redact != nil && errors.As(s.err, &pe) {
				redactError(pe, s.redact)
			}
		case done:
			s.err = io.EOF
			s.terminated = true
		}
	}
}

// redacting returns parse, followed, when redact is not nil, by redact on
// what it found: before ResponseError cleans and cuts it, so that a
// credential cut in two is taken out whole.
func redacting(parse ErrorBodyParser, redact func(string) string) ErrorBodyParser {
	if parse == nil || redact == nil {
		return parse
	}
	return func(body []byte, e *provider.Error) {
		parse(body, e)
		e.Message, e.Type, e.Code = redact(e.Message), redact(e.Type), redact(e.Code)
	}
}

// redactError replaces in e, with redact (nil: nothing to do), the
// credentials its provider was sent that it quotes: an upstream may quote
// them ("Incorrect API key provided: sk-..."), and its message reaches
// clients (a rejected request's) and the log, its raw body the debug log.
// A field is written only when it changes.
func redactError(e *provider.Error, redact func(string) string) {
	if redact == nil {
		return
	}
	for _, f := range []*string{&e.Message, &e.Type, &e.Code, &e.Raw} {
		if r := redact(*f); r != *f {
			*f = r
		}
	}
}

// decodeError is the stream's error for an event the decoder refused: a
// protocol error becomes a transport error when the end of the body
// dispatched the event (it was cut short, not malformed).
func decodeError(ev Event, err error) error {
	var pe *provider.Error
	if ev.Cut && errors.As(err, &pe) && pe.Kind == provider.KindProtocol {
		return TransportError("the stream was cut in the middle of an event", fmt.Errorf("%w: %w", ErrCut, err))
	}
	return err
}

// drain reads what follows the terminator, once, briefly, so that an
// HTTP/1.1 connection goes back to the idle pool instead of being closed.
func (s *Stream) drain() {
	if !s.terminated || s.r == nil {
		return
	}
	s.terminated = false
	abort := s.release
	if a, ok := s.body.(readAborter); ok {
		abort = a.abortRead
	} else if s.attempt == s.ctx {
		// Nothing could cut a wait short (a response net/http served
		// where httpx's own connection was expected: an https host
		// without HTTP/2, on its first request): the connection is not
		// kept.
		return
	}
	// What follows the terminator has usually arrived with it: read
	// without a wait, it needs no timer (a timer set and stopped per
	// stream wakes the network poller's thread; docs/performance.md,
	// "Timers without wake-ups").
	if e, ok := s.body.(endArriver); ok && e.drainArrived(s.r) {
		return
	}
	if testDrainTimed != nil {
		testDrainTimed()
	}
	t := time.AfterFunc(drainTimeout, abort)
	s.r.Drain(drainLimit)
	t.Stop()
}

// Close implements provider.Stream: it closes the response body, which
// releases or closes the connection, and ends the attempt's context.
func (s *Stream) Close() error {
	if s.body == nil {
		return nil
	}
	s.drain()
	err := s.body.Close()
	s.release()
	PutReader(s.r)
	s.body, s.r = nil, nil
	if s.err == nil {
		s.err = ErrClosed
	}
	s.releaseEvents()
	return err
}

// loggableURL returns raw without its user info and query, which may hold
// credentials (a base_url with Azure's api-key): the errors of failed
// requests quote their URL, and they are logged.
func loggableURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User = nil
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}
