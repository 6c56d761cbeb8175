package httpx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrMalformed is wrapped by the errors for a stream that arrived intact
// but breaks its wire format: a complete line that is not a
// server-sent-events field, a complete event whose data does not decode, an
// over-long line. Such an error is a provider protocol error
// (provider.KindProtocol), not retried.
var ErrMalformed = errors.New("malformed provider stream")

// ErrCut is wrapped by the error for a body that ended in the middle of a
// line or of an event that does not decode: the stream was cut short, a
// transport failure (retried), not a protocol error.
var ErrCut = errors.New("provider stream cut in the middle of an event")

// MaxLineBytes bounds one line of a stream, and the data of one event,
// however many data lines it has. A longer line or event is ErrMalformed.
const MaxLineBytes = 16 << 20

// A Reader holds no buffer while it waits for the body with nothing left
// to read. A body of httpx's own connections (h2Stream, h1Body) is a
// dataAwaiter: the Reader waits for its data with no buffer at all, then
// reads what came into a pooled readerBufferSize buffer, which it gives
// back once it has read everything in it. Any other body is read, while it
// waits, into a pooled waitBufferSize buffer, enough for a whole event of
// the providers' streams (their lines are a few hundred bytes); once what
// arrived is more than that, or a line is only partly there, into a pooled
// readerBufferSize buffer. Longer lines are assembled in an eventBuffer,
// which holds the event's name and data too, taken from a pool while an
// event is read and given back while the Reader waits between events. (A
// Reader that kept a 2 KiB bufio buffer cost every open stream 2 KiB, one
// that kept 512 bytes and its last event's data about 1 KiB; see
// docs/performance.md.)
const (
	waitBufferSize   = 512
	readerBufferSize = 4 << 10
)

// readBuffers are the buffers Readers read into while data flows;
// waitBuffers those they wait in for a body that is not a dataAwaiter.
var (
	readBuffers = sync.Pool{New: func() any { return new([readerBufferSize]byte) }}
	waitBuffers = sync.Pool{New: func() any { return new([waitBufferSize]byte) }}
)

// A dataAwaiter is a response body that can wait for data without a buffer
// to read it into: awaitData returns once a Read would return without
// waiting (with bytes, the body's end or its error), or at once, false,
// when it cannot wait so (the caller then waits in a Read). It reads
// nothing; what the next Read returns is the same as without it. A read
// abort or a cancellation that ends a Read ends awaitData too.
type dataAwaiter interface{ awaitData() bool }

// eventBuffer is what a Reader assembles an event in: its name, its data,
// and a line longer than the read buffer. Taken from eventBuffers for an
// event, given back while the Reader waits with no event begun.
type eventBuffer struct{ name, data, long []byte }

var eventBuffers = sync.Pool{New: func() any { return new(eventBuffer) }}

// maxPooledEvent bounds the buffers an eventBuffer keeps in the pool.
const maxPooledEvent = 1 << 20

// Event is one server-sent event. Its slices are valid until the next call
// of Reader.Next.
type Event struct {
	// Name is the `event:` field; empty when the event has none.
	Name []byte
	// Data is the event's `data:` lines joined by "\n".
	Data []byte
	// Cut is set on an event that the end of the body dispatched, not a
	// blank line: it may be whole (some servers end their last event so)
	// or cut short. When its data does not decode, the stream was cut
	// (ErrCut), not malformed.
	Cut bool
}

// Reader reads server-sent events (the text/event-stream format) from a
// response body. It is lenient where providers differ harmlessly (a last
// event not followed by a blank line, "\r\n" line ends, comments) and
// strict where a broken stream would otherwise pass for a good one: any
// complete line that is not a comment or an event, data, id or retry field
// is ErrMalformed, and the same at the very end of the body, without its
// line end, is ErrCut.
//
// A Reader reuses its buffers across events and, through GetReader and
// PutReader, across streams. It is not safe for concurrent use.
type Reader struct {
	body io.Reader
	// buf[r:w] is what was read from body and not yet consumed. buf is
	// wait[:], big[:], or nil while the Reader holds neither.
	buf  []byte
	r, w int
	// err is body's error, returned once buf[r:w] is consumed.
	err  error
	big  *[readerBufferSize]byte
	wait *[waitBufferSize]byte
	// ev is the event being read or last returned; nil while the Reader
	// waits between events.
	ev *eventBuffer
	// extra is a non-standard field that is dispatched as an event of its
	// own, named after the field; empty for none.
	extra string
	// bad is the line of the last ErrMalformed, clipped, for the debug log.
	bad []byte
}

var readers = sync.Pool{New: func() any { return new(Reader) }}

// GetReader returns a pooled Reader reading from body. extra names a
// non-standard field to accept as an event of its own (for example
// "error", which some OpenAI-compatible servers send instead of a data
// line); pass "" for none. Return the Reader with PutReader.
func GetReader(body io.Reader, extra string) *Reader {
	r := readers.Get().(*Reader)
	r.body = body
	r.buf, r.r, r.w, r.err = nil, 0, 0, nil
	r.extra = extra
	return r
}

// PutReader returns r to the pool. r must not be used afterwards.
func PutReader(r *Reader) {
	r.release()
	r.releaseEvent()
	r.body, r.err = nil, nil
	r.bad = r.bad[:0]
	readers.Put(r)
}

// Next returns the next event. At the end of the body it returns io.EOF (an
// event still being assembled is dispatched first); a body that fails
// returns its error.
func (r *Reader) Next() (Event, error) {
	if r.ev != nil {
		r.ev.name, r.ev.data = r.ev.name[:0], r.ev.data[:0]
	}
	hasData := false
	for {
		// Before an event begins, nothing of the last one is kept while
		// the Reader waits.
		line, whole, err := r.readLine(!hasData && (r.ev == nil || len(r.ev.name) == 0))
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				return Event{Name: r.ev.name, Data: r.ev.data, Cut: true}, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return Event{Name: r.ev.name, Data: r.ev.data}, nil
			}
			if r.ev != nil {
				r.ev.name = r.ev.name[:0]
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, used as a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			ev := r.event()
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			if len(ev.data)+len(value) > MaxLineBytes {
				// Data lines that no blank line ends would otherwise
				// grow the event without bound, each a sign of life.
				return Event{}, fmt.Errorf("%w: an event's data longer than %d bytes", ErrMalformed, MaxLineBytes)
			}
			ev.data = append(ev.data, value...)
			hasData = true
		case "event":
			ev := r.event()
			ev.name = append(ev.name[:0], value...)
		case "id", "retry":
		default:
			if r.extra == "" || string(field) != r.extra || hasData {
				if !whole {
					return Event{}, fmt.Errorf("%w: the body ended in the line %q", ErrCut, clip(line))
				}
				r.bad = append(r.bad[:0], line[:min(len(line), MaxRaw)]...)
				return Event{}, fmt.Errorf("%w: unexpected line %q", ErrMalformed, clip(line))
			}
			ev := r.event()
			ev.name = append(ev.name[:0], field...)
			ev.data = append(ev.data[:0], value...)
			return Event{Name: ev.name, Data: ev.data, Cut: !whole}, nil
		}
	}
}

// event returns the buffer the Reader assembles its event in, taking one
// from the pool when it has none.
func (r *Reader) event() *eventBuffer {
	if r.ev == nil {
		r.ev = eventBuffers.Get().(*eventBuffer)
	}
	return r.ev
}

// Ready reports whether the next event, or the error Next would return
// for it, is already in the Reader's buffer: Next would return it without
// reading the body. It reads nothing and changes nothing.
func (r *Reader) Ready() bool {
	if r.err != nil {
		return true // Next returns what is left, then the body's error
	}
	buf := r.buf[r.r:r.w]
	hasData := false
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return false // the rest of the event is not read yet
		}
		line := bytes.TrimSuffix(buf[:i], []byte{'\r'})
		buf = buf[i+1:]
		switch {
		case len(line) == 0:
			if hasData {
				return true
			}
		case line[0] == ':':
		default:
			field, _, _ := bytes.Cut(line, []byte{':'})
			switch string(field) {
			case "data":
				hasData = true
			case "event", "id", "retry":
			default:
				return true // the extra field's event, or ErrMalformed
			}
		}
	}
}

// readLine returns the next line without its line end, and whether it had
// one. A last line without one is returned as it is; the call after it
// returns the body's error (io.EOF). The line is valid until the next
// call. Between events (between, when Next has no event begun), the
// Reader waits for the body with its event buffer given back.
func (r *Reader) readLine(between bool) ([]byte, bool, error) {
	long := false
	for empty := 0; ; {
		rest := r.buf[r.r:r.w]
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			r.r += i + 1
			return r.line(rest[:i], long), true, nil
		}
		if r.err != nil {
			r.r = r.w
			line := r.line(rest, long)
			if len(line) == 0 || !errors.Is(r.err, io.EOF) {
				return nil, false, r.err
			}
			return line, false, nil
		}
		switch {
		case len(rest) == 0:
			// Nothing is left to read: wait holding no buffer where the
			// body can, in a small one where it cannot.
			r.release()
			if between && !long {
				r.releaseEvent()
			}
			if a, ok := r.body.(dataAwaiter); ok && a.awaitData() {
				r.big = readBuffers.Get().(*[readerBufferSize]byte)
				r.buf = r.big[:]
			} else {
				r.wait = waitBuffers.Get().(*[waitBufferSize]byte)
				r.buf = r.wait[:]
			}
		case r.big == nil:
			// Part of a line is here: read the rest into a larger buffer.
			big := readBuffers.Get().(*[readerBufferSize]byte)
			n := copy(big[:], rest)
			r.release()
			r.big, r.buf, r.w = big, big[:], n
		case r.w == len(r.buf) && r.r > 0:
			r.r, r.w = 0, copy(r.buf, rest)
		case r.w == len(r.buf):
			// A line longer than the buffer.
			ev := r.event()
			if !long {
				ev.long, long = ev.long[:0], true
			}
			ev.long = append(ev.long, rest...)
			if len(ev.long) > MaxLineBytes {
				return nil, false, fmt.Errorf("%w: a line longer than %d bytes", ErrMalformed, MaxLineBytes)
			}
			r.r, r.w = 0, 0
		}
		n, err := r.body.Read(r.buf[r.w:])
		r.w += n
		if empty = empty + 1; n > 0 {
			empty = 0
		}
		switch {
		case err != nil:
			r.err = err
		case empty == 100:
			r.err = io.ErrNoProgress // as bufio does
		}
	}
}

// line is b without a trailing "\r", after what long assembled when long.
func (r *Reader) line(b []byte, long bool) []byte {
	if long {
		r.ev.long = append(r.ev.long, b...)
		b = r.ev.long
	}
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// release gives the pooled read buffers back; nothing is left to read in
// them.
func (r *Reader) release() {
	if r.big != nil {
		readBuffers.Put(r.big)
		r.big = nil
	}
	if r.wait != nil {
		waitBuffers.Put(r.wait)
		r.wait = nil
	}
	r.buf, r.r, r.w = nil, 0, 0
}

// releaseEvent gives the event buffer back: the event in it is no longer
// needed.
func (r *Reader) releaseEvent() {
	ev := r.ev
	if ev == nil {
		return
	}
	r.ev = nil
	if cap(ev.data) > maxPooledEvent {
		ev.data = nil
	}
	if cap(ev.long) > maxPooledEvent {
		ev.long = nil
	}
	ev.name, ev.data, ev.long = ev.name[:0], ev.data[:0], ev.long[:0]
	eventBuffers.Put(ev)
}

// Drain reads and discards what is left of the body, up to limit bytes, so
// that an HTTP/1.1 connection can go back to the idle pool. It reports
// whether the body ended.
func (r *Reader) Drain(limit int64) bool {
	buffered := int64(r.w - r.r)
	if buffered > limit {
		return false
	}
	r.release()
	if r.err != nil {
		return errors.Is(r.err, io.EOF)
	}
	_, err := io.CopyN(io.Discard, r.body, limit-buffered+1)
	return errors.Is(err, io.EOF)
}

// clip shortens a line for an error message.
func clip(b []byte) []byte {
	const max = 120
	if len(b) > max {
		return b[:max]
	}
	return b
}
